package dev.ledger.app;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.Lease;
import dev.ledger.LoggedEvent;
import dev.ledger.Promotion;
import dev.ledger.Task;
import java.io.PrintWriter;
import java.util.List;

/**
 * Rendering of command results: JSON objects for {@code --json} (one document per command, for
 * pipelines) and text lines that fit an 80-column terminal.
 */
public final class Output {

  /** Terminal width the text output fits. */
  public static final int WIDTH = 80;

  private static final ObjectMapper JSON =
      new ObjectMapper().disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private Output() {}

  /**
   * A new JSON object.
   *
   * @return an empty object node
   */
  public static ObjectNode object() {
    return NODES.objectNode();
  }

  /**
   * A new JSON array.
   *
   * @return an empty array node
   */
  public static ArrayNode array() {
    return NODES.arrayNode();
  }

  /**
   * Prints a JSON document on one line.
   *
   * @param out where
   * @param node what
   */
  public static void json(PrintWriter out, Object node) {
    try {
      out.println(JSON.writeValueAsString(node));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a JSON tree always serialises", e);
    }
    out.flush();
  }

  /**
   * A task as JSON.
   *
   * @param t the task
   * @return {@code {"id", "domain", "title", "status", ...}}
   */
  public static ObjectNode task(Task t) {
    ObjectNode o = object();
    o.put("id", t.id());
    o.put("domain", t.spec().domain());
    o.put("title", t.spec().title());
    o.put("body", t.spec().body());
    o.put("status", t.status().wire());
    o.put("priority", t.spec().priority());
    o.put("label", t.spec().classification().wire());
    t.spec().requirements().forEach(o.putArray("requirements")::add);
    t.spec().dependsOn().forEach(o.putArray("depends_on")::add);
    o.put("origin", t.spec().origin());
    o.put("upstream_event", t.spec().upstreamEvent());
    o.put("created_by", t.spec().createdBy());
    o.put("created", time(t.created()));
    o.put("holder", t.holder());
    o.put("lease_until", time(t.leaseUntil()));
    o.put("attempts", t.attempts());
    o.put("not_before", time(t.spec().notBefore()));
    o.put("handoff", t.handoff());
    o.put("reason", t.reason());
    o.put("superseded_by", t.supersededBy());
    o.put("posted_to", t.postedTo());
    return o;
  }

  /**
   * A lease as JSON.
   *
   * @param l the lease
   * @return {@code {"id", "lease", "holder", "attempt", "until"}}
   */
  public static ObjectNode lease(Lease l) {
    ObjectNode o = object();
    o.put("id", l.taskId());
    o.put("lease", l.token());
    o.put("holder", l.holder());
    o.put("attempt", l.attempt());
    o.put("until", time(l.until()));
    return o;
  }

  /**
   * Events as JSON.
   *
   * @param events the events
   * @return an array of {@code {"seq", "kind", "at", "payload"}}
   */
  public static ArrayNode events(List<LoggedEvent> events) {
    ArrayNode a = array();
    for (LoggedEvent e : events) {
      ObjectNode o = a.addObject();
      o.put("seq", e.seq());
      o.put("kind", e.kind());
      o.put("at", time(e.at()));
      try {
        o.set("payload", JSON.readTree(e.payload()));
      } catch (JsonProcessingException ex) {
        o.put("payload", e.payload());
      }
    }
    return a;
  }

  /**
   * A promotion as JSON.
   *
   * @param p the promotion
   * @return {@code {"entry", "tier", "by", ...}}
   */
  public static ObjectNode promotion(Promotion p) {
    ObjectNode o = object();
    o.put("domain", p.spec().domain());
    o.put("entry", p.spec().entry());
    o.put("tier", p.spec().tier());
    o.put("by", p.spec().by());
    o.put("author", p.spec().author());
    o.put("why", p.spec().why());
    o.put("label", p.spec().classification().wire());
    o.put("digest", p.spec().digest());
    o.put("new_digest", p.spec().newDigest());
    o.put("at", time(p.at()));
    o.put("why_erased", p.whyErased());
    return o;
  }

  /**
   * A time in the ledger's one format (RFC 3339, UTC, six fraction digits).
   *
   * @param t the time, may be null
   * @return e.g. {@code 2026-11-29T23:35:59.123456Z}, or null
   */
  public static String time(java.time.Instant t) {
    return t == null ? null : dev.ledger.codegen.convert.Rfc3339.format(t);
  }

  /**
   * Cuts a text to fit a width in terminal columns, marking the cut with an ellipsis, flattens line
   * breaks and escapes control characters and terminal escapes ({@link #escape(String)}). Widths
   * are display widths ({@link #width(String)}): a CJK character or an emoji takes two columns.
   *
   * @param text the text, may be null (printed as {@code -})
   * @param width the most columns
   * @return the fitted text
   */
  public static String fit(String text, int width) {
    if (text == null) {
      return "-";
    }
    String flat =
        text.replace('\n', ' ')
            .replace('\t', ' ')
            .replace('\r', ' ')
            .replace('\u2028', ' ')
            .replace('\u2029', ' ');
    String escaped = escape(flat);
    if (width(escaped) <= width) {
      return escaped;
    }
    // cut by the original's code points, each escaped whole: a cut never splits an escape
    StringBuilder kept = new StringBuilder();
    int used = 0;
    for (int i = 0; i < flat.length(); ) {
      int cp = flat.codePointAt(i);
      String piece = escape(new String(Character.toChars(cp)));
      int w = width(piece);
      if (used + w > width - 1) {
        break;
      }
      kept.append(piece);
      used += w;
      i += Character.charCount(cp);
    }
    return kept.append('…').toString();
  }

  /**
   * Makes a stored text safe to print on a terminal: every control character (C0 but for line
   * breaks and tabs, DEL, C1, among them ESC and CSI, which start terminal escape sequences)
   * becomes a visible {@code \xHH}, and every bidirectional override, isolate or mark (U+202A to
   * U+202E, U+2066 to U+2069, U+200E, U+200F, U+061C, which reorder what follows) and the Unicode
   * line and paragraph separators (U+2028, U+2029) a visible {@code \}{@code uHHHH}; a backslash
   * stays as it is. JSON output needs none of this: Jackson escapes control characters itself.
   *
   * @param text the text, not null
   * @return the text with those characters escaped; the same string when it has none
   */
  public static String escape(String text) {
    StringBuilder out = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      String replacement = null;
      if (Character.getType(c) == Character.CONTROL && c != '\n' && c != '\t' && c != '\r') {
        replacement = String.format("\\x%02x", (int) c);
      } else if ((c >= 0x202A && c <= 0x202E)
          || (c >= 0x2066 && c <= 0x2069)
          || c == 0x200E
          || c == 0x200F
          || c == 0x061C
          || c == 0x2028
          || c == 0x2029) {
        replacement = String.format("\\u%04x", (int) c);
      }
      if (replacement != null && out == null) {
        out = new StringBuilder(text.length() + 8).append(text, 0, i);
      }
      if (out != null) {
        if (replacement != null) {
          out.append(replacement);
        } else {
          out.append(c);
        }
      }
    }
    return out == null ? text : out.toString();
  }

  /**
   * Pads a text with spaces on the right to a width in terminal columns ({@code %-Ns} pads by
   * characters, which misaligns a column holding CJK or emoji).
   *
   * @param text the text, not null
   * @param width the columns to fill
   * @return the text, padded; unchanged when already as wide or wider
   */
  public static String pad(String text, int width) {
    int w = width(text);
    return w >= width ? text : text + " ".repeat(width - w);
  }

  /**
   * How many terminal columns a text takes: East Asian wide and fullwidth characters and emoji 2,
   * combining marks, zero-width characters and variation selectors 0, every other character 1.
   *
   * @param text the text, not null
   * @return the display width
   */
  public static int width(String text) {
    int w = 0;
    for (int i = 0; i < text.length(); ) {
      int cp = text.codePointAt(i);
      w += width(cp);
      i += Character.charCount(cp);
    }
    return w;
  }

  /**
   * How many terminal columns one code point takes (after Markus Kuhn's {@code wcwidth}, with the
   * emoji blocks wide as terminals draw them).
   *
   * @param cp the code point
   * @return 0, 1 or 2
   */
  static int width(int cp) {
    int type = Character.getType(cp);
    if (type == Character.NON_SPACING_MARK
        || type == Character.ENCLOSING_MARK
        || type == Character.FORMAT
        || (cp >= 0xFE00 && cp <= 0xFE0F)
        || (cp >= 0xE0100 && cp <= 0xE01EF)
        || (cp >= 0x1160 && cp <= 0x11FF)) {
      return 0;
    }
    boolean wide =
        (cp >= 0x1100 && cp <= 0x115F)
            || (cp >= 0x231A && cp <= 0x231B)
            || (cp >= 0x2329 && cp <= 0x232A)
            || (cp >= 0x23E9 && cp <= 0x23EC)
            || (cp >= 0x25FD && cp <= 0x25FE)
            || (cp >= 0x2614 && cp <= 0x2615)
            || (cp >= 0x2648 && cp <= 0x2653)
            || (cp >= 0x26AA && cp <= 0x26AB)
            || (cp >= 0x26BD && cp <= 0x26BE)
            || (cp >= 0x26C4 && cp <= 0x26C5)
            || cp == 0x26A1
            || cp == 0x26CE
            || cp == 0x26D4
            || cp == 0x26EA
            || (cp >= 0x26F2 && cp <= 0x26F5)
            || cp == 0x26FA
            || cp == 0x26FD
            || cp == 0x2705
            || (cp >= 0x270A && cp <= 0x270B)
            || cp == 0x2728
            || cp == 0x274C
            || cp == 0x274E
            || (cp >= 0x2753 && cp <= 0x2755)
            || cp == 0x2757
            || (cp >= 0x2795 && cp <= 0x2797)
            || cp == 0x27B0
            || cp == 0x27BF
            || (cp >= 0x2B1B && cp <= 0x2B1C)
            || cp == 0x2B50
            || cp == 0x2B55
            || (cp >= 0x2E80 && cp <= 0x303E)
            || (cp >= 0x3041 && cp <= 0x33FF)
            || (cp >= 0x3400 && cp <= 0x4DBF)
            || (cp >= 0x4E00 && cp <= 0x9FFF)
            || (cp >= 0xA000 && cp <= 0xA4CF)
            || (cp >= 0xA960 && cp <= 0xA97F)
            || (cp >= 0xAC00 && cp <= 0xD7A3)
            || (cp >= 0xF900 && cp <= 0xFAFF)
            || (cp >= 0xFE10 && cp <= 0xFE19)
            || (cp >= 0xFE30 && cp <= 0xFE6F)
            || (cp >= 0xFF00 && cp <= 0xFF60)
            || (cp >= 0xFFE0 && cp <= 0xFFE6)
            || (cp >= 0x16FE0 && cp <= 0x18AFF)
            || (cp >= 0x1B000 && cp <= 0x1B2FF)
            || cp == 0x1F004
            || cp == 0x1F0CF
            || cp == 0x1F18E
            || (cp >= 0x1F191 && cp <= 0x1F19A)
            || (cp >= 0x1F200 && cp <= 0x1F2FF)
            || (cp >= 0x1F300 && cp <= 0x1F64F)
            || (cp >= 0x1F680 && cp <= 0x1F6FF)
            || (cp >= 0x1F7E0 && cp <= 0x1F7EB)
            || (cp >= 0x1F90C && cp <= 0x1F9FF)
            || (cp >= 0x1FA70 && cp <= 0x1FAFF)
            || (cp >= 0x20000 && cp <= 0x3FFFD);
    return wide ? 2 : 1;
  }
}

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
   * Cuts a text to fit a width, marking the cut with an ellipsis, and flattens line breaks.
   *
   * @param text the text, may be null (printed as {@code -})
   * @param width the most characters
   * @return the fitted text
   */
  public static String fit(String text, int width) {
    if (text == null) {
      return "-";
    }
    String flat = text.replace('\n', ' ').replace('\t', ' ').replace('\r', ' ');
    if (flat.codePointCount(0, flat.length()) <= width) {
      return flat;
    }
    int end = flat.offsetByCodePoints(0, Math.max(0, width - 1));
    return flat.substring(0, end) + "…";
  }
}

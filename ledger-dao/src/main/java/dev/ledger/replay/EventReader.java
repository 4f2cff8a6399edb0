package dev.ledger.replay;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.ledger.Label;
import dev.ledger.PromotionSpec;
import dev.ledger.TaskSpec;
import dev.ledger.codegen.convert.JsonConverter;
import dev.ledger.codegen.convert.Rfc3339;
import dev.ledger.event.Event;
import dev.ledger.event.EventKind;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a stored event ({@code events.kind} and the text of {@code events.payload}) into an {@link
 * Event} with Jackson's streaming parser: no {@code JsonNode} tree per event, which is what a
 * replay of millions of events spends its time on otherwise.
 *
 * <p>{@link Event#parse} over the tree stays the authority on format v1. This reader takes only the
 * plain shape the ledger writes: every field of the kind's JSON type (strings as strings, integers
 * that fit a {@code long}, booleans), no field twice, extra fields ignored. Anything else (a number
 * where a string belongs, a duplicate key, an unknown label, a time that is not RFC 3339, text that
 * is not JSON) is handed to {@link Event#parse} over the tree, which reads it the way it always has
 * or throws its error. So both paths give the same event for every payload.
 *
 * <pre>{@code
 * Event e = EventReader.read("t1", "claimed", "{\"holder\":\"w1\",\"until\":\"...\"}");
 * }</pre>
 */
final class EventReader {

  private static final JsonFactory JSON = new JsonFactory();
  private static final JsonConverter TREE = new JsonConverter();
  private static final Label[] LABELS = Label.values();

  /** A JSON {@code null}, as distinct from a field that is absent (a null slot). */
  private static final Object NULL = new Object();

  /** Thrown, without a stack, when a payload is not in the plain shape: read it as a tree. */
  private static final RuntimeException NOT_PLAIN =
      new RuntimeException("not the plain shape", null, false, false) {
        private static final long serialVersionUID = 1L;
      };

  private static final String[] CREATED_FIELDS = {"id", "spec"};
  private static final String[] TASK_SPEC = {
    "domain",
    "title",
    "body",
    "requirements",
    "depends_on",
    "origin",
    "upstream_event",
    "created_by",
    "classification",
    "priority",
    "not_before",
    "max_attempts"
  };
  private static final String[] CLAIMED_FIELDS = {"holder", "until"};
  private static final String[] UNTIL = {"until"};
  private static final String[] HANDOFF = {"handoff"};
  private static final String[] INVALIDATED_FIELDS = {"reason", "superseded_by"};
  private static final String[] POSTED_FIELDS = {"to"};
  private static final String[] RESCORED_FIELDS = {"priority", "why"};
  private static final String[] PROMOTED_FIELDS = {"spec", "why_erased"};
  private static final String[] PROMOTION_SPEC = {
    "domain", "entry", "tier", "by", "author", "why", "classification", "digest", "new_digest"
  };
  private static final String[] NONE = {};

  private EventReader() {}

  /**
   * Reads an event from its stored kind and payload text.
   *
   * @param taskId the event's {@code task_id}, for messages
   * @param kind the stored kind, e.g. {@code claimed}
   * @param payload the stored payload, JSON text
   * @return the event, equal to {@code Event.parse(taskId, kind, tree of payload)}
   * @throws dev.ledger.LedgerException naming the task and the kind when the payload does not fit
   *     format v1 (as {@link Event#parse})
   * @throws IllegalArgumentException when the payload is not JSON (as {@link JsonConverter#from})
   */
  static Event read(String taskId, String kind, String payload) {
    try {
      return plain(kind, payload);
    } catch (IOException | RuntimeException e) {
      // not the plain shape (or not JSON at all): the tree parse reads it or says what is wrong
      return Event.parse(taskId, kind, TREE.from(payload));
    }
  }

  private static Event plain(String kind, String payload) throws IOException {
    try (JsonParser p = JSON.createParser(payload)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw NOT_PLAIN;
      }
      EventKind k = EventKind.find(kind).orElseThrow(() -> NOT_PLAIN);
      return switch (k) {
        case CREATED -> {
          Object[] v = object(p, CREATED_FIELDS, TASK_SPEC);
          Object[] s = nested(v[1]);
          yield new Event.Created(
              text(v[0]),
              new TaskSpec(
                  text(s[0]),
                  text(s[1]),
                  text(s[2]),
                  strings(s[3]),
                  strings(s[4]),
                  nullable(s[5]),
                  nullable(s[6]),
                  text(s[7]),
                  label(s[8]),
                  integer(s[9]),
                  s[10] == null || s[10] == NULL ? null : Rfc3339.parse(text(s[10])),
                  s[11] == null || s[11] == NULL ? 0 : attempts(s[11])));
        }
        case ADMITTED -> {
          object(p, NONE, null);
          yield new Event.Admitted();
        }
        case RELEASED -> {
          object(p, NONE, null);
          yield new Event.Released();
        }
        case CLAIMED -> {
          Object[] v = object(p, CLAIMED_FIELDS, null);
          yield new Event.Claimed(text(v[0]), Rfc3339.parse(text(v[1])));
        }
        case HEARTBEAT -> {
          yield new Event.Heartbeat(Rfc3339.parse(text(object(p, UNTIL, null)[0])));
        }
        case HANDOFF_LEFT -> {
          yield new Event.HandoffLeft(text(object(p, HANDOFF, null)[0]));
        }
        case COMPLETED -> {
          yield new Event.Completed(nullable(object(p, HANDOFF, null)[0]));
        }
        case INVALIDATED -> {
          Object[] v = object(p, INVALIDATED_FIELDS, null);
          yield new Event.Invalidated(text(v[0]), nullable(v[1]));
        }
        case POSTED -> {
          yield new Event.Posted(text(object(p, POSTED_FIELDS, null)[0]));
        }
        case RESCORED -> {
          Object[] v = object(p, RESCORED_FIELDS, null);
          yield new Event.Rescored(integer(v[0]), text(v[1]));
        }
        case PROMOTED -> {
          Object[] v = object(p, PROMOTED_FIELDS, PROMOTION_SPEC);
          Object[] s = nested(v[0]);
          // the first promotions shape had no new_digest and no why_erased
          Object newDigest = s[8] == null || s[8] == NULL ? "" : s[8];
          Object erased = v[1] == null ? Boolean.FALSE : v[1];
          if (!(erased instanceof Boolean whyErased)) {
            throw NOT_PLAIN;
          }
          yield new Event.Promoted(
              new PromotionSpec(
                  text(s[0]),
                  text(s[1]),
                  text(s[2]),
                  text(s[3]),
                  text(s[4]),
                  text(s[5]),
                  label(s[6]),
                  text(s[7]),
                  text(newDigest)),
              whyErased);
        }
      };
    }
  }

  /**
   * Reads the members of the object whose {@code START_OBJECT} was just read into slots by name: a
   * string as {@link String}, {@code null} as {@link #NULL}, an integer as {@link Long}, a boolean
   * as {@link Boolean}, an array of strings as a {@code List<String>}, an object (only where {@code
   * nestedNames} is given) as its own slots. Members of other names are skipped.
   */
  private static Object[] object(JsonParser p, String[] names, String[] nestedNames)
      throws IOException {
    Object[] slots = new Object[names.length];
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      int i = indexOf(names, name);
      JsonToken t = p.nextToken();
      if (i < 0) {
        p.skipChildren();
        continue;
      }
      if (slots[i] != null) {
        throw NOT_PLAIN; // a duplicate key: the tree keeps the last, whole
      }
      slots[i] =
          switch (t) {
            case VALUE_STRING -> p.getText();
            case VALUE_NULL -> NULL;
            case VALUE_TRUE -> Boolean.TRUE;
            case VALUE_FALSE -> Boolean.FALSE;
            case VALUE_NUMBER_INT -> {
              JsonParser.NumberType type = p.getNumberType();
              if (type != JsonParser.NumberType.INT && type != JsonParser.NumberType.LONG) {
                throw NOT_PLAIN;
              }
              yield p.getLongValue();
            }
            case START_ARRAY -> array(p);
            case START_OBJECT -> {
              if (nestedNames == null) {
                throw NOT_PLAIN;
              }
              yield object(p, nestedNames, null);
            }
            default -> throw NOT_PLAIN;
          };
    }
    if (p.currentToken() != JsonToken.END_OBJECT) {
      throw NOT_PLAIN;
    }
    return slots;
  }

  private static List<String> array(JsonParser p) throws IOException {
    List<String> out = new ArrayList<>(4);
    JsonToken t;
    while ((t = p.nextToken()) == JsonToken.VALUE_STRING) {
      out.add(p.getText());
    }
    if (t != JsonToken.END_ARRAY) {
      throw NOT_PLAIN;
    }
    return out;
  }

  private static int indexOf(String[] names, String name) {
    for (int i = 0; i < names.length; i++) {
      if (names[i].equals(name)) {
        return i;
      }
    }
    return -1;
  }

  private static Object[] nested(Object v) {
    if (v instanceof Object[] slots) {
      return slots;
    }
    throw NOT_PLAIN;
  }

  private static String text(Object v) {
    if (v instanceof String s) {
      return s;
    }
    throw NOT_PLAIN;
  }

  private static String nullable(Object v) {
    return v == null || v == NULL ? null : text(v);
  }

  private static long integer(Object v) {
    if (v instanceof Long l) {
      return l;
    }
    throw NOT_PLAIN;
  }

  private static int attempts(Object v) {
    long n = integer(v);
    if (n < Integer.MIN_VALUE || n > Integer.MAX_VALUE) {
      throw NOT_PLAIN;
    }
    return (int) n;
  }

  @SuppressWarnings("unchecked")
  private static List<String> strings(Object v) {
    if (v instanceof List<?> l) {
      return (List<String>) l;
    }
    throw NOT_PLAIN;
  }

  private static Label label(Object v) {
    String wire = text(v);
    for (Label l : LABELS) {
      if (l.wire().equals(wire)) {
        return l;
      }
    }
    throw NOT_PLAIN; // Label.parse also reads other cases, or says what is wrong
  }
}

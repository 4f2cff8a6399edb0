package dev.ledger.event;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.Label;
import dev.ledger.LedgerException;
import dev.ledger.PromotionSpec;
import dev.ledger.TaskSpec;
import dev.ledger.codegen.convert.Rfc3339;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * One ledger event and its payload, format v1 (docs/storage-and-replay.md): one JSON object per
 * kind, field names as in the reference's {@code Event} enum, written in the reference's field
 * order so payloads are byte-identical to the reference stack's. Ports the reference's {@code
 * Event}, {@code Event::kind}, {@code Event::payload} and {@code Event::parse}.
 */
public sealed interface Event {

  /** The JSON node factory all payloads are built with. */
  JsonNodeFactory JSON = JsonNodeFactory.instance;

  /**
   * The kind; its wire name ({@link EventKind#wire()}) is what {@code events.kind} stores.
   *
   * @return e.g. {@link EventKind#HANDOFF_LEFT}
   */
  EventKind kind();

  /**
   * The payload, as stored in {@code events.payload}.
   *
   * @return a new JSON object
   */
  ObjectNode payload();

  /** {@code created}: {@code {"id", "spec": {...}}}. */
  record Created(String id, TaskSpec spec) implements Event {
    @Override
    public EventKind kind() {
      return EventKind.CREATED;
    }

    @Override
    public ObjectNode payload() {
      ObjectNode s = JSON.objectNode();
      s.put("domain", spec.domain());
      s.put("title", spec.title());
      s.put("body", spec.body());
      spec.requirements().forEach(s.putArray("requirements")::add);
      spec.dependsOn().forEach(s.putArray("depends_on")::add);
      s.put("origin", spec.origin());
      s.put("upstream_event", spec.upstreamEvent());
      s.put("created_by", spec.createdBy());
      s.put("classification", spec.classification().wire());
      s.put("priority", spec.priority());
      // extensions for worker pools, only when set: otherwise the payload is the reference's
      if (spec.notBefore() != null) {
        s.put("not_before", Rfc3339.format(spec.notBefore()));
      }
      if (spec.maxAttempts() != 0) {
        s.put("max_attempts", spec.maxAttempts());
      }
      ObjectNode p = JSON.objectNode();
      p.put("id", id);
      p.set("spec", s);
      return p;
    }
  }

  /** {@code admitted}: {@code {}}. */
  record Admitted() implements Event {
    @Override
    public EventKind kind() {
      return EventKind.ADMITTED;
    }

    @Override
    public ObjectNode payload() {
      return JSON.objectNode();
    }
  }

  /** {@code claimed}: {@code {"holder", "until"}}. */
  record Claimed(String holder, Instant until) implements Event {
    @Override
    public EventKind kind() {
      return EventKind.CLAIMED;
    }

    @Override
    public ObjectNode payload() {
      ObjectNode p = JSON.objectNode();
      p.put("holder", holder);
      p.put("until", Rfc3339.format(until));
      return p;
    }
  }

  /** {@code heartbeat}: {@code {"until"}}. */
  record Heartbeat(Instant until) implements Event {
    @Override
    public EventKind kind() {
      return EventKind.HEARTBEAT;
    }

    @Override
    public ObjectNode payload() {
      return JSON.objectNode().put("until", Rfc3339.format(until));
    }
  }

  /** {@code handoff_left}: {@code {"handoff"}}. */
  record HandoffLeft(String handoff) implements Event {
    @Override
    public EventKind kind() {
      return EventKind.HANDOFF_LEFT;
    }

    @Override
    public ObjectNode payload() {
      return JSON.objectNode().put("handoff", handoff);
    }
  }

  /** {@code released}: {@code {}}. */
  record Released() implements Event {
    @Override
    public EventKind kind() {
      return EventKind.RELEASED;
    }

    @Override
    public ObjectNode payload() {
      return JSON.objectNode();
    }
  }

  /** {@code completed}: {@code {"handoff"}}, the handoff may be null. */
  record Completed(String handoff) implements Event {
    @Override
    public EventKind kind() {
      return EventKind.COMPLETED;
    }

    @Override
    public ObjectNode payload() {
      return JSON.objectNode().put("handoff", handoff);
    }
  }

  /** {@code invalidated}: {@code {"reason", "superseded_by"}}, superseded_by may be null. */
  record Invalidated(String reason, String supersededBy) implements Event {
    @Override
    public EventKind kind() {
      return EventKind.INVALIDATED;
    }

    @Override
    public ObjectNode payload() {
      ObjectNode p = JSON.objectNode();
      p.put("reason", reason);
      p.put("superseded_by", supersededBy);
      return p;
    }
  }

  /** {@code posted}: {@code {"to"}}. */
  record Posted(String to) implements Event {
    @Override
    public EventKind kind() {
      return EventKind.POSTED;
    }

    @Override
    public ObjectNode payload() {
      return JSON.objectNode().put("to", to);
    }
  }

  /** {@code rescored}: {@code {"priority", "why"}}. */
  record Rescored(long priority, String why) implements Event {
    @Override
    public EventKind kind() {
      return EventKind.RESCORED;
    }

    @Override
    public ObjectNode payload() {
      ObjectNode p = JSON.objectNode();
      p.put("priority", priority);
      p.put("why", why);
      return p;
    }
  }

  /** {@code promoted}: {@code {"spec": {...}, "why_erased"}}. */
  record Promoted(PromotionSpec spec, boolean whyErased) implements Event {
    @Override
    public EventKind kind() {
      return EventKind.PROMOTED;
    }

    @Override
    public ObjectNode payload() {
      ObjectNode s = JSON.objectNode();
      s.put("domain", spec.domain());
      s.put("entry", spec.entry());
      s.put("tier", spec.tier());
      s.put("by", spec.by());
      s.put("author", spec.author());
      s.put("why", spec.why());
      s.put("classification", spec.classification().wire());
      s.put("digest", spec.digest());
      s.put("new_digest", spec.newDigest());
      ObjectNode p = JSON.objectNode();
      p.set("spec", s);
      p.put("why_erased", whyErased);
      return p;
    }
  }

  /**
   * Reads an event back from its kind and payload.
   *
   * @param taskId the event's {@code task_id}, for messages
   * @param kind the stored kind
   * @param p the stored payload
   * @return the event
   * @throws LedgerException naming the task and the kind when the payload does not fit format v1
   */
  static Event parse(String taskId, String kind, JsonNode p) {
    try {
      EventKind k =
          EventKind.find(kind)
              .orElseThrow(() -> new IllegalArgumentException("unknown event kind"));
      return switch (k) {
        case CREATED -> {
          JsonNode s = p.required("spec");
          yield new Created(
              p.required("id").asText(),
              new TaskSpec(
                  text(s, "domain"),
                  text(s, "title"),
                  text(s, "body"),
                  strings(s.required("requirements")),
                  strings(s.required("depends_on")),
                  nullable(s, "origin"),
                  nullable(s, "upstream_event"),
                  text(s, "created_by"),
                  Label.parse(text(s, "classification")),
                  s.required("priority").asLong(),
                  s.hasNonNull("not_before") ? Rfc3339.parse(text(s, "not_before")) : null,
                  s.hasNonNull("max_attempts") ? s.get("max_attempts").asInt() : 0));
        }
        case ADMITTED -> new Admitted();
        case CLAIMED -> new Claimed(text(p, "holder"), Rfc3339.parse(text(p, "until")));
        case HEARTBEAT -> new Heartbeat(Rfc3339.parse(text(p, "until")));
        case HANDOFF_LEFT -> new HandoffLeft(text(p, "handoff"));
        case RELEASED -> new Released();
        case COMPLETED -> new Completed(nullable(p, "handoff"));
        case INVALIDATED -> new Invalidated(text(p, "reason"), nullable(p, "superseded_by"));
        case POSTED -> new Posted(text(p, "to"));
        case RESCORED -> new Rescored(p.required("priority").asLong(), text(p, "why"));
        case PROMOTED -> {
          JsonNode s = p.required("spec");
          JsonNode erased = p.get("why_erased");
          yield new Promoted(
              new PromotionSpec(
                  text(s, "domain"),
                  text(s, "entry"),
                  text(s, "tier"),
                  text(s, "by"),
                  text(s, "author"),
                  text(s, "why"),
                  Label.parse(text(s, "classification")),
                  text(s, "digest"),
                  // the first promotions shape had no new_digest and no why_erased
                  s.hasNonNull("new_digest") ? s.get("new_digest").asText() : ""),
              erased != null && erased.asBoolean(false));
        }
      };
    } catch (IllegalArgumentException e) {
      throw new LedgerException(
          "event of task '" + taskId + "' (kind " + kind + ") is not format v1: " + e.getMessage(),
          e);
    }
  }

  private static String text(JsonNode node, String field) {
    JsonNode v = node.required(field);
    if (!v.isTextual()) {
      throw new IllegalArgumentException(field + " is not a string");
    }
    return v.asText();
  }

  private static String nullable(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  private static List<String> strings(JsonNode array) {
    if (!array.isArray()) {
      throw new IllegalArgumentException("not an array");
    }
    List<String> out = new ArrayList<>(array.size());
    array.forEach(v -> out.add(v.asText()));
    return out;
  }
}

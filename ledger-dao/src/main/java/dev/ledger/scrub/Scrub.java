package dev.ledger.scrub;

import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.PROMOTIONS;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.FailureRecord;
import dev.ledger.Redaction;
import dev.ledger.codegen.db.ledger_template.tables.records.EventsRecord;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.event.EventKind;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jooq.DSLContext;

/**
 * Erasure: payloads are parsed as JSON, the erased fields rewritten, and the JSON written back;
 * never edited as strings. Ports the reference's {@code scrub_promotions_in}, {@code redact_task},
 * {@code scrub_payload} and {@code redact_event}. Callers hold the domain's lock and a transaction.
 */
final class Scrub {

  private Scrub() {}

  /**
   * Removes the why from an entry's promotion events and rows.
   *
   * @param ctx a context in a transaction, mapped to the domain's schema
   * @param domain the domain
   * @param entry the entry
   * @return how many records of the entry hold no why now
   */
  static int promotions(DSLContext ctx, String domain, String entry) {
    for (EventsRecord e :
        ctx.selectFrom(EVENTS)
            .where(EVENTS.TASK_ID.eq("promotion:" + entry))
            .and(EVENTS.KIND.eq(EventKind.PROMOTED.wire()))
            .orderBy(EVENTS.SEQ)
            .forUpdate()
            .fetch()) {
      ObjectNode payload = e.getPayload().deepCopy();
      JsonNode spec = payload.get("spec");
      boolean erased = payload.path("why_erased").asBoolean(false);
      if (spec instanceof ObjectNode s && (!erased || !"".equals(s.path("why").asText("")))) {
        s.put("why", "");
        payload.put("why_erased", true);
        e.setPayload(payload);
        e.update();
      }
    }
    ctx.update(PROMOTIONS)
        .set(PROMOTIONS.WHY, "")
        .set(PROMOTIONS.WHY_ERASED, true)
        .where(PROMOTIONS.DOMAIN.eq(domain))
        .and(PROMOTIONS.ENTRY.eq(entry))
        .and(PROMOTIONS.WHY_ERASED.eq(false).or(PROMOTIONS.WHY.ne("")))
        .execute();
    return ctx.fetchCount(
        PROMOTIONS,
        PROMOTIONS
            .DOMAIN
            .eq(domain)
            .and(PROMOTIONS.ENTRY.eq(entry))
            .and(PROMOTIONS.WHY_ERASED.eq(true)));
  }

  /**
   * Rewrites one task's events and row to the redaction: the title and body it was filed with, the
   * reason it was invalidated for ({@link #redactReason}: a failure's error text, a dead letter
   * staying a dead letter), each handoff left on it or completing it, each destination its result
   * was posted to, and the why of each change of its priority. Ids (superseded by, dependencies),
   * names (origin, upstream event, created by, holder, requirements), times and numbers stay.
   *
   * @param ctx a context in a transaction, mapped to the task's domain schema
   * @param row the task's row, locked; updated in place
   * @param redaction what to write instead
   */
  static void redactTask(DSLContext ctx, TasksRecord row, Redaction redaction) {
    for (EventsRecord e :
        ctx.selectFrom(EVENTS)
            .where(EVENTS.TASK_ID.eq(row.getId()))
            .orderBy(EVENTS.SEQ)
            .forUpdate()
            .fetch()) {
      ObjectNode payload = e.getPayload().deepCopy();
      boolean changed = redactEvent(e.getKind(), payload, redaction);
      if (changed) {
        e.setPayload(payload);
        e.update();
      }
    }
    // the row as the redacted events project it (Projection.apply): each column from the last
    // event that set it, so a replay of the scrubbed log rebuilds exactly this row
    row.setTitle(redaction.title()).setBody(redaction.body());
    if (row.getReason() != null) {
      row.setReason(redactReason(row.getReason(), redaction));
    }
    if (row.getHandoff() != null) {
      row.setHandoff(redaction.reason());
    }
    if (row.getPostedTo() != null) {
      row.setPostedTo(redaction.reason());
    }
    row.update();
  }

  /**
   * Redacts one event's payload in place.
   *
   * @param kind the event kind
   * @param payload the payload, changed in place
   * @param redaction what to write instead
   * @return whether anything changed
   */
  static boolean redactEvent(String kind, ObjectNode payload, Redaction redaction) {
    Optional<EventKind> known = EventKind.find(kind);
    if (known.isEmpty()) {
      return false; // a kind this ledger does not write holds no text of ours
    }
    return switch (known.get()) {
      case CREATED -> {
        if (payload.get("spec") instanceof ObjectNode spec) {
          boolean same =
              redaction.title().equals(spec.path("title").asText())
                  && redaction.body().equals(spec.path("body").asText());
          spec.put("title", redaction.title());
          spec.put("body", redaction.body());
          yield !same;
        }
        yield false;
      }
      case INVALIDATED -> {
        JsonNode reason = payload.get("reason");
        yield reason != null
            && reason.isTextual()
            && replace(payload, "reason", redactReason(reason.asText(), redaction));
      }
      case HANDOFF_LEFT, COMPLETED -> replace(payload, "handoff", redaction.reason());
      // a destination is free text too: a mailto: address, a person's channel
      case POSTED -> replace(payload, "to", redaction.reason());
      // the why of a priority change is free text too, and may quote the entry
      case RESCORED -> replace(payload, "why", redaction.reason());
      // names, ids, times and numbers only; a promotion's why is scrubbed by promotions()
      case ADMITTED, CLAIMED, HEARTBEAT, RELEASED, PROMOTED -> false;
    };
  }

  /**
   * The header of a failed attempt's reason as {@code Retries.fail} writes it ({@link
   * FailureRecord#reason}): {@code [dead letter: ]attempt <n> of <max> failed at <instant>: },
   * followed by the handler's error text. The header holds no text of the task's or the handler's,
   * only counts and a time.
   */
  private static final Pattern FAILURE_HEADER =
      Pattern.compile(
          "^(?:"
              + Pattern.quote(FailureRecord.DEAD_LETTER)
              + " )?attempt [0-9]{1,9} of [0-9]{1,9} failed at"
              + " [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\\.[0-9]{1,9})?)?Z: ");

  /**
   * The reason a scrub leaves on an invalidated task: a failed attempt's reason keeps its header
   * (attempt, time, and that it is a dead letter) with the error text replaced; any other dead
   * letter's reason becomes {@value FailureRecord#DEAD_LETTER} and the redaction's reason; any
   * other reason becomes the redaction's reason. So a scrubbed dead letter is still listed, counted
   * and re-fileable as one. Idempotent: a redacted reason is redacted to itself.
   *
   * @param reason the stored reason, not null
   * @param redaction what to write instead
   * @return the reason to store
   */
  static String redactReason(String reason, Redaction redaction) {
    if (reason.equals(redaction.reason())) {
      return reason;
    }
    Matcher header = FAILURE_HEADER.matcher(reason);
    if (header.lookingAt()) {
      return header.group() + redaction.reason();
    }
    if (reason.startsWith(FailureRecord.DEAD_LETTER + " ")) {
      return FailureRecord.DEAD_LETTER + " " + redaction.reason();
    }
    return redaction.reason();
  }

  private static boolean replace(ObjectNode payload, String field, String text) {
    JsonNode v = payload.get(field);
    if (v == null || v.isNull() || text.equals(v.asText())) {
      return false;
    }
    payload.put(field, text);
    return true;
  }
}

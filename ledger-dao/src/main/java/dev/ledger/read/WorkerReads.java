package dev.ledger.read;

import static dev.ledger.append.Retries.REFILED;
import static dev.ledger.append.Retries.RETRIES;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.FailureRecord;
import dev.ledger.InvalidInputException;
import dev.ledger.Pickup;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.Validation;
import dev.ledger.codegen.convert.Rfc3339;
import dev.ledger.codegen.db.ledger_template.tables.Tasks;
import dev.ledger.event.EventKind;
import dev.ledger.kernel.Engine;
import dev.ledger.kernel.Rows;
import dev.ledger.kernel.Tx;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;

/**
 * The reads worker pools make: a batch's tasks in one query, how they came to be claimable, the
 * next delayed task's time, a domain's dead letters and its counts by status. Thread-safe.
 */
public final class WorkerReads {

  private final Engine engine;

  /**
   * Creates the reads.
   *
   * @param engine the ledger's shared state
   */
  public WorkerReads(Engine engine) {
    this.engine = engine;
  }

  private Optional<DSLContext> domain(Tx tx, String domain) {
    Validation.domain(domain);
    return engine.domain(tx, domain);
  }

  /**
   * Several tasks of one domain, in the order of {@code ids}; ids without a task there left out.
   *
   * @param tx the operation's context
   * @param domain the domain
   * @param ids the ids, not null
   * @return the tasks found
   */
  public List<Task> tasks(Tx tx, String domain, Collection<String> ids) {
    if (ids == null) {
      throw new InvalidInputException("ids", "must not be null");
    }
    Optional<DSLContext> ctx = domain(tx, domain);
    if (ids.isEmpty() || ctx.isEmpty()) {
      return List.of();
    }
    Map<String, Task> byId = new HashMap<>();
    for (Task t : ctx.get().selectFrom(TASKS).where(TASKS.ID.in(ids)).fetch(Rows::task)) {
      byId.put(t.id(), t);
    }
    List<Task> out = new ArrayList<>(byId.size());
    for (String id : ids) {
      Task t = byId.remove(id);
      if (t != null) {
        out.add(t);
      }
    }
    return List.copyOf(out);
  }

  /**
   * How each of several claimed tasks of one domain came to be claimable (see {@code
   * Ledger.pickups}), from their {@code admitted}, {@code released} and {@code claimed} events in
   * one query ({@code events_task}).
   *
   * @param tx the operation's context
   * @param domain the domain
   * @param ids the ids of claimed tasks, not null
   * @return by task id; a task without a claim among its events is left out
   */
  public Map<String, Pickup> pickups(Tx tx, String domain, Collection<String> ids) {
    if (ids == null) {
      throw new InvalidInputException("ids", "must not be null");
    }
    Optional<DSLContext> ctx = domain(tx, domain);
    if (ids.isEmpty() || ctx.isEmpty()) {
      return Map.of();
    }
    Map<
            String,
            List<
                org.jooq.Record4<String, String, Instant, com.fasterxml.jackson.databind.JsonNode>>>
        byTask = new HashMap<>();
    ctx.get()
        .select(EVENTS.TASK_ID, EVENTS.KIND, EVENTS.AT, EVENTS.PAYLOAD)
        .from(EVENTS)
        .where(EVENTS.TASK_ID.in(ids))
        .and(
            EVENTS.KIND.in(
                DSL.inline(EventKind.ADMITTED.wire()),
                DSL.inline(EventKind.RELEASED.wire()),
                DSL.inline(EventKind.CLAIMED.wire())))
        .orderBy(EVENTS.TASK_ID, EVENTS.SEQ)
        .fetch()
        .forEach(r -> byTask.computeIfAbsent(r.value1(), k -> new ArrayList<>()).add(r));
    Map<String, Pickup> out = new HashMap<>();
    byTask.forEach(
        (id, events) -> {
          int current = -1;
          for (int i = 0; i < events.size(); i++) {
            if (EventKind.CLAIMED.wire().equals(events.get(i).value2())) {
              current = i;
            }
          }
          if (current < 0) {
            return;
          }
          Instant ready = null;
          String holder = null;
          Instant until = null;
          boolean held = false;
          for (int i = 0; i < current; i++) {
            var e = events.get(i);
            if (EventKind.CLAIMED.wire().equals(e.value2())) {
              // a claim before the current one that no release ended: its lease expired
              holder = e.value4().path("holder").asText();
              until = Rfc3339.parse(e.value4().path("until").asText());
              held = true;
            } else {
              ready = e.value3();
              held = false;
            }
          }
          Instant claimedAt = events.get(current).value3();
          if (held) {
            out.put(id, new Pickup(id, until, claimedAt, holder));
          } else if (ready != null) {
            out.put(id, new Pickup(id, ready, claimedAt, null));
          }
        });
    return out;
  }

  /**
   * The earliest start time among a domain's delayed tasks not yet admitted.
   *
   * @param tx the operation's context
   * @param domain the domain
   * @return the time, or empty
   */
  public Optional<Instant> nextDue(Tx tx, String domain) {
    return domain(tx, domain)
        .flatMap(
            ctx ->
                ctx.select(TASKS.NOT_BEFORE)
                    .from(TASKS)
                    .where(TASKS.STATUS.eq(DSL.inline(Status.PROPOSED.wire())))
                    .and(TASKS.NOT_BEFORE.isNotNull())
                    .orderBy(TASKS.NOT_BEFORE)
                    .limit(1)
                    .fetchOptional(TASKS.NOT_BEFORE));
  }

  /**
   * A domain's dead letters not re-filed yet, oldest first. A re-filed one has a successor in its
   * domain with origin {@code retries:<root>} and upstream event {@code refiled:<id>} (what {@code
   * Retries.refile} files), found by one probe of the unique origin index per dead letter.
   *
   * @param tx the operation's context
   * @param domain the domain
   * @return the tasks
   */
  public List<Task> deadLetters(Tx tx, String domain) {
    Tasks dead = TASKS.as("dead");
    Tasks refiled = TASKS.as("refiled");
    // the successor's origin: the dead letter's own when it is a retry already, else retries:<id>
    Field<String> successorOrigin =
        DSL.when(
                dead.ORIGIN.startsWith(DSL.inline(RETRIES)).and(DSL.length(dead.ORIGIN).gt(8)),
                dead.ORIGIN)
            .otherwise(DSL.inline(RETRIES).concat(dead.ID));
    return domain(tx, domain)
        .map(
            ctx ->
                ctx.selectFrom(dead)
                    .where(dead.STATUS.eq(DSL.inline(Status.INVALIDATED.wire())))
                    .and(dead.REASON.startsWith(FailureRecord.DEAD_LETTER + " "))
                    .andNotExists(
                        DSL.selectOne()
                            .from(refiled)
                            .where(refiled.ORIGIN.eq(successorOrigin))
                            .and(refiled.UPSTREAM_EVENT.eq(DSL.inline(REFILED).concat(dead.ID))))
                    .orderBy(dead.CREATED.asc())
                    .fetch(Rows::task))
        .orElse(List.of());
  }

  /**
   * A domain's task counts by status, every status present.
   *
   * @param tx the operation's context
   * @param domain the domain
   * @return the counts
   */
  public Map<Status, Long> countByStatus(Tx tx, String domain) {
    EnumMap<Status, Long> counts = new EnumMap<>(Status.class);
    for (Status st : Status.values()) {
      counts.put(st, 0L);
    }
    domain(tx, domain)
        .ifPresent(
            ctx ->
                ctx.select(TASKS.STATUS, DSL.count())
                    .from(TASKS)
                    .groupBy(TASKS.STATUS)
                    .fetch()
                    .forEach(r -> counts.put(Status.parse(r.value1()), r.value2().longValue())));
    return Collections.unmodifiableMap(counts);
  }
}

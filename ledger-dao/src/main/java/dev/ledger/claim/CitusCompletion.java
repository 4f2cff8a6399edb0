package dev.ledger.claim;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.Completion;
import dev.ledger.Status;
import dev.ledger.event.Event;
import dev.ledger.event.EventKind;
import dev.ledger.kernel.CitusDirectory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jooq.DSLContext;
import org.jooq.Record4;
import org.jooq.impl.DSL;

/**
 * A batch completion on Citus ({@code docs/scale-out.md}): what {@link BatchCompletion}'s one
 * statement does, in statements Citus can run. That statement joins the directory's routes (local
 * tables on the coordinator) with the domain's tasks (on a worker) and appends events from a
 * data-modifying CTE, neither of which Citus plans as one statement there. Here: the routes are
 * locked on the coordinator, the task rows on the domain's node (both in id order, as the one
 * statement does, so two batches cannot deadlock), then each locked task whose lease is current is
 * completed and its event appended, in the batch's order, and the routes follow ({@link
 * CitusDirectory#statusChanged}). More round trips than on one server: one per completed task.
 *
 * <p>Stateless; every method runs in the caller's transaction.
 */
final class CitusCompletion {

  private CitusCompletion() {}

  /**
   * A task row as it was locked, and whether this batch completed it.
   *
   * @param id the task
   * @param status its status when locked
   * @param holder its holder when locked
   * @param attempts its attempts when locked
   * @param done whether this batch completed it
   */
  record Locked(String id, String status, String holder, Long attempts, boolean done) {}

  /**
   * Locks and completes a batch.
   *
   * @param ctx a context on the transaction, mapped to the domain's schema
   * @param distinct the completions, one per task, in the order their events are appended
   * @param at the events' time
   * @param skipLocked true to skip rows (routes and tasks) another transaction holds, false to wait
   *     for them
   * @return every locked row by id
   */
  static Map<String, Locked> complete(
      DSLContext ctx, List<Completion> distinct, Instant at, boolean skipLocked) {
    Map<String, Locked> out = new LinkedHashMap<>();
    if (distinct.isEmpty()) {
      return out;
    }
    String[] ids = distinct.stream().map(c -> c.lease().taskId()).sorted().toArray(String[]::new);
    Set<String> lockable = new HashSet<>(List.of(ids));
    if (skipLocked) {
      // the routes first, as the one statement does: a route held by another transaction is a
      // busy task; a task without a route (written by a stack without routes) is still lockable
      Set<String> routed =
          new HashSet<>(
              ctx.select(LEDGER_TASKS.ID)
                  .from(LEDGER_TASKS)
                  .where(LEDGER_TASKS.ID.eq(DSL.any(ids)))
                  .fetch(LEDGER_TASKS.ID));
      Set<String> lockedRoutes =
          new HashSet<>(
              ctx.select(LEDGER_TASKS.ID)
                  .from(LEDGER_TASKS)
                  .where(LEDGER_TASKS.ID.eq(DSL.any(ids)))
                  .orderBy(LEDGER_TASKS.ID)
                  .forUpdate()
                  .skipLocked()
                  .fetch(LEDGER_TASKS.ID));
      lockable.removeIf(id -> routed.contains(id) && !lockedRoutes.contains(id));
    }
    if (lockable.isEmpty()) {
      return out;
    }
    var select =
        ctx.select(TASKS.ID, TASKS.STATUS, TASKS.HOLDER, TASKS.ATTEMPTS)
            .from(TASKS)
            .where(TASKS.ID.eq(DSL.any(lockable.stream().sorted().toArray(String[]::new))))
            .orderBy(TASKS.ID)
            .forUpdate();
    List<Record4<String, String, String, Long>> rows =
        skipLocked ? select.skipLocked().fetch() : select.fetch();
    Map<String, Record4<String, String, String, Long>> byId = new LinkedHashMap<>();
    for (Record4<String, String, String, Long> r : rows) {
      byId.put(r.value1(), r);
    }
    List<String> done = new ArrayList<>();
    for (Completion c : distinct) {
      Record4<String, String, String, Long> r = byId.get(c.lease().taskId());
      if (r == null) {
        continue;
      }
      boolean current =
          Status.CLAIMED.wire().equals(r.value2())
              && c.lease().holder().equals(r.value3())
              && r.value4() != null
              && r.value4() == c.lease().attempt();
      if (current) {
        ctx.update(TASKS)
            .set(TASKS.STATUS, Status.COMPLETED.wire())
            .set(TASKS.HANDOFF, c.handoff())
            .set(TASKS.LEASE_UNTIL, (Instant) null)
            .where(TASKS.ID.eq(r.value1()))
            .execute();
        ctx.insertInto(EVENTS)
            .set(EVENTS.TASK_ID, r.value1())
            .set(EVENTS.KIND, EventKind.COMPLETED.wire())
            .set(EVENTS.AT, at)
            .set(EVENTS.PAYLOAD, new Event.Completed(c.handoff()).payload())
            .execute();
        done.add(r.value1());
      }
    }
    CitusDirectory.statusChanged(ctx, done, Status.COMPLETED);
    Set<String> doneSet = new HashSet<>(done);
    byId.values().stream()
        .sorted(Comparator.comparing(Record4::value1))
        .forEach(
            r ->
                out.put(
                    r.value1(),
                    new Locked(
                        r.value1(),
                        r.value2(),
                        r.value3(),
                        r.value4(),
                        doneSet.contains(r.value1()))));
    return out;
  }
}

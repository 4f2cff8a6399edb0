package dev.ledger.kernel;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_DEPENDENCIES;
import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.Status;
import java.util.Collection;
import java.util.List;
import java.util.TreeSet;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * The directory's derived state kept by the ledger's own statements in Citus mode ({@link Citus}).
 *
 * <p>Why: on one server the domain's triggers (domain V8/V9) write the directory (a route's {@code
 * completed}, the dependency edges) and read it (a new task's {@code blocked}). On Citus a domain
 * schema lives on a worker and the directory on the coordinator: the triggers run on the worker,
 * find no directory there and do nothing (a new task with dependencies is left blocked, a
 * completion leaves its route open). So the ledger's writes do it themselves, in the same
 * transaction: {@link #filed} after a task with dependencies is inserted, {@link #statusChanged}
 * after a task's status is written. The directory's own triggers (directory V5/V6: a route whose
 * {@code completed} changes recomputes its dependents' {@code blocked}, in whatever domain) run on
 * the coordinator and keep working: they update the dependents through Citus.
 *
 * <p>Only writes through this ledger keep that state on Citus: the reference stack's SQL, or an
 * operator's, into a distributed domain schema does not (docs/scale-out.md). Stateless and
 * thread-safe; every method runs in the caller's transaction.
 */
public final class CitusDirectory {

  private CitusDirectory() {}

  /**
   * A task with dependencies was just inserted: its dependency edges, then its {@code blocked} flag
   * from its dependencies' routes, read {@code FOR SHARE} in id order after the edges are written
   * (the order domain V8's trigger keeps, so of a filing and a completion racing, one sees the
   * other's commit).
   *
   * @param ctx a context on the filing transaction, mapped to the task's domain schema
   * @param id the task
   * @param dependsOn its dependencies, as filed (duplicates allowed); nothing when empty
   */
  public static void filed(DSLContext ctx, String id, Collection<String> dependsOn) {
    if (dependsOn == null || dependsOn.isEmpty()) {
      return;
    }
    List<String> deps = List.copyOf(new TreeSet<>(dependsOn));
    for (String dep : deps) {
      ctx.insertInto(
              LEDGER_DEPENDENCIES, LEDGER_DEPENDENCIES.DEPENDS_ON, LEDGER_DEPENDENCIES.TASK_ID)
          .values(dep, id)
          .onConflictDoNothing()
          .execute();
    }
    List<Boolean> completed =
        ctx.select(LEDGER_TASKS.COMPLETED)
            .from(LEDGER_TASKS)
            .where(LEDGER_TASKS.ID.in(deps))
            .orderBy(LEDGER_TASKS.ID)
            .forShare()
            .fetch(LEDGER_TASKS.COMPLETED);
    boolean blocked =
        completed.size() < deps.size() || completed.stream().anyMatch(c -> !Boolean.TRUE.equals(c));
    ctx.update(TASKS)
        .set(TASKS.BLOCKED, blocked)
        .where(TASKS.ID.eq(id))
        .and(TASKS.BLOCKED.isDistinctFrom(blocked))
        .execute();
  }

  /**
   * Tasks' statuses were just written: their routes' {@code completed} follows (the directory's
   * trigger then recomputes their dependents' flags).
   *
   * @param ctx a context on the writing transaction
   * @param ids the tasks whose status is now {@code status}
   * @param status their status
   */
  public static void statusChanged(DSLContext ctx, Collection<String> ids, Status status) {
    if (ids.isEmpty()) {
      return;
    }
    boolean completed = status == Status.COMPLETED;
    ctx.update(LEDGER_TASKS)
        .set(LEDGER_TASKS.COMPLETED, completed)
        .where(LEDGER_TASKS.ID.in(new TreeSet<>(ids)))
        .and(LEDGER_TASKS.COMPLETED.isDistinctFrom(completed))
        .execute();
  }

  /**
   * The wake-up of domain V7's trigger ({@code pg_notify(<schema>, <status>)}) sent from the
   * coordinator, where worker pools listen: on Citus the trigger notifies on the domain's node,
   * where nobody does. Sent only for what the trigger sends: a task now {@code admitted}, or {@code
   * proposed} with a {@code not_before}. PostgreSQL folds equal notifications of one transaction
   * into one.
   *
   * @param ctx a context on the writing transaction
   * @param domain the task's domain (its schema names the channel)
   * @param status the task's status now
   * @param delayed whether the task has a {@code not_before}
   */
  public static void wake(DSLContext ctx, String domain, Status status, boolean delayed) {
    if (status != Status.ADMITTED && !(status == Status.PROPOSED && delayed)) {
      return;
    }
    ctx.select(
            DSL.function(
                "pg_notify",
                Object.class,
                DSL.val(dev.ledger.schema.DomainSchemas.schemaName(domain)),
                DSL.val(status.wire())))
        .fetch();
  }
}

package dev.ledger.append;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.InvalidInputException;
import dev.ledger.TaskSpec;
import dev.ledger.Validation;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.event.Event;
import dev.ledger.event.EventLog;
import dev.ledger.event.Projection;
import dev.ledger.kernel.DomainLock;
import dev.ledger.kernel.Engine;
import dev.ledger.kernel.Tx;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;

/**
 * Filing a task: its {@code created} event, its row (born {@code proposed}), its claim class and
 * dependency edges, and its route in {@code ledger_tasks}, all in the operation's transaction.
 * Filing again from the same origin and upstream event returns the first task's id and writes
 * nothing. Filings into a domain hold its lock shared and run concurrently; two filings of one
 * upstream event are serialized by the event's own advisory key ({@link DomainLock#lockForFiling}),
 * and one that still meets the unique key {@code tasks_origin} (the event filed by a batch, which
 * takes no such key, or committed while this filing waited for the key, after its lookup's
 * snapshot) is caught inside a savepoint and looked up again, so the transaction (the ledger's or a
 * caller's) stays usable. Ports the reference's {@code file}. Thread-safe.
 */
public final class Filing {

  private final Engine engine;
  private final EventLog log;
  private final Transitions transitions;

  /**
   * Creates the operation.
   *
   * @param engine the ledger's shared state
   * @param log the event log writer
   * @param transitions the transitions by id (to admit a task filed before)
   */
  public Filing(Engine engine, EventLog log, Transitions transitions) {
    this.engine = engine;
    this.log = log;
    this.transitions = transitions;
  }

  /**
   * Files a task in {@code tx}.
   *
   * @param tx the operation's transaction context
   * @param spec what to file
   * @return the task's id, or the first task's when the upstream event was filed already
   * @throws InvalidInputException naming the field: see {@link Validation#spec(TaskSpec)}; also
   *     {@code depends_on} when a dependency does not exist
   */
  public String file(Tx tx, TaskSpec spec) {
    return fileRow(tx, spec).id();
  }

  /**
   * Files a task and admits it, in {@code tx}: its {@code created} and {@code admitted} events
   * commit together (or not at all). When the upstream event was filed already, the first task's id
   * is returned, and that task is admitted if it is still proposed.
   *
   * @param tx the operation's transaction context
   * @param spec what to file
   * @return the task's id
   * @throws InvalidInputException naming the field, as {@link #file}
   */
  public String fileAndAdmit(Tx tx, TaskSpec spec) {
    Filed filed = fileRow(tx, spec);
    if (filed.row() == null) {
      transitions.admitIfProposed(tx, filed.id());
    } else if (spec.notBefore() != null && spec.notBefore().isAfter(engine.now())) {
      // delayed: it stays proposed until a worker pool of its domain admits it at its time
    } else {
      log.applyToRow(tx, filed.ctx(), filed.row(), engine.now(), new Event.Admitted());
    }
    return filed.id();
  }

  /**
   * A filing's outcome: the id, and the new row (null when the upstream event was filed before).
   */
  private record Filed(String id, TasksRecord row, DSLContext ctx) {}

  private Filed fileRow(Tx tx, TaskSpec spec) {
    Validation.spec(spec);
    // before the domain's schema is made: a refused filing writes nothing at all. Tasks are
    // never deleted, so a dependency seen here still exists at commit.
    checkDependencies(tx.directory(), spec.dependsOn());
    DSLContext ctx = engine.domainForWrite(tx, spec.domain());
    // the domain's lock, held to commit: shared, so filings into the domain run side by side, while
    // a replay, a scrub or the reference stack (exclusive) finishes first and never meets a task
    // filed after it began; and the upstream event's own key exclusive, so a concurrent filing of
    // the same upstream event waits for this one's commit and then finds its task (issue 26)
    if (spec.upstreamEvent() == null) {
      DomainLock.lockForFiling(ctx, spec.domain(), null, null);
      String id = engine.newId();
      return new Filed(id, insert(ctx, id, spec), ctx);
    }
    Optional<String> first = lockAndFindOrigin(ctx, spec);
    if (first.isPresent()) {
      return new Filed(first.get(), null, ctx);
    }
    String id = engine.newId();
    try {
      return new Filed(id, tx.savepoint(() -> insert(ctx, id, spec)), ctx);
    } catch (DataAccessException e) {
      // a concurrent filing of the same upstream event won the unique key tasks_origin; the
      // savepoint keeps the transaction (the ledger's or a caller's) usable
      if ("23505".equals(e.sqlState())) {
        Optional<String> won = findOrigin(ctx, spec.origin(), spec.upstreamEvent());
        if (won.isPresent()) {
          return new Filed(won.get(), null, ctx);
        }
      }
      throw e;
    }
  }

  /**
   * Takes the filing's locks and looks the upstream event up, in one round trip (issue 26, B13).
   * The lookup's snapshot is the statement's, taken before a wait for the upstream event's key: a
   * filing of the same event that committed during that wait is not seen here, and its unique key
   * {@code tasks_origin} then sends the insert to the savepoint path, which looks again.
   */
  private static Optional<String> lockAndFindOrigin(DSLContext ctx, TaskSpec spec) {
    Field<String> found =
        DSL.field(
            DSL.select(TASKS.ID)
                .from(TASKS)
                .where(TASKS.ORIGIN.eq(spec.origin()))
                .and(TASKS.UPSTREAM_EVENT.eq(spec.upstreamEvent())));
    List<Field<?>> fields =
        new ArrayList<>(DomainLock.filingLocks(spec.domain(), spec.origin(), spec.upstreamEvent()));
    fields.add(found);
    return Optional.ofNullable(ctx.select(fields).fetchSingle().get(found));
  }

  private TasksRecord insert(DSLContext ctx, String id, TaskSpec spec) {
    return insert(ctx, id, engine.now(), spec);
  }

  /**
   * Writes a new task in a context on the operation's transaction (no idempotency check): its
   * {@code created} event, row, claim class, dependency edges and route.
   *
   * @param ctx a context mapped to the domain's schema
   * @param id the new id
   * @param now the event's time
   * @param spec the validated spec
   * @return the new row
   */
  TasksRecord insert(DSLContext ctx, String id, Instant now, TaskSpec spec) {
    log.append(ctx, id, now, new Event.Created(id, spec));
    // the row's claim class, dependency edges and blocked flag are written by the database's
    // trigger on tasks (domain migration V8), as for a row the reference stack inserts
    TasksRecord row = Projection.created(id, now, spec);
    log.writeRow(ctx, row, true);
    log.insertRoute(ctx, id, spec.domain());
    return row;
  }

  /**
   * The task filed from an origin's upstream event, if any.
   *
   * @param ctx a context mapped to the domain's schema
   * @param origin the origin
   * @param upstreamEvent the upstream event
   * @return its id, or empty
   */
  public static Optional<String> findOrigin(DSLContext ctx, String origin, String upstreamEvent) {
    return ctx.select(TASKS.ID)
        .from(TASKS)
        .where(TASKS.ORIGIN.eq(origin))
        .and(TASKS.UPSTREAM_EVENT.eq(upstreamEvent))
        .fetchOptional(TASKS.ID);
  }

  private static void checkDependencies(DSLContext ctx, List<String> dependsOn) {
    if (dependsOn.isEmpty()) {
      return;
    }
    List<String> known =
        ctx.select(LEDGER_TASKS.ID)
            .from(LEDGER_TASKS)
            .where(LEDGER_TASKS.ID.in(dependsOn))
            .fetch(LEDGER_TASKS.ID);
    for (String d : dependsOn) {
      if (!known.contains(d)) {
        throw new InvalidInputException("depends_on", "no task with id '" + d + "'");
      }
    }
  }
}

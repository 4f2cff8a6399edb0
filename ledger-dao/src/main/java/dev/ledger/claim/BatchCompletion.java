package dev.ledger.claim;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.CompletedBatch;
import dev.ledger.Completion;
import dev.ledger.InvalidInputException;
import dev.ledger.Lease;
import dev.ledger.Status;
import dev.ledger.Validation;
import dev.ledger.codegen.convert.JsonConverter;
import dev.ledger.codegen.db.ledger_directory.tables.LedgerTasks;
import dev.ledger.codegen.db.ledger_template.tables.Tasks;
import dev.ledger.event.Event;
import dev.ledger.event.EventKind;
import dev.ledger.kernel.Engine;
import dev.ledger.kernel.RenderedStatement;
import dev.ledger.kernel.RenderedStatement.Slot;
import dev.ledger.kernel.Tx;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jooq.CommonTableExpression;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Record1;
import org.jooq.Record4;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * Completing many tasks of one domain in one transaction: what a worker pool does with the results
 * of one batch. The events and rows are those {@code Ledger.complete} writes for each task, in the
 * order given, appended set-wise ({@code unnest} of the ids and payloads) instead of one round trip
 * each; each lease is checked as {@code complete} checks it, on rows locked {@code FOR UPDATE} in
 * id order (so two batches cannot deadlock).
 */
public final class BatchCompletion {

  private static final JsonConverter JSON = new JsonConverter();

  private final Engine engine;

  /**
   * Creates the operation.
   *
   * @param engine the ledger's shared state
   */
  public BatchCompletion(Engine engine) {
    this.engine = engine;
  }

  /**
   * Completes a batch of one domain in {@code tx} (see {@code Ledger.completeAll}).
   *
   * @param tx the operation's transaction context
   * @param domain the domain
   * @param completions the leases and handoffs
   * @return the refused leases
   * @throws InvalidInputException naming {@code lease} or {@code handoff}
   */
  public List<Lease> completeAll(Tx tx, String domain, List<Completion> completions) {
    checkBatch(domain, completions);
    if (completions.isEmpty()) {
      return List.of();
    }
    Optional<DSLContext> ctx = engine.domain(tx, domain);
    if (ctx.isEmpty()) {
      return completions.stream().map(Completion::lease).toList();
    }
    return completeIn(tx, ctx.get(), completions);
  }

  /**
   * Completes what it can of a batch of one domain in {@code tx} without waiting for a row another
   * transaction holds (see {@code Ledger.completeAvailable}).
   *
   * <p>In a transaction of the ledger's own not begun yet (the domain's schema cached: {@link
   * Tx#canCommitItself()}), outside Citus, the completion's statement commits itself in its one
   * round trip, the bounds in a lead statement of the same execute (issue 26, B9); when some rows
   * were not locked, the read of which exist follows on its own. A connection lost during it is an
   * unknown outcome: a completion retried under the same lease finds its task completed under it.
   *
   * @param tx the operation's transaction context
   * @param domain the domain
   * @param completions the leases and handoffs
   * @return what was completed, refused and left for later
   * @throws InvalidInputException naming {@code lease} or {@code handoff}
   */
  public CompletedBatch completeAvailable(Tx tx, String domain, List<Completion> completions) {
    checkBatch(domain, completions);
    if (completions.isEmpty()) {
      return new CompletedBatch(List.of(), List.of(), List.of());
    }
    Optional<String> schema = engine.schemaOf(tx, domain);
    if (schema.isEmpty()) {
      return new CompletedBatch(
          List.of(), completions.stream().map(Completion::lease).toList(), List.of());
    }
    DSLContext ctx = tx.forSchema(schema.get());
    boolean self = !engine.citus() && tx.canCommitItself();
    List<Lease> refused = new ArrayList<>();
    Map<String, Completion> byTask = new java.util.LinkedHashMap<>();
    for (Completion c : completions) {
      if (byTask.putIfAbsent(c.lease().taskId(), c) != null) {
        refused.add(c.lease());
      }
    }
    List<Completion> distinct = new ArrayList<>(byTask.values());
    Args args = Args.of(distinct);
    Map<String, Record> seen = new HashMap<>();
    if (engine.citus()) {
      for (CitusCompletion.Locked l :
          CitusCompletion.complete(ctx, distinct, engine.now(), true).values()) {
        Record r = ctx.newRecord(AVAILABLE);
        r.set(TASKS.ID, l.id());
        r.set(TASKS.STATUS, l.status());
        r.set(TASKS.HOLDER, l.holder());
        r.set(TASKS.ATTEMPTS, l.attempts());
        r.set(DONE_ID, l.done() ? l.id() : null);
        seen.put(l.id(), r);
      }
    }
    Instant now = engine.now();
    List<Record> locked;
    if (engine.citus()) {
      locked = List.of();
    } else if (self) {
      locked =
          tx.commitItself(
              schema.get(),
              (own, bounds) ->
                  availableStatement(own, true).fetch(own, AVAILABLE, args.binds(now, bounds)));
    } else {
      locked = availableStatement(ctx, false).fetch(ctx, AVAILABLE, args.binds(now, null));
    }
    for (Record r : locked) {
      seen.put(r.get(TASKS.ID), r);
    }
    List<String> unseen = new ArrayList<>();
    for (Completion c : distinct) {
      if (!seen.containsKey(c.lease().taskId())) {
        unseen.add(c.lease().taskId());
      }
    }
    // not locked: held by another transaction (busy), or not a task of this domain (refused)
    java.util.Set<String> exist;
    if (unseen.isEmpty()) {
      exist = java.util.Set.of();
    } else if (self) {
      // after the completion committed itself: a read of its own (tasks are never deleted)
      exist =
          tx.commitItself(
              schema.get(),
              (own, bounds) ->
                  new java.util.HashSet<>(
                      own.select(TASKS.ID).from(TASKS).where(TASKS.ID.in(unseen)).fetch(TASKS.ID)));
    } else {
      exist =
          new java.util.HashSet<>(
              ctx.select(TASKS.ID).from(TASKS).where(TASKS.ID.in(unseen)).fetch(TASKS.ID));
    }
    List<Lease> completed = new ArrayList<>();
    List<Completion> busy = new ArrayList<>();
    for (Completion c : distinct) {
      Lease l = c.lease();
      Record r = seen.get(l.taskId());
      if (r == null) {
        if (exist.contains(l.taskId())) {
          busy.add(c);
        } else {
          refused.add(l);
        }
      } else if (r.get(DONE_ID) != null || completedUnder(r, l)) {
        completed.add(l);
      } else {
        refused.add(l);
      }
    }
    return new CompletedBatch(completed, refused, busy);
  }

  /**
   * Whether a locked row was completed under this very lease before (a completion whose commit's
   * outcome was unknown, retried): completed, same holder, same attempt. Nobody else completes a
   * task under a lease it does not hold, and the lease's holder completes it once.
   */
  private static boolean completedUnder(Record r, Lease l) {
    return Status.COMPLETED.wire().equals(r.get(TASKS.STATUS))
        && l.holder().equals(r.get(TASKS.HOLDER))
        && r.get(TASKS.ATTEMPTS) != null
        && r.get(TASKS.ATTEMPTS) == l.attempt();
  }

  /** A batch as the statements' array binds, sorted by task id (the order rows are locked in). */
  private record Args(
      String[] ids,
      String[] holders,
      String[] attempts,
      String[] places,
      String[] payloads,
      String[] handoffs) {

    /**
     * The completion statement's binds: its time, the arrays, then (a statement that commits
     * itself) the two bounds.
     */
    Object[] binds(Instant now, String[] bounds) {
      Object[] values = {now, ids, holders, attempts, places, payloads, handoffs};
      if (bounds == null) {
        return values;
      }
      Object[] withBounds = java.util.Arrays.copyOf(values, values.length + 2);
      withBounds[values.length] = bounds[0];
      withBounds[values.length + 1] = bounds[1];
      return withBounds;
    }

    static Args of(List<Completion> distinct) {
      Map<String, Integer> order = new HashMap<>();
      for (int i = 0; i < distinct.size(); i++) {
        order.put(distinct.get(i).lease().taskId(), i);
      }
      List<Completion> byId = new ArrayList<>(distinct);
      byId.sort(java.util.Comparator.comparing(c -> c.lease().taskId()));
      int n = byId.size();
      Args a =
          new Args(
              new String[n],
              new String[n],
              new String[n],
              new String[n],
              new String[n],
              new String[n]);
      for (int i = 0; i < n; i++) {
        Completion c = byId.get(i);
        a.ids[i] = c.lease().taskId();
        a.holders[i] = c.lease().holder();
        a.attempts[i] = Long.toString(c.lease().attempt());
        a.places[i] = Integer.toString(order.get(a.ids[i]));
        a.payloads[i] = JSON.to(new Event.Completed(c.handoff()).payload());
        a.handoffs[i] = c.handoff();
      }
      return a;
    }
  }

  private List<Lease> completeIn(Tx tx, DSLContext ctx, List<Completion> completions) {
    // one completion per task: a second one of the same task is refused, as complete would
    List<Lease> lost = new ArrayList<>();
    Map<String, Integer> order = new HashMap<>();
    List<Completion> distinct = new ArrayList<>(completions.size());
    for (Completion c : completions) {
      if (order.putIfAbsent(c.lease().taskId(), distinct.size()) == null) {
        distinct.add(c);
      } else {
        lost.add(c.lease());
      }
    }
    // sorted by id, the order the rows are locked in (two batches cannot deadlock); each carries
    // its place in the given order, the order of the events
    List<Completion> byId = new ArrayList<>(distinct);
    byId.sort(java.util.Comparator.comparing(c -> c.lease().taskId()));
    int n = byId.size();
    String[] ids = new String[n];
    String[] holders = new String[n];
    String[] attempts = new String[n];
    String[] places = new String[n];
    String[] payloads = new String[n];
    String[] handoffs = new String[n];
    for (int i = 0; i < n; i++) {
      Completion c = byId.get(i);
      ids[i] = c.lease().taskId();
      holders[i] = c.lease().holder();
      attempts[i] = Long.toString(c.lease().attempt());
      places[i] = Integer.toString(order.get(ids[i]));
      payloads[i] = JSON.to(new Event.Completed(c.handoff()).payload());
      handoffs[i] = c.handoff();
    }
    java.util.Set<String> done = new java.util.HashSet<>();
    if (engine.citus()) {
      // Citus cannot run the one statement (CitusCompletion says why); it keeps the routes too
      CitusCompletion.complete(ctx, distinct, engine.now(), false).values().stream()
          .filter(CitusCompletion.Locked::done)
          .forEach(l -> done.add(l.id()));
    } else {
      for (Record r :
          statement(ctx)
              .fetch(ctx, DONE, engine.now(), ids, holders, attempts, places, payloads, handoffs)) {
        done.add(r.get(TASKS.ID));
      }
    }
    for (Completion c : distinct) {
      if (!done.contains(c.lease().taskId())) {
        lost.add(c.lease());
      }
    }
    // the routes' completed and the dependents' blocked flags: the triggers (domain V8, directory
    // V5), in this statement's transaction (on Citus, CitusCompletion)
    return lost;
  }

  private static final Slot<Instant> AT = Slot.of("at", EVENTS.AT.getDataType());
  private static final Slot<String[]> IDS = textArray("ids");
  private static final Slot<String[]> HOLDERS = textArray("holders");
  private static final Slot<String[]> ATTEMPTS = textArray("attempts");
  private static final Slot<String[]> PLACES = textArray("places");
  private static final Slot<String[]> PAYLOADS = textArray("payloads");
  private static final Slot<String[]> HANDOFFS = textArray("handoffs");
  private static final Field<?>[] DONE = {TASKS.ID};
  private static final Field<String> DONE_ID = DSL.field(DSL.name("done_id"), String.class);
  private static final Field<?>[] AVAILABLE = {
    TASKS.ID, TASKS.STATUS, TASKS.HOLDER, TASKS.ATTEMPTS, DONE_ID
  };

  private static Slot<String[]> textArray(String name) {
    return Slot.of(name, SQLDataType.CLOB.getArrayDataType());
  }

  /**
   * The completion of a batch, one statement: lock the batch's rows in id order, complete those
   * whose lease is current (the fence: claimed, same holder, same attempt), append a {@code
   * completed} event to each of them in the given order, and return their ids.
   */
  private RenderedStatement statement(DSLContext ctx) {
    return engine
        .statements()
        .get(
            ctx,
            "complete all",
            () -> {
              Field<String> uId = DSL.field(DSL.name("u", "id"), String.class);
              Tasks l = TASKS.as("l");
              // every row of the batch locked in id order, as it is now (a fresh version after a
              // concurrent change commits): the fence is checked on these values, which no one
              // else can change until this transaction ends
              CommonTableExpression<Record4<String, String, String, Long>> locked =
                  DSL.name("locked")
                      .asMaterialized(
                          DSL.select(l.ID, l.STATUS, l.HOLDER, l.ATTEMPTS)
                              .from(l)
                              .where(l.ID.eq(DSL.any(IDS.field())))
                              .orderBy(l.ID)
                              .forUpdate()
                              .of(l));
              CommonTableExpression<Record> input = input();
              CommonTableExpression<Record1<String>> completed = completed(locked, l, input);
              Field<String> doneId = completed.field(TASKS.ID);
              CommonTableExpression<Record1<Long>> logged = logged(completed, input);
              return DSL.with(locked)
                  .with(input)
                  .with(completed)
                  .with(logged)
                  .select(doneId.as(TASKS.ID.getName()))
                  .from(completed);
            },
            List.of(AT, IDS, HOLDERS, ATTEMPTS, PLACES, PAYLOADS, HANDOFFS));
  }

  /**
   * The completion of a batch without waiting, one statement: lock the batch's route rows
   * (directory {@code ledger_tasks}, which the completion's trigger updates) and then its task
   * rows, in id order, skipping every row another transaction holds; complete the locked tasks
   * whose lease is current, append their {@code completed} events in the given order, and return
   * every locked row as it was locked, with the id of those completed now ({@code done_id}, else
   * null). With {@code self} (a completion that commits itself) a lead statement sets the implicit
   * transaction's bounds first ({@link ClaimSql#boundsLead}), and the last two slots are its {@code
   * lock_timeout} and {@code statement_timeout}.
   */
  private RenderedStatement availableStatement(DSLContext ctx, boolean self) {
    return engine
        .statements()
        .get(
            ctx,
            self ? "complete available, committing itself" : "complete available",
            () -> self ? List.of(ClaimSql.boundsLead()) : List.<org.jooq.Query>of(),
            () -> {
              Tasks l = TASKS.as("l");
              LedgerTasks r = LEDGER_TASKS.as("r");
              LedgerTasks anyRoute = LEDGER_TASKS.as("any_route");
              // the routes first: a route held by another transaction would make the trigger wait
              CommonTableExpression<Record1<String>> routes =
                  DSL.name("routes")
                      .asMaterialized(
                          DSL.select(r.ID)
                              .from(r)
                              .where(r.ID.eq(DSL.any(IDS.field())))
                              .orderBy(r.ID)
                              .forUpdate()
                              .of(r)
                              .skipLocked());
              Field<String> routeId = routes.field(r.ID.getName(), String.class);
              // then the task rows whose route is ours (or that have none, written by a stack
              // without routes), as they are now; the fence is checked on these values
              CommonTableExpression<Record4<String, String, String, Long>> locked =
                  DSL.name("locked")
                      .asMaterialized(
                          DSL.select(l.ID, l.STATUS, l.HOLDER, l.ATTEMPTS)
                              .from(l)
                              .where(l.ID.eq(DSL.any(IDS.field())))
                              .and(
                                  l.ID
                                      .in(DSL.select(routeId).from(routes))
                                      .or(
                                          DSL.notExists(
                                              DSL.selectOne()
                                                  .from(anyRoute)
                                                  .where(anyRoute.ID.eq(l.ID)))))
                              .orderBy(l.ID)
                              .forUpdate()
                              .of(l)
                              .skipLocked());
              CommonTableExpression<Record> input = input();
              Field<String> lockedId = locked.field(l.ID.getName(), String.class);
              CommonTableExpression<Record1<String>> completed = completed(locked, l, input);
              Field<String> doneId = completed.field(TASKS.ID);
              CommonTableExpression<Record1<Long>> logged = logged(completed, input);
              return DSL.with(routes)
                  .with(locked)
                  .with(input)
                  .with(completed)
                  .with(logged)
                  .select(
                      lockedId.as(TASKS.ID.getName()),
                      locked.field(l.STATUS.getName(), String.class).as(TASKS.STATUS.getName()),
                      locked.field(l.HOLDER.getName(), String.class).as(TASKS.HOLDER.getName()),
                      locked.field(l.ATTEMPTS.getName(), Long.class).as(TASKS.ATTEMPTS.getName()),
                      doneId.as(DONE_ID.getName()))
                  .from(locked)
                  .leftJoin(completed)
                  .on(doneId.eq(lockedId));
            },
            self
                ? List.of(
                    AT,
                    IDS,
                    HOLDERS,
                    ATTEMPTS,
                    PLACES,
                    PAYLOADS,
                    HANDOFFS,
                    ClaimSql.LOCK_TIMEOUT,
                    ClaimSql.STATEMENT_TIMEOUT)
                : List.of(AT, IDS, HOLDERS, ATTEMPTS, PLACES, PAYLOADS, HANDOFFS));
  }

  /** Checks a batch before anything is read or written: the domain, each lease and handoff. */
  private static void checkBatch(String domain, List<Completion> completions) {
    Validation.domain(domain);
    if (completions == null) {
      throw new InvalidInputException("completions", "must not be null");
    }
    for (Completion c : completions) {
      if (c == null || c.lease() == null) {
        throw new InvalidInputException("lease", "must not be null");
      }
      Validation.text("handoff", c.handoff(), Validation.MAX_BODY);
    }
  }

  /** The batch's rows as the arrays bind them: {@code input(id, holder, attempt, place, ...)}. */
  private static CommonTableExpression<Record> input() {
    Table<?> u =
        DSL.table(
                "unnest({0}, {1}, {2}, {3}, {4}, {5})",
                IDS.field(),
                HOLDERS.field(),
                ATTEMPTS.field(),
                PLACES.field(),
                PAYLOADS.field(),
                HANDOFFS.field())
            .as("u", "id", "holder", "attempt", "place", "payload", "handoff");
    return DSL.name("input").as(DSL.select(DSL.asterisk()).from(u));
  }

  /**
   * The fenced completion of the locked rows whose lease is the input's: status, handoff and lease
   * end, returning the completed ids. Shared by both statements, so the fence is written once.
   */
  private static CommonTableExpression<Record1<String>> completed(
      CommonTableExpression<Record4<String, String, String, Long>> locked,
      Tasks l,
      CommonTableExpression<Record> input) {
    Field<String> lockedId = locked.field(l.ID.getName(), String.class);
    Field<String> inputId = DSL.field(DSL.name("input", "id"), String.class);
    return DSL.name("completed")
        .as(
            DSL.update(TASKS)
                .set(TASKS.STATUS, DSL.inline(Status.COMPLETED.wire()))
                .set(TASKS.HANDOFF, DSL.field(DSL.name("input", "handoff"), String.class))
                .set(TASKS.LEASE_UNTIL, DSL.inline((Instant) null, TASKS.LEASE_UNTIL.getDataType()))
                .from(locked.join(input).on(inputId.eq(lockedId)))
                .where(TASKS.ID.eq(lockedId))
                .and(
                    locked
                        .field(l.STATUS.getName(), String.class)
                        .eq(DSL.inline(Status.CLAIMED.wire())))
                .and(
                    locked
                        .field(l.HOLDER.getName(), String.class)
                        .eq(DSL.field(DSL.name("input", "holder"), String.class)))
                .and(
                    locked
                        .field(l.ATTEMPTS.getName(), Long.class)
                        .eq(
                            DSL.field(DSL.name("input", "attempt"), String.class)
                                .cast(SQLDataType.BIGINT)))
                .returningResult(TASKS.ID));
  }

  /** The {@code completed} events of the completed rows, appended in the input's order. */
  private static CommonTableExpression<Record1<Long>> logged(
      CommonTableExpression<Record1<String>> completed, CommonTableExpression<Record> input) {
    Field<String> doneId = completed.field(TASKS.ID);
    Field<String> inputId = DSL.field(DSL.name("input", "id"), String.class);
    return DSL.name("logged")
        .as(
            DSL.insertInto(EVENTS, EVENTS.TASK_ID, EVENTS.KIND, EVENTS.AT, EVENTS.PAYLOAD)
                .select(
                    DSL.select(
                            doneId,
                            DSL.inline(EventKind.COMPLETED.wire()),
                            AT.field(),
                            DSL.field(DSL.name("input", "payload"), EVENTS.PAYLOAD.getDataType()))
                        .from(completed)
                        .join(input)
                        .on(inputId.eq(doneId))
                        .orderBy(
                            DSL.field(DSL.name("input", "place"), String.class)
                                .cast(SQLDataType.INTEGER)))
                .returningResult(EVENTS.SEQ));
  }
}

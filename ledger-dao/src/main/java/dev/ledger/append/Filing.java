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
import dev.ledger.kernel.RenderedStatement;
import dev.ledger.kernel.RenderedStatement.Slot;
import dev.ledger.kernel.Tx;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

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
    return fileRow(tx, spec, false).id();
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
    // delayed: it stays proposed until a worker pool of its domain admits it at its time
    boolean delayed = spec.notBefore() != null && spec.notBefore().isAfter(engine.now());
    Filed filed = fileRow(tx, spec, !delayed);
    if (filed.row() == null) {
      transitions.admitIfProposed(tx, filed.id());
    } else if (!delayed && !filed.admitted()) {
      log.applyToRow(tx, filed.ctx(), filed.row(), engine.now(), new Event.Admitted());
    }
    return filed.id();
  }

  /**
   * A filing's outcome: the id, the new row (null when the upstream event was filed before), and
   * whether the row was written admitted already.
   */
  private record Filed(String id, TasksRecord row, DSLContext ctx, boolean admitted) {}

  /**
   * Files the task: the locks (and the upstream event's lookup) in one statement, then, unless the
   * upstream event was filed before, the row, its events and its route in one more ({@link
   * EventLog#insertFiled}; issue 26, B13). In a transaction of the ledger's own whose bounds are
   * still pending ({@link Tx#boundsPending()}), they are set by the first statement when nothing
   * runs before it (no dependency to check, the domain's route cached), else first on their own.
   *
   * <p>In a transaction of the ledger's own not begun yet ({@link Tx#canCommitItself()}), a filing
   * with no dependency into a domain whose route is cached, outside Citus, is that one statement,
   * committing itself in its one round trip ({@link Tx#commitItself}): the server commits before it
   * answers, and the ledger sends no commit. When it wrote nothing (the upstream event's task was
   * found, or a concurrent filing of it took the unique key), what follows (the lookup, admitting
   * the first task) runs in a transaction as before.
   *
   * @param admit write the task admitted (its {@code admitted} event too) when the one-statement
   *     write applies; the caller admits it otherwise ({@link Filed#admitted()})
   */
  private Filed fileRow(Tx tx, TaskSpec spec, boolean admit) {
    Validation.spec(spec);
    boolean cached = engine.directory().cached(spec.domain());
    boolean oneStatement =
        !engine.citus() && (spec.upstreamEvent() == null || spec.dependsOn().isEmpty());
    boolean self = tx.canCommitItself() && oneStatement && spec.dependsOn().isEmpty() && cached;
    if (!self) {
      // the transaction begins with the filing's first statement, its bounds folded into it
      tx.beginFoldingBounds();
    }
    boolean fold = tx.boundsPending() && spec.dependsOn().isEmpty() && cached;
    if (!fold) {
      tx.applyBounds();
    }
    // before the domain's schema is made: a refused filing writes nothing at all. Tasks are
    // never deleted, so a dependency seen here still exists at commit.
    checkDependencies(tx.directory(), spec.dependsOn());
    String schema = engine.schemaForWrite(tx, spec.domain());
    DSLContext ctx = tx.forSchema(schema);
    // the domain's lock, held to commit: shared, so filings into the domain run side by side, while
    // a replay, a scrub or the reference stack (exclusive) finishes first and never meets a task
    // filed after it began; and the upstream event's own key exclusive, so a concurrent filing of
    // the same upstream event waits for this one's commit and then finds its task (issue 26)
    String id = engine.newId();
    if (oneStatement) {
      // the locks, the lookup and the writes in one statement: one round trip (issue 26, B13)
      Instant now = engine.now();
      Instant admitted = admit ? engine.now() : null;
      EventLog.Filed filed;
      if (self && tx.canCommitItself()) {
        filed =
            tx.commitItself(
                schema,
                (own, bounds) -> log.insertFiled(own, id, now, admitted, spec, lead(spec, bounds)));
        if (filed.row() == null) {
          // the statement wrote no task (its insert met the upstream event's task; an empty claim
          // class the row's BEFORE INSERT trigger made stays, as it would in a transaction): the
          // lookup and the admission of the first task may run in a transaction
          tx.committedNothing();
        }
      } else {
        filed =
            log.insertFiled(
                ctx, id, now, admitted, spec, lead(spec, fold ? tx.takeBounds() : null));
      }
      if (filed.existing() != null) {
        return new Filed(filed.existing(), null, ctx, false);
      }
      if (filed.row() != null) {
        return new Filed(id, filed.row(), ctx, admit);
      }
      // the unique key tasks_origin: a filing of the same upstream event that committed while
      // this one waited for its key (after the statement's snapshot), or a batch's; read
      // committed, this statement sees it
      Optional<String> won = findOrigin(ctx, spec.origin(), spec.upstreamEvent());
      if (won.isPresent()) {
        return new Filed(won.get(), null, ctx, false);
      }
      throw new IllegalStateException(
          "filing "
              + spec.origin()
              + " "
              + spec.upstreamEvent()
              + ": its unique key is taken but no task of the upstream event is visible");
    }
    EventLog.Lead lead = lead(spec, fold ? tx.takeBounds() : null);
    Optional<String> first = lockAndFindOrigin(ctx, lead);
    if (first.isPresent()) {
      return new Filed(first.get(), null, ctx, false);
    }
    if (spec.upstreamEvent() == null) {
      return new Filed(id, insert(ctx, id, spec), ctx, false);
    }
    try {
      return new Filed(id, tx.savepoint(() -> insert(ctx, id, spec)), ctx, false);
    } catch (DataAccessException e) {
      // a concurrent filing of the same upstream event won the unique key tasks_origin; the
      // savepoint keeps the transaction (the ledger's or a caller's) usable
      if ("23505".equals(e.sqlState())) {
        Optional<String> won = findOrigin(ctx, spec.origin(), spec.upstreamEvent());
        if (won.isPresent()) {
          return new Filed(won.get(), null, ctx, false);
        }
      }
      throw e;
    }
  }

  /**
   * The statement's part that takes the filing's locks and looks the upstream event up when the
   * spec has one; with {@code bounds}, the transaction's lock and statement bounds are set first.
   * It runs at the head of the filing's one write ({@link EventLog#insertFiled}), or on its own
   * ({@link #lockAndFindOrigin}) before the older path's writes. The lookup's snapshot is the
   * statement's, taken before a wait for the upstream event's key: a filing of the same event that
   * committed during that wait is not seen, and its unique key {@code tasks_origin} then sends the
   * insert to the path that looks again.
   *
   * @param bounds {@link Tx#takeBounds()}, or null when they are set already (or not the ledger's)
   */
  private static EventLog.Lead lead(TaskSpec spec, String[] bounds) {
    boolean upstream = spec.upstreamEvent() != null;
    String name =
        "filing locks" + (bounds != null ? " and bounds" : "") + (upstream ? " and origin" : "");
    List<Slot<?>> slots = new ArrayList<>(5);
    List<Object> values = new ArrayList<>(5);
    if (bounds != null) {
      slots.add(LOCK_TIMEOUT);
      values.add(bounds[0]);
      slots.add(STATEMENT_TIMEOUT);
      values.add(bounds[1]);
    }
    slots.add(DOMAIN);
    values.add(spec.domain());
    if (upstream) {
      slots.add(ORIGIN);
      values.add(spec.origin());
      slots.add(UPSTREAM);
      values.add(spec.upstreamEvent());
    }
    return new EventLog.Lead(
        name, List.copyOf(slots), values, () -> leadFields(bounds != null, upstream), upstream);
  }

  private static List<Field<?>> leadFields(boolean bounds, boolean upstream) {
    List<Field<?>> select = new ArrayList<>(5);
    if (bounds) {
      select.add(setConfig("lock_timeout", LOCK_TIMEOUT));
      select.add(setConfig("statement_timeout", STATEMENT_TIMEOUT));
    }
    select.addAll(
        DomainLock.filingLocks(
            DOMAIN.field(), upstream ? ORIGIN.field() : null, upstream ? UPSTREAM.field() : null));
    if (upstream) {
      select.add(
          DSL.field(
              DSL.select(TASKS.ID)
                  .from(TASKS)
                  .where(TASKS.ORIGIN.eq(ORIGIN.field()))
                  .and(TASKS.UPSTREAM_EVENT.eq(UPSTREAM.field()))));
    }
    return select;
  }

  /**
   * Runs {@code lead} as a statement of its own, in one round trip: the older path's (Citus, a
   * filing with dependencies and an upstream event). Rendered once per schema and shape ({@link
   * RenderedStatement}).
   *
   * @return the upstream event's task, when the lead looks it up and finds one
   */
  private Optional<String> lockAndFindOrigin(DSLContext ctx, EventLog.Lead lead) {
    List<Field<?>> select = lead.select().get();
    Field<?>[] read = new Field<?>[select.size()];
    for (int i = 0; i < read.length; i++) {
      read[i] = DSL.field(DSL.name("c" + i), SQLDataType.VARCHAR);
    }
    org.jooq.Record r =
        engine
            .statements()
            .get(ctx, lead.name(), () -> DSL.select(select), lead.slots())
            .fetch(ctx, read, lead.values().toArray())
            .get(0);
    return lead.lookup() ? Optional.ofNullable((String) r.get(read.length - 1)) : Optional.empty();
  }

  private static Field<String> setConfig(String setting, Slot<String> value) {
    return setConfig(setting, value.field());
  }

  /**
   * {@code set_config(setting, value, true)}: a setting for the transaction alone.
   *
   * @param setting the setting's name, e.g. {@code lock_timeout}
   * @param value its value, e.g. {@code 5000ms}
   * @return the field, returning the value set
   */
  static Field<String> setConfig(String setting, Field<String> value) {
    return DSL.function("set_config", String.class, DSL.inline(setting), value, DSL.inline(true));
  }

  private static final Slot<String> LOCK_TIMEOUT = Slot.of("lock_timeout", SQLDataType.VARCHAR);
  private static final Slot<String> STATEMENT_TIMEOUT =
      Slot.of("statement_timeout", SQLDataType.VARCHAR);
  private static final Slot<String> DOMAIN = Slot.of("domain", TASKS.DOMAIN.getDataType());
  private static final Slot<String> ORIGIN = Slot.of("origin", TASKS.ORIGIN.getDataType());
  private static final Slot<String> UPSTREAM =
      Slot.of("upstream event", TASKS.UPSTREAM_EVENT.getDataType());

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

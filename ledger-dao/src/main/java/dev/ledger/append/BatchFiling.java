package dev.ledger.append;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.InvalidInputException;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.Validation;
import dev.ledger.codegen.convert.JsonConverter;
import dev.ledger.codegen.convert.StringListConverter;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.event.Event;
import dev.ledger.event.Projection;
import dev.ledger.kernel.DomainLock;
import dev.ledger.kernel.Engine;
import dev.ledger.kernel.Tx;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Table;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * Filing and admitting many tasks of one domain in one call and one transaction ({@link
 * dev.ledger.Ledger#fileAll}): the events and rows {@link dev.ledger.Ledger#file} and {@link
 * dev.ledger.Ledger#admit} write for each, appended set-wise (one {@code INSERT} of every event
 * over {@code unnest}, multi-row inserts of the rows and routes; claim classes, edges and blocked
 * flags by the trigger on tasks) instead of several round trips per task. Takes the domain's lock
 * shared until the transaction ends, as a single filing does (issue 26). Idempotent on origin as
 * {@code file} is: a spec whose origin and upstream event were filed before (or earlier in the same
 * batch) gets the first task's id and writes nothing.
 */
public final class BatchFiling {

  /** Most specs one call takes. */
  static final int MAX_BATCH = 5000;

  /** Attempts of a batch whose upstream events concurrent filings keep winning. */
  private static final int ORIGIN_ATTEMPTS = 4;

  private static final JsonConverter JSON = new JsonConverter();
  private static final StringListConverter LIST = new StringListConverter();

  private final Engine engine;

  /**
   * Creates the operation.
   *
   * @param engine the ledger's shared state
   */
  public BatchFiling(Engine engine) {
    this.engine = engine;
  }

  /**
   * Files and admits a batch of one domain in {@code tx} (see {@code Ledger.fileAll}).
   *
   * @param tx the operation's transaction context
   * @param specs 1 to {@value #MAX_BATCH} specs of one domain
   * @return the ids, in the order of {@code specs}
   * @throws InvalidInputException naming the first invalid field
   */
  public List<String> fileAll(Tx tx, List<TaskSpec> specs) {
    if (specs == null || specs.isEmpty() || specs.size() > MAX_BATCH) {
      throw new InvalidInputException(
          "specs",
          "must hold 1 to " + MAX_BATCH + " specs, was " + (specs == null ? 0 : specs.size()));
    }
    String domain = specs.get(0) == null ? null : specs.get(0).domain();
    Set<String> deps = new LinkedHashSet<>();
    for (TaskSpec s : specs) {
      Validation.spec(s);
      if (!s.domain().equals(domain)) {
        throw new InvalidInputException(
            "domain",
            "a batch files into one domain; '" + domain + "' and '" + s.domain() + "' differ");
      }
      deps.addAll(s.dependsOn());
    }
    // one statement (issue 26, B12) unless a spec with dependencies has an upstream event (a
    // losing insert would leave its dependency edges behind: the savepoint path), or on Citus
    boolean oneStatement =
        !engine.citus()
            && specs.stream().noneMatch(s -> s.upstreamEvent() != null && !s.dependsOn().isEmpty());
    boolean cached = engine.directory().cached(domain);
    // in a transaction of the ledger's own not begun yet: the one statement commits itself
    boolean self = oneStatement && tx.canCommitItself() && deps.isEmpty() && cached;
    if (!self) {
      tx.beginFoldingBounds();
    }
    boolean fold = oneStatement && tx.boundsPending() && deps.isEmpty() && cached;
    if (!fold) {
      tx.applyBounds();
    }
    checkDependencies(tx.directory(), deps);
    String schema = engine.schemaForWrite(tx, domain);
    DSLContext ctx = tx.forSchema(schema);
    if (oneStatement) {
      return fileInOne(tx, schema, domain, specs, fold ? tx.takeBounds() : null, self);
    }
    // the domain's lock shared, as every filing takes it, held to commit (a replay, a scrub and the
    // reference stack wait for it). No origin keys: a batch's thousands would fill PostgreSQL's
    // lock table; a concurrent filing of one of its upstream events meets the unique key instead
    DomainLock.lockShared(ctx, domain);
    for (int attempt = 1; ; attempt++) {
      try {
        return tx.savepoint(() -> fileIn(ctx, specs));
      } catch (DataAccessException e) {
        // a concurrent filing of one of the upstream events won (the insert waited for its commit):
        // again, finding it. Filings run concurrently, so another may win the next attempt too;
        // each attempt finds every winner committed before it, so a few suffice
        if (!"23505".equals(e.sqlState()) || attempt == ORIGIN_ATTEMPTS) {
          throw e;
        }
      }
    }
  }

  /** A batch's new rows and their events, in the batch's order, as {@link #prepare} makes them. */
  private record Prepared(
      List<String> ids,
      List<TasksRecord> rows,
      List<String> eventTasks,
      List<String> eventKinds,
      List<String> eventPayloads) {}

  /**
   * The batch in one statement (issue 26, B12): the domain's lock shared (and, with {@code bounds},
   * the transaction's bounds first), then the rows ({@code INSERT ... SELECT} over {@code unnest},
   * {@code ON CONFLICT DO NOTHING RETURNING id}), the events of the rows inserted (in the batch's
   * order) and their routes, as one data-modifying statement whose insert reads the lock's part (so
   * the lock is held before anything is written). No lookup first: a spec whose upstream event was
   * filed before (committed, or committing while this statement waits for it) meets the unique key
   * {@code tasks_origin} and writes nothing, and a second statement, only then, finds those tasks'
   * ids. The commonest batch, every event new, costs one round trip.
   *
   * <p>With {@code self} (a transaction of the ledger's own not begun yet, {@link
   * Tx#canCommitItself()}) the statement commits itself in that round trip, the bounds in its
   * select list, and the ledger sends no commit; the second statement, when needed, then reads on
   * its own, in autocommit mode too.
   *
   * @param bounds {@link Tx#takeBounds()}, or null
   * @param self whether the statement may commit itself
   */
  private List<String> fileInOne(
      Tx tx, String schema, String domain, List<TaskSpec> specs, String[] bounds, boolean self) {
    Instant now = engine.now();
    Prepared p = prepare(specs, now, new HashMap<>());
    boolean committing = self && tx.canCommitItself();
    List<String> inserted =
        committing
            ? tx.commitItself(schema, (own, b) -> insertInOne(own, domain, p, now, b))
            : insertInOne(tx.forSchema(schema), domain, p, now, bounds);
    if (inserted.size() == p.rows().size()) {
      return p.ids();
    }
    // some upstream events were filed before, or by a filing that committed while this statement
    // waited for it: their rows met the unique key tasks_origin and wrote nothing. Read committed,
    // this statement sees those tasks
    java.util.Set<String> written = new java.util.HashSet<>(inserted);
    Map<String, String> winners = new HashMap<>();
    Map<String, String> lostIds = new HashMap<>();
    List<TaskSpec> lost = new ArrayList<>();
    for (int i = 0; i < specs.size(); i++) {
      TaskSpec s = specs.get(i);
      String id = p.ids().get(i);
      if (!written.contains(id) && lostIds.put(id, key(s)) == null) {
        if (s.upstreamEvent() == null) {
          throw new IllegalStateException("filing task " + id + " wrote no row");
        }
        lost.add(s);
      }
    }
    if (!committing) {
      findOrigins(tx.forSchema(schema), lost, winners);
    } else {
      if (inserted.isEmpty()) {
        // the statement wrote nothing: a failure of the lookup is no unknown outcome
        tx.committedNothing();
      }
      // a read of its own, in autocommit mode as the statement ran (when rows of the batch are
      // committed, a failure of it is reported as an unknown outcome: refiling the batch is safe,
      // as its lost specs have upstream events). Bounded by the socket timeout; it waits for no
      // lock
      tx.commitItself(
          schema,
          (own, b) -> {
            findOrigins(own, lost, winners);
            return winners;
          });
    }
    List<String> ids = new ArrayList<>(specs.size());
    for (String id : p.ids()) {
      String k = lostIds.get(id);
      if (k == null) {
        ids.add(id);
        continue;
      }
      String winner = winners.get(k);
      if (winner == null) {
        throw new IllegalStateException(
            "filing task "
                + id
                + ": its unique key is taken but no task of its upstream event is"
                + " visible");
      }
      ids.add(winner);
    }
    return ids;
  }

  /**
   * The batch's one statement ({@link #fileInOne}) on {@code ctx}: the ids of the rows it inserted.
   *
   * @param bounds the transaction's bounds to set first, or null
   */
  private List<String> insertInOne(
      DSLContext ctx, String domain, Prepared p, Instant now, String[] bounds) {
    List<Field<?>> lead = new ArrayList<>(3);
    if (bounds != null) {
      lead.add(Filing.setConfig("lock_timeout", DSL.val(bounds[0])));
      lead.add(Filing.setConfig("statement_timeout", DSL.val(bounds[1])));
    }
    lead.addAll(DomainLock.filingLocks(DSL.val(domain), null, null));
    Field<?>[] aliased = new Field<?>[lead.size()];
    for (int i = 0; i < aliased.length; i++) {
      aliased[i] = lead.get(i).as("c" + i);
    }
    Field<String> t = DSL.field(DSL.name("t", TASKS.ID.getName()), String.class);
    Table<?> events = events(p, "v");
    return ctx.resultQuery(
            "with l as materialized ({0}),"
                + " t as ({1} returning {2}),"
                + " e as ({3}),"
                + " r as ({4})"
                + " select {5} from t",
            DSL.select(aliased),
            rowsInsert(p.rows(), DSL.table(DSL.name("l"))).onConflictDoNothing(),
            DSL.name(TASKS.ID.getName()),
            DSL.insertInto(EVENTS, EVENTS.TASK_ID, EVENTS.KIND, EVENTS.AT, EVENTS.PAYLOAD)
                .select(
                    eventsSelect("v", now)
                        .from(events)
                        .join(DSL.table(DSL.name("t")))
                        .on(t.eq(DSL.field(DSL.name("v", "task_id"), String.class)))
                        .orderBy(DSL.field(DSL.name("v", "n")))),
            DSL.insertInto(
                    LEDGER_TASKS, LEDGER_TASKS.ID, LEDGER_TASKS.DOMAIN, LEDGER_TASKS.COMPLETED)
                .select(
                    DSL.select(
                            t,
                            DSL.val(domain, LEDGER_TASKS.DOMAIN),
                            DSL.inline(false, LEDGER_TASKS.COMPLETED))
                        .from(DSL.table(DSL.name("t")))),
            t)
        .fetch(0, String.class);
  }

  private List<String> fileIn(DSLContext ctx, List<TaskSpec> specs) {
    Instant now = engine.now();
    Map<String, String> byOrigin = new HashMap<>();
    findOrigins(ctx, specs.stream().filter(s -> s.upstreamEvent() != null).toList(), byOrigin);
    Prepared p = prepare(specs, now, byOrigin);
    List<String> ids = p.ids();
    List<TasksRecord> rows = p.rows();
    List<String> eventTasks = p.eventTasks();
    if (rows.isEmpty()) {
      return ids;
    }
    Table<?> u = events(p, "u");
    int events =
        ctx.insertInto(EVENTS, EVENTS.TASK_ID, EVENTS.KIND, EVENTS.AT, EVENTS.PAYLOAD)
            .select(eventsSelect("u", now).from(u).orderBy(DSL.field(DSL.name("u", "n"))))
            .execute();
    if (events != eventTasks.size()) {
      throw new IllegalStateException(
          "filing "
              + rows.size()
              + " tasks wrote "
              + events
              + " of "
              + eventTasks.size()
              + " events");
    }
    insertRows(ctx, rows);
    // the routes: one row per task, not completed
    String domain = rows.get(0).getDomain();
    Field<String[]> idArray = texts(rows.stream().map(TasksRecord::getId).toList());
    Table<?> r = DSL.table("unnest({0})", idArray).as("r", "id");
    ctx.insertInto(LEDGER_TASKS, LEDGER_TASKS.ID, LEDGER_TASKS.DOMAIN, LEDGER_TASKS.COMPLETED)
        .select(
            DSL.select(
                    DSL.field(DSL.name("r", "id"), String.class),
                    DSL.val(domain, LEDGER_TASKS.DOMAIN),
                    DSL.inline(false, LEDGER_TASKS.COMPLETED))
                .from(r))
        .execute();
    if (engine.citus()) {
      // the trigger of domain V8 finds no directory on a Citus worker: edges and flags here
      for (TasksRecord row : rows) {
        dev.ledger.kernel.CitusDirectory.filed(ctx, row.getId(), row.getDependsOn());
        // domain V7's wake-up, from the coordinator
        dev.ledger.kernel.CitusDirectory.wake(
            ctx, domain, Status.parse(row.getStatus()), row.getNotBefore() != null);
      }
    }
    return ids;
  }

  /**
   * Adds to {@code byOrigin} ({@link #key} to id) the tasks filed from the specs' (origin, upstream
   * event) pairs: the pairs bound as two arrays, looked up in {@code tasks_origin} by a lateral
   * subquery, so the plan is one index probe per pair whatever the table's statistics say (a
   * disjunction of the pairs was planned as a filter over every task of the origin, its cost
   * growing with the origin's tasks times the batch).
   *
   * @param keyed specs that have an upstream event; nothing is read when empty
   */
  private static void findOrigins(
      DSLContext ctx, List<TaskSpec> keyed, Map<String, String> byOrigin) {
    if (keyed.isEmpty()) {
      return;
    }
    Field<String> origin = DSL.field(DSL.name("k", "origin"), String.class);
    Field<String> upstream = DSL.field(DSL.name("k", "upstream_event"), String.class);
    Table<?> k =
        DSL.table(
                "unnest({0}, {1})",
                texts(keyed.stream().map(TaskSpec::origin).toList()),
                texts(keyed.stream().map(TaskSpec::upstreamEvent).toList()))
            .as("k", "origin", "upstream_event");
    Table<?> found =
        DSL.lateral(
                DSL.select(TASKS.ID)
                    .from(TASKS)
                    .where(TASKS.ORIGIN.eq(origin))
                    .and(TASKS.UPSTREAM_EVENT.eq(upstream))
                    // the predicate of the partial index tasks_origin, stated so the planner may
                    // use it
                    .and(TASKS.ORIGIN.isNotNull())
                    .and(TASKS.UPSTREAM_EVENT.isNotNull())
                    // at most one row (the index is unique); the limit also keeps the planner
                    // from flattening the subquery into a join it may plan as a sort of the table
                    .limit(1))
            .as("f");
    Field<String> foundId = found.field(TASKS.ID.getName(), String.class);
    ctx.select(origin, upstream, foundId)
        .from(k)
        .crossJoin(found)
        .fetch()
        .forEach(r -> byOrigin.put(key(r.value1(), r.value2()), r.value3()));
  }

  /**
   * The batch's ids, and the rows and events of its new tasks: a spec whose pair is in {@code
   * byOrigin} (filed before, or earlier in the batch) gets that id and writes nothing; every other
   * spec a new id, its {@code created} event and, unless it waits for a time, its {@code admitted}
   * event, its row born admitted. Its claim class, dependency edges and blocked flag are the
   * triggers' on {@code tasks} (domain V8, V12).
   *
   * @param byOrigin pairs filed before; the batch's new pairs are added
   */
  private Prepared prepare(List<TaskSpec> specs, Instant now, Map<String, String> byOrigin) {
    List<String> ids = new ArrayList<>(specs.size());
    List<TasksRecord> rows = new ArrayList<>(specs.size());
    List<String> eventTasks = new ArrayList<>(2 * specs.size());
    List<String> eventKinds = new ArrayList<>(2 * specs.size());
    List<String> eventPayloads = new ArrayList<>(2 * specs.size());
    for (TaskSpec s : specs) {
      String k = key(s);
      if (k != null && byOrigin.containsKey(k)) {
        ids.add(byOrigin.get(k));
        continue;
      }
      String id = engine.newId();
      if (k != null) {
        byOrigin.put(k, id);
      }
      ids.add(id);
      Event.Created created = new Event.Created(id, s);
      eventTasks.add(id);
      eventKinds.add(created.kind().wire());
      eventPayloads.add(JSON.to(created.payload()));
      TasksRecord row = Projection.created(id, now, s);
      boolean delayed = s.notBefore() != null && s.notBefore().isAfter(now);
      if (!delayed) {
        Event.Admitted admitted = new Event.Admitted();
        eventTasks.add(id);
        eventKinds.add(admitted.kind().wire());
        eventPayloads.add(JSON.to(admitted.payload()));
        Projection.apply(row, admitted);
      }
      rows.add(row);
    }
    return new Prepared(ids, rows, eventTasks, eventKinds, eventPayloads);
  }

  /** The batch's events as a table {@code alias(task_id, kind, payload, n)}, in order. */
  private static Table<?> events(Prepared p, String alias) {
    return DSL.table(
            "unnest({0}, {1}, {2}) with ordinality",
            texts(p.eventTasks()), texts(p.eventKinds()), texts(p.eventPayloads()))
        .as(alias, "task_id", "kind", "payload", "n");
  }

  /** What an event's insert selects from {@link #events}: task, kind, the time, the payload. */
  private static org.jooq.SelectSelectStep<
          org.jooq.Record4<String, String, Instant, com.fasterxml.jackson.databind.JsonNode>>
      eventsSelect(String alias, Instant now) {
    return DSL.select(
        DSL.field(DSL.name(alias, "task_id"), String.class),
        DSL.field(DSL.name(alias, "kind"), String.class),
        DSL.val(now, EVENTS.AT),
        DSL.field(DSL.name(alias, "payload"), String.class).coerce(EVENTS.PAYLOAD));
  }

  /**
   * Inserts the rows with one {@code INSERT ... SELECT} over {@code unnest} of one bound array per
   * column (the column's database values, converters applied), so the statement's text and its
   * number of binds are the same for every batch size.
   */
  private static void insertRows(DSLContext ctx, List<TasksRecord> rows) {
    org.jooq.Insert<TasksRecord> insert = rowsInsert(rows, null);
    ctx.attach(insert);
    int inserted = insert.execute();
    if (inserted != rows.size()) {
      throw new IllegalStateException(
          "filing " + rows.size() + " tasks inserted " + inserted + " rows");
    }
  }

  /**
   * The rows' {@code INSERT ... SELECT} over {@code unnest} of one array per column.
   *
   * @param after a one-row table cross-joined to the rows (read before any is inserted), or null
   */
  private static org.jooq.InsertOnDuplicateStep<TasksRecord> rowsInsert(
      List<TasksRecord> rows, Table<?> after) {
    Field<?>[] columns = TASKS.fields();
    List<Field<?>> arrays = new ArrayList<>(columns.length);
    List<Field<?>> selected = new ArrayList<>(columns.length);
    String[] names = new String[columns.length];
    StringBuilder unnest = new StringBuilder("unnest(");
    for (int c = 0; c < columns.length; c++) {
      Field<?> column = columns[c];
      arrays.add(databaseValues(column, rows));
      names[c] = "c" + c;
      unnest.append(c == 0 ? "" : ", ").append('{').append(c).append('}');
      selected.add(DSL.field(DSL.name("u", names[c]), column.getDataType()));
    }
    unnest.append(')');
    Table<?> u = DSL.table(unnest.toString(), arrays.toArray(Object[]::new)).as("u", names);
    return DSL.insertInto(TASKS)
        .columns(columns)
        .select(
            after == null
                ? DSL.select(selected).from(u)
                : DSL.select(selected).from(u).crossJoin(after));
  }

  /** One column's values of every row, converted to the database type, as one array bind. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Field<?> databaseValues(Field<?> column, List<TasksRecord> rows) {
    org.jooq.DataType<?> type = column.getDataType();
    org.jooq.Converter converter = type.getConverter();
    org.jooq.DataType<?> sqlType = type.getSQLDataType();
    Object[] values =
        (Object[]) java.lang.reflect.Array.newInstance(sqlType.getType(), rows.size());
    for (int i = 0; i < rows.size(); i++) {
      values[i] = converter.to(rows.get(i).get(column));
    }
    return DSL.val(values, (org.jooq.DataType) sqlType.getArrayDataType());
  }

  private static Field<String[]> texts(List<String> values) {
    return DSL.val(values.toArray(String[]::new), SQLDataType.CLOB.getArrayDataType());
  }

  /** The spec's {@link #key(String, String)}, or null when it has no upstream event. */
  private static String key(TaskSpec s) {
    return s.upstreamEvent() == null ? null : key(s.origin(), s.upstreamEvent());
  }

  private static String key(String origin, String upstream) {
    return origin + "\u0000" + upstream;
  }

  private static void checkDependencies(DSLContext ctx, Set<String> deps) {
    if (deps.isEmpty()) {
      return;
    }
    Set<String> known =
        new java.util.HashSet<>(
            ctx.select(LEDGER_TASKS.ID)
                .from(LEDGER_TASKS)
                .where(LEDGER_TASKS.ID.in(deps))
                .fetch(LEDGER_TASKS.ID));
    for (String d : deps) {
      if (!known.contains(d)) {
        throw new InvalidInputException("depends_on", "no task with id '" + d + "'");
      }
    }
  }
}

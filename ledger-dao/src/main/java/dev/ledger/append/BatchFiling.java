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
    checkDependencies(tx.directory(), deps);
    DSLContext ctx = engine.domainForWrite(tx, domain);
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

  private List<String> fileIn(DSLContext ctx, List<TaskSpec> specs) {
    Instant now = engine.now();
    // origins filed before: each of the batch's (origin, upstream event) pairs, bound as two
    // arrays, looked up in tasks_origin by a lateral subquery, so the plan is one index probe per
    // pair whatever the table's statistics say (a disjunction of the pairs was planned as a filter
    // over every task of the origin, its cost growing with the origin's tasks times the batch)
    Map<String, String> byOrigin = new HashMap<>();
    List<TaskSpec> keyed = specs.stream().filter(s -> s.upstreamEvent() != null).toList();
    if (!keyed.isEmpty()) {
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
    List<String> ids = new ArrayList<>(specs.size());
    List<TasksRecord> rows = new ArrayList<>();
    List<String> eventTasks = new ArrayList<>();
    List<String> eventKinds = new ArrayList<>();
    List<String> eventPayloads = new ArrayList<>();
    for (TaskSpec s : specs) {
      String k = s.upstreamEvent() == null ? null : key(s.origin(), s.upstreamEvent());
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
      // its claim class, dependency edges and blocked flag: the trigger on tasks (domain V8)
      rows.add(row);
    }
    if (rows.isEmpty()) {
      return ids;
    }
    Field<String[]> taskArray = texts(eventTasks);
    Field<String[]> kindArray = texts(eventKinds);
    Field<String[]> payloadArray = texts(eventPayloads);
    Table<?> u =
        DSL.table("unnest({0}, {1}, {2}) with ordinality", taskArray, kindArray, payloadArray)
            .as("u", "task_id", "kind", "payload", "n");
    int events =
        ctx.insertInto(EVENTS, EVENTS.TASK_ID, EVENTS.KIND, EVENTS.AT, EVENTS.PAYLOAD)
            .select(
                DSL.select(
                        DSL.field(DSL.name("u", "task_id"), String.class),
                        DSL.field(DSL.name("u", "kind"), String.class),
                        DSL.val(now, EVENTS.AT),
                        DSL.field(DSL.name("u", "payload"), String.class).coerce(EVENTS.PAYLOAD))
                    .from(u)
                    .orderBy(DSL.field(DSL.name("u", "n"))))
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
   * Inserts the rows with one {@code INSERT ... SELECT} over {@code unnest} of one bound array per
   * column (the column's database values, converters applied), so the statement's text and its
   * number of binds are the same for every batch size.
   */
  private static void insertRows(DSLContext ctx, List<TasksRecord> rows) {
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
    int inserted =
        ctx.insertInto(TASKS).columns(columns).select(DSL.select(selected).from(u)).execute();
    if (inserted != rows.size()) {
      throw new IllegalStateException(
          "filing " + rows.size() + " tasks inserted " + inserted + " rows");
    }
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

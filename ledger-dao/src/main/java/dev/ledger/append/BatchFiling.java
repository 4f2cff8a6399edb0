package dev.ledger.append;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static dev.ledger.codegen.db.ledger_template.Tables.CLAIM_CLASSES;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.InvalidInputException;
import dev.ledger.TaskSpec;
import dev.ledger.Validation;
import dev.ledger.codegen.convert.JsonConverter;
import dev.ledger.codegen.convert.StringListConverter;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.internal.ClaimIndex;
import dev.ledger.internal.Event;
import dev.ledger.internal.Projection;
import dev.ledger.tx.Engine;
import dev.ledger.tx.Tx;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.InsertValuesStep3;
import org.jooq.Table;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * Filing and admitting many tasks of one domain in one call and one transaction ({@link
 * dev.ledger.Ledger#fileAll}): the events and rows {@link dev.ledger.Ledger#file} and {@link
 * dev.ledger.Ledger#admit} write for each, appended set-wise (one {@code INSERT} of every event
 * over {@code unnest}, multi-row inserts of the rows, routes and claim classes) instead of several
 * round trips per task. Idempotent on origin as {@code file} is: a spec whose origin and upstream
 * event were filed before (or earlier in the same batch) gets the first task's id and writes
 * nothing.
 */
public final class BatchFiling {

  /** Most specs one call takes. */
  static final int MAX_BATCH = 5000;

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
    DSLContext ctx = tx.forSchema(engine.schemaForWrite(tx, domain));
    try {
      return tx.savepoint(() -> fileIn(ctx, specs));
    } catch (DataAccessException e) {
      if ("23505".equals(e.sqlState())) {
        // a concurrent filing of one of the upstream events won: again, finding it
        return fileIn(ctx, specs);
      }
      throw e;
    }
  }

  private List<String> fileIn(DSLContext tx, List<TaskSpec> specs) {
    Instant now = engine.now();
    // origins filed before
    Map<String, String> byOrigin = new HashMap<>();
    List<TaskSpec> keyed = specs.stream().filter(s -> s.upstreamEvent() != null).toList();
    if (!keyed.isEmpty()) {
      for (List<TaskSpec> chunk : chunks(keyed, 1000)) {
        var cond = DSL.noCondition();
        for (TaskSpec s : chunk) {
          cond =
              cond.or(TASKS.ORIGIN.eq(s.origin()).and(TASKS.UPSTREAM_EVENT.eq(s.upstreamEvent())));
        }
        tx.select(TASKS.ORIGIN, TASKS.UPSTREAM_EVENT, TASKS.ID)
            .from(TASKS)
            .where(cond)
            .fetch()
            .forEach(r -> byOrigin.put(key(r.value1(), r.value2()), r.value3()));
      }
    }
    List<String> ids = new ArrayList<>(specs.size());
    List<TasksRecord> rows = new ArrayList<>();
    List<String> eventTasks = new ArrayList<>();
    List<String> eventKinds = new ArrayList<>();
    List<String> eventPayloads = new ArrayList<>();
    Map<String, String[]> classes = new LinkedHashMap<>();
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
      eventKinds.add(created.kind());
      eventPayloads.add(JSON.to(created.payload()));
      TasksRecord row = Projection.created(id, now, s);
      boolean delayed = s.notBefore() != null && s.notBefore().isAfter(now);
      if (!delayed) {
        Event.Admitted admitted = new Event.Admitted();
        eventTasks.add(id);
        eventKinds.add(admitted.kind());
        eventPayloads.add(JSON.to(admitted.payload()));
        Projection.apply(row, admitted);
      }
      if (s.dependsOn().isEmpty()) {
        String req = LIST.to(s.requirements());
        classes.putIfAbsent(
            row.getLabelRank() + ":" + req, new String[] {Long.toString(row.getLabelRank()), req});
        row.setBlocked(false);
      } else {
        ClaimIndex.filed(tx, engine.statements(), row); // its edges and blocked flag, one by one
      }
      rows.add(row);
    }
    if (rows.isEmpty()) {
      return ids;
    }
    if (!classes.isEmpty()) {
      InsertValuesStep3<?, Long, String, String> insert =
          tx.insertInto(
              CLAIM_CLASSES,
              CLAIM_CLASSES.LABEL_RANK,
              CLAIM_CLASSES.REQUIREMENTS_MD5,
              CLAIM_CLASSES.REQUIREMENTS);
      for (String[] c : classes.values()) {
        insert = insert.values(Long.parseLong(c[0]), ClaimIndex.md5(c[1]), c[1]);
      }
      insert.onConflictDoNothing().execute();
    }
    Field<String[]> taskArray = texts(eventTasks);
    Field<String[]> kindArray = texts(eventKinds);
    Field<String[]> payloadArray = texts(eventPayloads);
    Table<?> u =
        DSL.table("unnest({0}, {1}, {2}) with ordinality", taskArray, kindArray, payloadArray)
            .as("u", "task_id", "kind", "payload", "n");
    int events =
        tx.insertInto(EVENTS, EVENTS.TASK_ID, EVENTS.KIND, EVENTS.AT, EVENTS.PAYLOAD)
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
    for (List<TasksRecord> chunk : chunks(rows, 500)) {
      tx.insertInto(TASKS).columns(TASKS.fields()).valuesOfRecords(chunk).execute();
      var routes =
          tx.insertInto(LEDGER_TASKS, LEDGER_TASKS.ID, LEDGER_TASKS.DOMAIN, LEDGER_TASKS.COMPLETED);
      for (TasksRecord r : chunk) {
        routes = routes.values(r.getId(), r.getDomain(), false);
      }
      routes.execute();
    }
    return ids;
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

  private static <T> List<List<T>> chunks(List<T> all, int size) {
    List<List<T>> out = new ArrayList<>();
    for (int i = 0; i < all.size(); i += size) {
      out.add(all.subList(i, Math.min(all.size(), i + size)));
    }
    return out;
  }
}

package dev.ledger.event;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledger.Status;
import dev.ledger.TaskNotFoundException;
import dev.ledger.TaskSpec;
import dev.ledger.WrongStateException;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.kernel.CitusDirectory;
import dev.ledger.kernel.Engine;
import dev.ledger.kernel.RenderedStatement;
import dev.ledger.kernel.RenderedStatement.Slot;
import dev.ledger.kernel.Tx;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Query;
import org.jooq.QueryPart;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * The writes every operation that appends shares: an event appended to the log ({@link #append}),
 * one event to many tasks ({@link #appendToEach}), a task row inserted or updated with its changed
 * columns ({@link #writeRow}), and the generic transition of one task by id ({@link #transition}:
 * lock its row, decide the event, append it and project it). Each takes a context on the
 * operation's transaction ({@code Tx.forSchema}), so the ledger's own transactions and a caller's
 * run the same statements. Statements are rendered once per domain schema ({@link
 * RenderedStatement}). Ports the reference's {@code append}, {@code project} and {@code
 * transition}. Thread-safe.
 */
public final class EventLog {

  private final Engine engine;

  /**
   * Creates the log writer.
   *
   * @param engine the ledger's shared state
   */
  public EventLog(Engine engine) {
    this.engine = engine;
  }

  /** Decides which event a transition appends, from the task's locked row. */
  @FunctionalInterface
  public interface EventDecider {
    /**
     * Decides the event.
     *
     * @param row the task's current row, locked {@code FOR UPDATE}
     * @return the event to append and project, or null to append nothing
     * @throws dev.ledger.LedgerException (a typed refusal) when the operation may not happen;
     *     nothing is written then
     */
    Event decide(TasksRecord row);
  }

  /**
   * An operation on one task by id: locks its row, decides the event, appends and projects it.
   *
   * @param tx the operation's transaction context
   * @param ctx a context on the operation's transaction, mapped to the task's domain schema
   * @param id the task id
   * @param decide decides the event from the locked row; may throw a typed refusal
   * @return the row after the event
   * @throws TaskNotFoundException when no task has the id
   */
  public TasksRecord transition(Tx tx, DSLContext ctx, String id, EventDecider decide) {
    TasksRecord row =
        engine
            .statements()
            .get(
                ctx,
                "lock task",
                () -> DSL.selectFrom(TASKS).where(TASKS.ID.eq(TASK_ID.field())).forUpdate(),
                List.of(TASK_ID))
            .fetchInto(ctx, TASKS, id)
            .stream()
            .findFirst()
            .orElse(null);
    if (row == null) {
      throw new TaskNotFoundException(id);
    }
    Event event = decide.decide(row);
    if (event != null) {
      applyToRow(tx, ctx, row, engine.now(), event);
    }
    return row;
  }

  /**
   * Appends an event and projects it onto the task's locked row. What a completion changes besides
   * the row (the route's {@code completed}, its dependents' {@code blocked}, in any domain) the
   * database's triggers change in the same transaction (domain migration V8, directory V5), as they
   * do for the reference stack's writes.
   *
   * @param tx the operation's transaction context
   * @param ctx a context on the operation's transaction, mapped to the task's domain schema
   * @param row the task's row, locked; changed in place
   * @param at the event's time
   * @param event the event
   */
  public void applyToRow(Tx tx, DSLContext ctx, TasksRecord row, Instant at, Event event) {
    append(ctx, row.getId(), at, event);
    Projection.apply(row, event);
    writeRow(ctx, row, false);
  }

  /**
   * Appends one event to the log.
   *
   * @param ctx a context on the operation's transaction, mapped to the domain schema
   * @param taskId the event's key: a task id, or {@code promotion:<entry>}
   * @param at the event's time
   * @param event the event
   */
  public void append(DSLContext ctx, String taskId, Instant at, Event event) {
    engine
        .statements()
        .get(
            ctx,
            "append event",
            () ->
                DSL.insertInto(EVENTS)
                    .set(EVENTS.TASK_ID, EVENT_TASK.field())
                    .set(EVENTS.KIND, EVENT_KIND.field())
                    .set(EVENTS.AT, EVENT_AT.field())
                    .set(EVENTS.PAYLOAD, EVENT_PAYLOAD.field()),
            List.of(EVENT_TASK, EVENT_KIND, EVENT_AT, EVENT_PAYLOAD))
        .execute(ctx, taskId, event.kind().wire(), at, event.payload());
  }

  /**
   * Appends the same event to several tasks in one statement, in the order given: a batch claim
   * logs its claims with one round trip instead of one per task ({@code INSERT ... SELECT} over
   * {@code unnest(ids) WITH ORDINALITY}, so {@code seq} follows the claim order).
   *
   * @param ctx a context on the operation's transaction, mapped to the domain schema
   * @param taskIds the tasks, in the order their events are numbered
   * @param at the events' time
   * @param event the event
   * @throws IllegalStateException when the statement wrote another number of events
   */
  public void appendToEach(DSLContext ctx, String[] taskIds, Instant at, Event event) {
    int n =
        engine
            .statements()
            .get(
                ctx,
                "append event to each",
                () -> {
                  Table<?> ids =
                      DSL.unnest(EVENT_TASKS.field()).withOrdinality().as("c", "task_id", "n");
                  return DSL.insertInto(
                          EVENTS, EVENTS.TASK_ID, EVENTS.KIND, EVENTS.AT, EVENTS.PAYLOAD)
                      .select(
                          DSL.select(
                                  ids.field("task_id", String.class),
                                  EVENT_KIND.field(),
                                  EVENT_AT.field(),
                                  EVENT_PAYLOAD.field())
                              .from(ids)
                              .orderBy(ids.field("n")));
                },
                List.of(EVENT_TASKS, EVENT_KIND, EVENT_AT, EVENT_PAYLOAD))
            .execute(ctx, taskIds, event.kind().wire(), at, event.payload());
    if (n != taskIds.length) {
      throw new IllegalStateException(
          "appending "
              + event.kind().wire()
              + " to "
              + taskIds.length
              + " tasks wrote "
              + n
              + " events");
    }
  }

  /**
   * Inserts a new task row, or updates a locked one, writing its changed columns: one rendered
   * statement per set of changed columns (an event changes the same columns every time).
   *
   * @param ctx a context on the operation's transaction, mapped to the task's domain schema
   * @param row the row; its changed flags are reset
   * @param insert true to insert, false to update the row of its id
   * @throws IllegalStateException when the statement wrote another number of rows than one
   */
  public void writeRow(DSLContext ctx, TasksRecord row, boolean insert) {
    List<Slot<?>> slots = new ArrayList<>();
    List<Object> values = new ArrayList<>();
    StringBuilder name = new StringBuilder(insert ? "insert task" : "update task");
    List<Field<?>> changed = new ArrayList<>();
    changedColumns(row, slots, values, changed, name);
    if (changed.isEmpty()) {
      return;
    }
    boolean statusChanged = row.changed(TASKS.STATUS);
    // the SET clause is built only when the statement is first rendered
    Supplier<Map<Field<?>, Field<?>>> set =
        () -> {
          Map<Field<?>, Field<?>> columns = new LinkedHashMap<>();
          for (int i = 0; i < changed.size(); i++) {
            columns.put(changed.get(i), slots.get(i).field());
          }
          return columns;
        };
    RenderedStatement.Cache statements = engine.statements();
    int n;
    if (insert) {
      n =
          statements
              .get(ctx, name.toString(), () -> DSL.insertInto(TASKS).set(set.get()), slots)
              .execute(ctx, values.toArray());
    } else {
      slots.add(TASK_ID);
      values.add(row.getId());
      n =
          statements
              .get(
                  ctx,
                  name.toString(),
                  () -> DSL.update(TASKS).set(set.get()).where(TASKS.ID.eq(TASK_ID.field())),
                  slots)
              .execute(ctx, values.toArray());
    }
    if (n != 1) {
      throw new IllegalStateException(
          (insert ? "inserting" : "updating") + " task " + row.getId() + " wrote " + n + " rows");
    }
    row.changed(false);
    if (engine.citus()) {
      // domain V8's triggers find no directory on a Citus worker: the ledger keeps it here
      Status status = Status.parse(row.getStatus());
      if (insert) {
        CitusDirectory.filed(ctx, row.getId(), row.getDependsOn());
      } else if (statusChanged) {
        CitusDirectory.statusChanged(ctx, List.of(row.getId()), status);
      }
      if (insert || statusChanged) {
        CitusDirectory.wake(ctx, row.getDomain(), status, row.getNotBefore() != null);
      }
    }
  }

  /**
   * What a filing's one statement runs before it writes ({@link #insertFiled}): a select list that
   * takes the filing's locks (and, in a transaction of the ledger's own, sets its bounds first),
   * whose last field may be the lookup of the task already filed from the spec's upstream event.
   * PostgreSQL evaluates the list left to right, once ({@code MATERIALIZED}), before the insert
   * reads it.
   *
   * @param name what the list does, part of the statement's cache name, e.g. {@code filing locks}
   * @param slots the list's slots, in the order of {@code values}
   * @param values the slots' values
   * @param select builds the list with the slots' placeholders; called once per schema
   * @param lookup true when the list's last field is the lookup: a task id, or null
   */
  public record Lead(
      String name,
      List<Slot<?>> slots,
      List<Object> values,
      Supplier<List<Field<?>>> select,
      boolean lookup) {}

  /**
   * What {@link #insertFiled} did: exactly one of {@code existing} (the lead's lookup found the
   * upstream event's task: nothing written) and {@code row} (the task written) is set, or neither
   * (the unique key {@code tasks_origin} was taken by a filing the lookup could not see: nothing
   * written; look again).
   *
   * @param existing the id the lookup found, or null
   * @param row the new row (changed flags reset), or null
   */
  public record Filed(String existing, TasksRecord row) {}

  /**
   * Writes a new task in one statement (issue 26, B13): the {@code lead} first (the filing's locks,
   * the upstream event's lookup), then, unless the lookup found a task, its row, its {@code
   * created} event (and, when {@code admit}, its {@code admitted} event, the row then born {@code
   * admitted}) and its route, as a data-modifying CTE whose inserts of the events and the route
   * read the task's insert ({@code INSERT ... SELECT ... FROM lead ON CONFLICT DO NOTHING RETURNING
   * id}): reading the lead is what orders the locks before the writes. When a concurrent filing
   * already holds the unique key {@code tasks_origin} (it committed while this statement waited for
   * the upstream event's key, after the statement's snapshot), nothing is written and the
   * transaction stays usable without a savepoint. The events are numbered in order ({@code ORDER
   * BY} over the insert's rows). The database's triggers on the row and the route fire as for
   * separate statements, except the row's status update (it is inserted admitted); being {@code
   * VOLATILE}, their queries take their own snapshots, after the locks. A row that meets the unique
   * key still fired its {@code BEFORE INSERT} trigger: a claim class it made stays (empty); its
   * dependency edges would too, so a filing with dependencies and an upstream event uses the
   * savepoint path instead. Not for Citus (the ledger keeps its directory there, {@link
   * #writeRow}). One round trip.
   *
   * @param ctx a context on the operation's transaction, mapped to the domain's schema
   * @param id the new id
   * @param created the {@code created} event's time, and the row's
   * @param admitted the {@code admitted} event's time, or null to file the task {@code proposed}
   * @param spec the validated spec
   * @param lead what runs first, in the same statement
   * @return what was written, never null
   */
  public Filed insertFiled(
      DSLContext ctx, String id, Instant created, Instant admitted, TaskSpec spec, Lead lead) {
    TasksRecord row = Projection.created(id, created, spec);
    Event.Created createdEvent = new Event.Created(id, spec);
    Event admittedEvent = admitted == null ? null : new Event.Admitted();
    if (admittedEvent != null) {
      Projection.apply(row, admittedEvent);
    }
    List<Slot<?>> slots = new ArrayList<>(lead.slots());
    List<Object> values = new ArrayList<>(lead.values());
    List<Field<?>> changed = new ArrayList<>();
    StringBuilder name =
        new StringBuilder(lead.name())
            .append(admitted == null ? ", file proposed" : ", file admitted");
    int columnsFrom = slots.size();
    changedColumns(row, slots, values, changed, name);
    slots.add(CREATED_AT);
    values.add(created);
    slots.add(CREATED_PAYLOAD);
    values.add(createdEvent.payload());
    if (admittedEvent != null) {
      slots.add(ADMITTED_AT);
      values.add(admitted);
      slots.add(ADMITTED_PAYLOAD);
      values.add(admittedEvent.payload());
    }
    slots.add(ROUTE_DOMAIN);
    values.add(spec.domain());
    List<Slot<?>> templateSlots = List.copyOf(slots);
    Supplier<Query> template =
        () -> {
          List<Field<?>> leadFields = lead.select().get();
          Field<?>[] aliased = new Field<?>[leadFields.size()];
          for (int i = 0; i < aliased.length; i++) {
            aliased[i] = leadFields.get(i).as("c" + i);
          }
          Field<String> found =
              lead.lookup()
                  ? DSL.field(DSL.name("l", "c" + (aliased.length - 1)), SQLDataType.VARCHAR)
                  : null;
          List<Field<?>> rowValues = new ArrayList<>(changed.size());
          for (int i = 0; i < changed.size(); i++) {
            rowValues.add(templateSlots.get(columnsFrom + i).field());
          }
          QueryPart events =
              admittedEvent == null
                  ? DSL.sql(
                      "(1, {0}, {1}, {2})",
                      DSL.inline(EventKind.CREATED.wire()),
                      CREATED_AT.field(),
                      CREATED_PAYLOAD.field())
                  : DSL.sql(
                      "(1, {0}, {1}, {2}), (2, {3}, {4}, {5})",
                      DSL.inline(EventKind.CREATED.wire()),
                      CREATED_AT.field(),
                      CREATED_PAYLOAD.field(),
                      DSL.inline(EventKind.ADMITTED.wire()),
                      ADMITTED_AT.field(),
                      ADMITTED_PAYLOAD.field());
          return DSL.query(
              "with l as materialized ({0}),"
                  + " t as ({1} returning {2}),"
                  + " e as (insert into {3} ({4}, {5}, {6}, {7})"
                  + " select t.{2}, v.kind, v.at, v.payload from t"
                  + " cross join (values {8}) as v (n, kind, at, payload) order by v.n),"
                  + " r as (insert into {9} ({10}, {11}, {12}) select t.{2}, {13}, {14} from t)"
                  + " select {15}, (select count(*) from t)",
              DSL.select(aliased),
              DSL.insertInto(TASKS)
                  .columns(changed)
                  .select(
                      DSL.select(rowValues)
                          .from(DSL.table(DSL.name("l")))
                          .where(found == null ? DSL.noCondition() : found.isNull()))
                  .onConflictDoNothing(),
              DSL.name(TASKS.ID.getName()),
              EVENTS,
              DSL.name(EVENTS.TASK_ID.getName()),
              DSL.name(EVENTS.KIND.getName()),
              DSL.name(EVENTS.AT.getName()),
              DSL.name(EVENTS.PAYLOAD.getName()),
              events,
              LEDGER_TASKS,
              DSL.name(LEDGER_TASKS.ID.getName()),
              DSL.name(LEDGER_TASKS.DOMAIN.getName()),
              DSL.name(LEDGER_TASKS.COMPLETED.getName()),
              ROUTE_DOMAIN.field(),
              DSL.inline(false),
              found == null
                  ? DSL.inline((String) null, SQLDataType.VARCHAR)
                  : DSL.field(DSL.select(found).from(DSL.table(DSL.name("l")))));
        };
    org.jooq.Record result =
        engine
            .statements()
            .get(ctx, name.toString(), template, templateSlots)
            .fetch(ctx, FILED, values.toArray())
            .get(0);
    String existing = (String) result.get(0);
    if (existing != null) {
      return new Filed(existing, null);
    }
    if ((Long) result.get(1) == 0) {
      return new Filed(null, null);
    }
    row.changed(false);
    return new Filed(null, row);
  }

  /**
   * Adds the row's changed columns, in the table's order: each column's slot to {@code slots}, its
   * value to {@code values}, the column to {@code columns}, and its name to the statement's {@code
   * name} (one rendered statement per set of changed columns).
   */
  private static void changedColumns(
      TasksRecord row,
      List<Slot<?>> slots,
      List<Object> values,
      List<Field<?>> columns,
      StringBuilder name) {
    Field<?>[] fields = TASKS.fields();
    for (int i = 0; i < fields.length; i++) {
      if (row.changed(fields[i])) {
        slots.add(TASK_COLUMNS.get(i));
        values.add(row.get(fields[i]));
        columns.add(fields[i]);
        name.append(' ').append(fields[i].getName());
      }
    }
  }

  /**
   * Inserts a new task's route into {@code ledger_tasks}, not completed.
   *
   * @param ctx a context on the filing transaction
   * @param id the task id
   * @param domain its domain
   */
  public void insertRoute(DSLContext ctx, String id, String domain) {
    engine
        .statements()
        .get(
            ctx,
            "insert route",
            () ->
                DSL.insertInto(LEDGER_TASKS)
                    .set(LEDGER_TASKS.ID, ROUTE_ID.field())
                    .set(LEDGER_TASKS.DOMAIN, ROUTE_DOMAIN.field())
                    .set(LEDGER_TASKS.COMPLETED, ROUTE_COMPLETED.field()),
            List.of(ROUTE_ID, ROUTE_DOMAIN, ROUTE_COMPLETED))
        .execute(ctx, id, domain, false);
  }

  /**
   * The refusal of an operation on a task in the wrong state.
   *
   * @param row the task's row
   * @param operation what was refused, e.g. {@code admit}
   * @param why the rule, for the message
   * @return the exception, to throw
   */
  public static WrongStateException wrong(TasksRecord row, String operation, String why) {
    return new WrongStateException(row.getId(), Status.parse(row.getStatus()), operation, why);
  }

  // Slots of the statements rendered once per domain schema (RenderedStatement): the hot paths'.
  private static final Slot<String> TASK_ID = Slot.of("id", TASKS.ID.getDataType());
  private static final Slot<String> EVENT_TASK = Slot.of("task_id", EVENTS.TASK_ID.getDataType());
  private static final Slot<String[]> EVENT_TASKS =
      Slot.of("task ids", EVENTS.TASK_ID.getDataType().getArrayDataType());
  private static final Slot<String> EVENT_KIND = Slot.of("kind", EVENTS.KIND.getDataType());
  private static final Slot<Instant> EVENT_AT = Slot.of("at", EVENTS.AT.getDataType());
  private static final Slot<JsonNode> EVENT_PAYLOAD =
      Slot.of("payload", EVENTS.PAYLOAD.getDataType());
  private static final Slot<Instant> CREATED_AT = Slot.of("created at", EVENTS.AT.getDataType());
  private static final Slot<JsonNode> CREATED_PAYLOAD =
      Slot.of("created payload", EVENTS.PAYLOAD.getDataType());
  private static final Slot<Instant> ADMITTED_AT = Slot.of("admitted at", EVENTS.AT.getDataType());
  private static final Slot<JsonNode> ADMITTED_PAYLOAD =
      Slot.of("admitted payload", EVENTS.PAYLOAD.getDataType());

  /** What {@link #insertFiled} returns: the lead's lookup (or null), and the rows inserted. */
  private static final Field<?>[] FILED = {
    DSL.field(DSL.name("found"), SQLDataType.VARCHAR),
    DSL.field(DSL.name("count"), SQLDataType.BIGINT)
  };

  private static final Slot<String> ROUTE_ID = Slot.of("id", LEDGER_TASKS.ID.getDataType());
  private static final Slot<String> ROUTE_DOMAIN =
      Slot.of("domain", LEDGER_TASKS.DOMAIN.getDataType());
  private static final Slot<Boolean> ROUTE_COMPLETED =
      Slot.of("completed", LEDGER_TASKS.COMPLETED.getDataType());

  /** A slot per column of {@code tasks}, in the table's column order. */
  private static final List<Slot<?>> TASK_COLUMNS =
      Arrays.stream(TASKS.fields()).<Slot<?>>map(EventLog::columnSlot).toList();

  private static <T> Slot<T> columnSlot(Field<T> column) {
    return Slot.of(column.getName(), column.getDataType());
  }
}

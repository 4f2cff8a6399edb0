package dev.ledger.event;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledger.Status;
import dev.ledger.TaskNotFoundException;
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
import org.jooq.Table;
import org.jooq.impl.DSL;

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
    Field<?>[] fields = TASKS.fields();
    List<Slot<?>> slots = new ArrayList<>(fields.length + 1);
    List<Object> values = new ArrayList<>(fields.length + 1);
    StringBuilder name = new StringBuilder(insert ? "insert task" : "update task");
    List<Field<?>> changed = new ArrayList<>(fields.length);
    for (int i = 0; i < fields.length; i++) {
      if (row.changed(fields[i])) {
        slots.add(TASK_COLUMNS.get(i));
        values.add(row.get(fields[i]));
        changed.add(fields[i]);
        name.append(' ').append(fields[i].getName());
      }
    }
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

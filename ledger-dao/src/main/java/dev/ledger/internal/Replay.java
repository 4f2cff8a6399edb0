package dev.ledger.internal;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.PROMOTIONS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.Status;
import dev.ledger.codegen.db.ledger_directory.tables.records.LedgerTasksRecord;
import dev.ledger.codegen.db.ledger_template.tables.records.PromotionsRecord;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jooq.Converter;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;

/**
 * Replay of one domain: its projection is deleted, its events are streamed in {@code seq} order
 * ({@code COPY TO STDOUT} through {@link CopyReader}, each payload read by {@link EventReader}'s
 * streaming parser) and folded in memory with {@link Projection}, the same fold the live operations
 * use, and the rows are written back with {@code COPY FROM STDIN} ({@link CopyWriter}). Ports the
 * reference's {@code rebuild_domain}, which issued one statement per event.
 *
 * <pre>{@code
 * long events = Replay.domain(txMappedToSchema, "acme", "ledger_acme_822b33ad");
 * }</pre>
 */
public final class Replay {

  /** The converter of {@code events.at}: RFC 3339 text to {@link Instant}. */
  @SuppressWarnings("unchecked")
  private static final Converter<String, Instant> AT =
      (Converter<String, Instant>) EVENTS.AT.getConverter();

  private Replay() {}

  /**
   * Rebuilds one domain's projection from its events.
   *
   * @param tx a context in a transaction, mapped to the domain's schema
   * @param domain the domain
   * @param schema its bare schema name
   * @return how many events were replayed
   * @throws DataAccessException when the database fails or refuses a row; the caller's transaction
   *     is then to be rolled back
   * @throws dev.ledger.LedgerException when an event does not fit format v1
   * @throws IllegalArgumentException when a stored time is not RFC 3339, or a row cannot be written
   *     ({@link CopyWriter#copy})
   */
  public static long domain(DSLContext tx, String domain, String schema) {
    tx.deleteFrom(TASKS).execute();
    tx.deleteFrom(PROMOTIONS).execute();
    ClaimIndex.forgetDomain(tx, domain);
    tx.deleteFrom(LEDGER_TASKS).where(LEDGER_TASKS.DOMAIN.eq(domain)).execute();
    // promotions.seq restarts, so a replay of a log gives the same seq values every time
    tx.select(
            DSL.function(
                "setval",
                Long.class,
                DSL.function(
                    "pg_get_serial_sequence",
                    String.class,
                    DSL.val(DSL.name(schema, "promotions").toString()),
                    DSL.inline("seq")),
                DSL.inline(1L),
                DSL.inline(false)))
        .fetch();

    Map<String, TasksRecord> tasks = new LinkedHashMap<>();
    List<PromotionsRecord> promotions = new ArrayList<>();
    long n =
        CopyReader.forEach(
            tx,
            tx.select(EVENTS.TASK_ID, EVENTS.KIND, EVENTS.AT, EVENTS.PAYLOAD)
                .from(EVENTS)
                .orderBy(EVENTS.SEQ),
            row -> {
              String taskId = row[0];
              // every time is read (and so checked), as the reference's rebuild does
              Instant at = AT.from(row[2]);
              Event event = EventReader.read(taskId, row[1], row[3]);
              if (event instanceof Event.Created c) {
                tasks.put(c.id(), Projection.created(c.id(), at, c.spec()));
              } else if (event instanceof Event.Promoted p) {
                promotions.add(Projection.promoted(at, p.spec(), p.whyErased()));
              } else {
                TasksRecord task = tasks.get(taskId);
                // as the reference's UPDATE of a missing row, an event of an unknown task changes
                // nothing
                if (task != null) {
                  Projection.apply(task, event);
                }
              }
            });
    // blocked is set by ClaimIndex.recomputeBlocked once every domain's routes are back
    ClaimIndex.rebuildDomain(tx, domain, tasks.values());
    CopyWriter.copy(tx, TASKS, List.of(TASKS.fields()), tasks.values());
    List<Field<?>> promotionColumns = new ArrayList<>(List.of(PROMOTIONS.fields()));
    promotionColumns.remove(PROMOTIONS.SEQ); // the sequence numbers them, in event order
    CopyWriter.copy(tx, PROMOTIONS, promotionColumns, promotions);
    List<LedgerTasksRecord> routes = new ArrayList<>(tasks.size());
    for (TasksRecord t : tasks.values()) {
      routes.add(
          new LedgerTasksRecord(t.getId(), domain, Status.COMPLETED.wire().equals(t.getStatus())));
    }
    CopyWriter.copy(tx, LEDGER_TASKS, List.of(LEDGER_TASKS.fields()), routes);
    return n;
  }
}

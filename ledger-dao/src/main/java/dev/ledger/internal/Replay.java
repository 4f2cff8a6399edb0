package dev.ledger.internal;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.PROMOTIONS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.Status;
import dev.ledger.codegen.db.ledger_template.tables.records.EventsRecord;
import dev.ledger.codegen.db.ledger_template.tables.records.PromotionsRecord;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jooq.Cursor;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.InsertValuesStepN;
import org.jooq.Record;
import org.jooq.Table;
import org.jooq.impl.DSL;

/**
 * Replay of one domain: its projection is deleted, its events are streamed in {@code seq} order and
 * folded in memory with {@link Projection}, and the rows are written back in multi-row inserts.
 * Ports the reference's {@code rebuild_domain}, which issued one statement per event.
 */
public final class Replay {

  /** Rows per multi-row insert; 20 columns x 1,000 rows stays under PostgreSQL's 65,535 binds. */
  private static final int CHUNK = 1000;

  private Replay() {}

  /**
   * Rebuilds one domain's projection from its events.
   *
   * @param tx a context in a transaction, mapped to the domain's schema
   * @param domain the domain
   * @param schema its bare schema name
   * @return how many events were replayed
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
    long n = 0;
    try (Cursor<EventsRecord> events =
        tx.selectFrom(EVENTS).orderBy(EVENTS.SEQ).fetchSize(5000).fetchLazy()) {
      for (EventsRecord e : events) {
        Event event = Event.parse(e.getTaskId(), e.getKind(), e.getPayload());
        if (event instanceof Event.Created c) {
          tasks.put(c.id(), Projection.created(c.id(), e.getAt(), c.spec()));
        } else if (event instanceof Event.Promoted p) {
          promotions.add(Projection.promoted(e.getAt(), p.spec(), p.whyErased()));
        } else {
          TasksRecord row = tasks.get(e.getTaskId());
          // as the reference's UPDATE of a missing row, an event of an unknown task changes nothing
          if (row != null) {
            Projection.apply(row, event);
          }
        }
        n++;
      }
    }
    // blocked is set by ClaimIndex.recomputeBlocked once every domain's routes are back
    ClaimIndex.rebuildDomain(tx, domain, tasks.values());
    insert(tx, TASKS, Arrays.asList(TASKS.fields()), new ArrayList<>(tasks.values()));
    List<Field<?>> promotionColumns = new ArrayList<>(Arrays.asList(PROMOTIONS.fields()));
    promotionColumns.remove(PROMOTIONS.SEQ);
    insert(tx, PROMOTIONS, promotionColumns, promotions);
    List<Record> routes = new ArrayList<>(tasks.size());
    for (TasksRecord t : tasks.values()) {
      routes.add(
          tx.newRecord(LEDGER_TASKS)
              .setId(t.getId())
              .setDomain(domain)
              .setCompleted(Status.COMPLETED.wire().equals(t.getStatus())));
    }
    insert(tx, LEDGER_TASKS, Arrays.asList(LEDGER_TASKS.fields()), routes);
    return n;
  }

  private static <R extends Record> void insert(
      DSLContext tx, Table<R> table, List<Field<?>> columns, List<? extends Record> rows) {
    for (int from = 0; from < rows.size(); from += CHUNK) {
      InsertValuesStepN<R> insert = tx.insertInto(table).columns(columns);
      for (Record row : rows.subList(from, Math.min(rows.size(), from + CHUNK))) {
        Object[] values = new Object[columns.size()];
        for (int i = 0; i < values.length; i++) {
          values[i] = row.get(columns.get(i));
        }
        insert = insert.values(values);
      }
      insert.execute();
    }
  }
}

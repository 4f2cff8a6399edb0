package dev.ledger.replay;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.PROMOTIONS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.LedgerException;
import dev.ledger.Status;
import dev.ledger.codegen.db.ledger_directory.tables.records.LedgerTasksRecord;
import dev.ledger.codegen.db.ledger_template.tables.records.PromotionsRecord;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.event.Event;
import dev.ledger.event.Projection;
import dev.ledger.kernel.DomainLock;
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
final class Replay {

  /** The converter of {@code events.at}: RFC 3339 text to {@link Instant}. */
  @SuppressWarnings("unchecked")
  private static final Converter<String, Instant> AT =
      (Converter<String, Instant>) EVENTS.AT.getConverter();

  private Replay() {}

  /**
   * Rebuilds one domain's projection from its events.
   *
   * @param ctx a context in a transaction, mapped to the domain's schema
   * @param domain the domain
   * @param schema its bare schema name
   * @return how many events were replayed
   * @throws DataAccessException when the database fails or refuses a row; the caller's transaction
   *     is then to be rolled back
   * @throws dev.ledger.LedgerException when an event does not fit format v1
   * @throws IllegalArgumentException when a stored time is not RFC 3339, or a row cannot be written
   *     ({@link CopyWriter#copy})
   */
  static long domain(DSLContext ctx, String domain, String schema) {
    ctx.deleteFrom(TASKS).execute();
    ctx.deleteFrom(PROMOTIONS).execute();
    ClaimIndex.forgetDomain(ctx, domain);
    ctx.deleteFrom(LEDGER_TASKS).where(LEDGER_TASKS.DOMAIN.eq(domain)).execute();

    Map<String, TasksRecord> tasks = new LinkedHashMap<>();
    List<PromotionsRecord> promotions = new ArrayList<>();
    long n =
        CopyReader.forEach(
            ctx,
            ctx.select(EVENTS.TASK_ID, EVENTS.KIND, EVENTS.AT, EVENTS.PAYLOAD)
                .from(EVENTS)
                .orderBy(EVENTS.SEQ),
            row -> {
              String taskId = row[0];
              // every time is read (and so checked), as the reference's rebuild does
              Instant at = AT.from(row[2]);
              Event event = EventReader.read(taskId, row[1], row[3]);
              if (event instanceof Event.Created c) {
                if (tasks.putIfAbsent(c.id(), Projection.created(c.id(), at, c.spec())) != null) {
                  throw new LedgerException(
                      "replay of domain '"
                          + domain
                          + "': task "
                          + c.id()
                          + " has two created events; the log was edited by hand: remove the"
                          + " second one, then replay");
                }
              } else if (event instanceof Event.Promoted p) {
                // seq numbers the promotions in event order, 1, 2, ...: the same every replay
                promotions.add(
                    Projection.promoted(at, p.spec(), p.whyErased())
                        .setSeq((long) promotions.size() + 1));
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
    ClaimIndex.rebuildDomain(ctx, domain, tasks.values());
    CopyWriter.copy(ctx, TASKS, List.of(TASKS.fields()), tasks.values());
    CopyWriter.copy(ctx, PROMOTIONS, List.of(PROMOTIONS.fields()), promotions);
    advancePromotionSequence(ctx, schema, promotions.size());
    List<LedgerTasksRecord> routes = new ArrayList<>(tasks.size());
    for (TasksRecord t : tasks.values()) {
      routes.add(
          new LedgerTasksRecord(t.getId(), domain, Status.COMPLETED.wire().equals(t.getStatus())));
    }
    CopyWriter.copy(ctx, LEDGER_TASKS, List.of(LEDGER_TASKS.fields()), routes);
    return n;
  }

  /**
   * Starts a replay in the caller's transaction: takes every domain's lock (the reference's {@code
   * lock_domain} key), in the order given, before anything is written, and holds them until the
   * transaction ends, as the reference's {@code rebuild} does, so a scrub, a filing or a promotion
   * of any of these domains (ours or the reference's, which take the same lock) waits for the
   * replay and then sees the rebuilt projection. Taking them all first, in one order, means no
   * other holder of one domain's lock can wait on rows this replay has already rewritten while the
   * replay waits for its lock. Then sets the transaction-local {@code ledger.replay} to {@code on},
   * which the triggers of directory V5 and domain V8 skip: the replay writes the derived state
   * itself, in bulk ({@link #finish} turns it off again).
   *
   * @param ctx a context in the replay's transaction
   * @param domains every domain to replay, sorted (the order every multi-domain locker uses)
   */
  static void begin(DSLContext ctx, List<String> domains) {
    for (String domain : domains) {
      DomainLock.lock(ctx, domain);
    }
    replaySetting(ctx, "on");
  }

  /**
   * Ends a replay's bulk writing: the triggers that keep derived state right run again for the rest
   * of the transaction (it may be the caller's, with more work to do in it).
   *
   * @param ctx a context in the replay's transaction
   */
  static void finish(DSLContext ctx) {
    replaySetting(ctx, "off");
  }

  private static void replaySetting(DSLContext ctx, String value) {
    ctx.select(
            DSL.function(
                "set_config",
                String.class,
                DSL.inline("ledger.replay"),
                DSL.inline(value),
                DSL.inline(true)))
        .fetch();
  }

  /**
   * Moves the promotions sequence to at least {@code replayed}, and never back: {@code setval} is
   * not transactional, so a replay that rolls back must leave the sequence no lower than the rows
   * that are still there (a reset to 1 made every later promotion of the domain fail with a
   * duplicate key on {@code promotions_pkey}).
   */
  private static void advancePromotionSequence(DSLContext ctx, String schema, long replayed) {
    Field<String> sequence =
        DSL.function(
            "pg_get_serial_sequence",
            String.class,
            DSL.val(DSL.name(schema, "promotions").toString()),
            DSL.inline("seq"));
    Field<Long> last = DSL.field("pg_sequence_last_value({0}::regclass)", Long.class, sequence);
    ctx.select(DSL.function("setval", Long.class, sequence, DSL.val(replayed)))
        .where(DSL.val(replayed).gt(DSL.coalesce(last, DSL.inline(0L))))
        .fetch();
  }
}

package dev.ledger.feed;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_FEED_CONSUMERS;
import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_FEED_ERASURES;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.InsertValuesStep4;
import org.jooq.Record2;
import org.jooq.impl.DSL;

/**
 * The feed's erasure signal, written by a scrub: for each consumer of the domain, the scrubbed
 * tasks whose events the consumer may have received are recorded (directory migration V11, {@code
 * ledger_feed_erasures}) and delivered by its next poll as {@link FeedErasure} items. Internal:
 * called by {@code dev.ledger.scrub}; stateless.
 */
public final class FeedErasures {

  private static final Field<String> XID_TO = DSL.field(DSL.name("xid_to"), String.class);

  private FeedErasures() {}

  /**
   * One event of a scrubbed task.
   *
   * @param taskId its task
   * @param seq its {@code seq} in its domain
   * @param xid the id of the transaction that wrote it ({@code events.xid}; 0 for events older than
   *     domain migration V11)
   */
  public record Scrubbed(String taskId, long seq, long xid) {}

  /**
   * Records, for each consumer of {@code domain}, the scrubbed tasks of which it may hold events:
   * those with an event below the end of its checkpoint's window ({@code xid < xid_to}): delivered,
   * or read by a poll whose batch is still in flight (a poll records every window it reads from
   * before it returns). An event above it is delivered later, redacted, and needs no signal. Takes
   * each consumer's row lock in the scrub's transaction, so a poll under way is waited for and a
   * later poll sees the rows once the scrub commits.
   *
   * @param directory the scrub's transaction, on the directory schema
   * @param domain the scrubbed domain
   * @param events the scrubbed tasks' events as they were before the scrub, possibly empty
   * @return how many erasure rows were recorded (one per consumer and task)
   */
  public static int record(DSLContext directory, String domain, List<Scrubbed> events) {
    if (events.isEmpty()) {
      return 0;
    }
    int recorded = 0;
    for (Record2<String, String> c :
        directory
            .select(LEDGER_FEED_CONSUMERS.CONSUMER, DSL.field("{0}::text", String.class, XID_TO))
            .from(LEDGER_FEED_CONSUMERS)
            .where(LEDGER_FEED_CONSUMERS.DOMAIN.eq(domain))
            .orderBy(LEDGER_FEED_CONSUMERS.CONSUMER)
            .forUpdate()
            .fetch()) {
      long to = Long.parseUnsignedLong(c.value2());
      Map<String, List<Long>> held = new LinkedHashMap<>();
      for (Scrubbed e : events) {
        if (Long.compareUnsigned(e.xid(), to) < 0) {
          held.computeIfAbsent(e.taskId(), t -> new ArrayList<>()).add(e.seq());
        }
      }
      if (held.isEmpty()) {
        continue;
      }
      InsertValuesStep4<?, String, String, String, Long[]> insert =
          directory.insertInto(
              LEDGER_FEED_ERASURES,
              LEDGER_FEED_ERASURES.CONSUMER,
              LEDGER_FEED_ERASURES.DOMAIN,
              LEDGER_FEED_ERASURES.TASK_ID,
              LEDGER_FEED_ERASURES.SEQS);
      for (Map.Entry<String, List<Long>> t : held.entrySet()) {
        insert =
            insert.values(
                c.value1(),
                domain,
                t.getKey(),
                t.getValue().stream().sorted().toArray(Long[]::new));
      }
      recorded += insert.execute();
    }
    return recorded;
  }
}

package dev.ledger.feed;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_FEED_CONSUMERS;

import java.util.List;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record4;
import org.jooq.impl.DSL;

/**
 * The retention horizon of the feed's consumers: a retention purge tells it which events it
 * removed, and it records, per consumer of the domain, those the consumer had not received by its
 * committed checkpoint (directory migration V10, {@code missed_seq} and {@code missed_later}). A
 * reader of such a consumer is then refused with {@link FeedBehindRetentionException}. Events a
 * consumer already received change nothing. Internal: called by {@code dev.ledger.retention};
 * stateless.
 */
public final class FeedHorizon {

  private static final Field<String> XID_FROM = DSL.field(DSL.name("xid_from"), String.class);
  private static final Field<String> XID_TO = DSL.field(DSL.name("xid_to"), String.class);

  private FeedHorizon() {}

  /**
   * One event a purge removed.
   *
   * @param seq its {@code seq} in its domain
   * @param xid the id of the transaction that wrote it ({@code events.xid}; 0 for events older than
   *     domain migration V11)
   */
  public record Removed(long seq, long xid) {}

  /**
   * Records, for each consumer of {@code domain}, the removed events it had not received: in its
   * checkpoint's window above {@code seq_done} (the largest such seq, kept in {@code missed_seq})
   * or in a later window ({@code xid >= xid_to}, counted in {@code missed_later}). Takes each
   * consumer's row lock, in the purge's transaction: a poll or a checkpoint of the consumer that is
   * under way is waited for (up to the purge's lock timeout), so a batch in flight was read before
   * the events were removed, and a poll after the purge commits sees the record.
   *
   * @param directory the purge's transaction, on the directory schema
   * @param domain the domain whose events were removed
   * @param removed the removed events, possibly empty
   * @return how many consumers missed at least one removed event
   */
  public static int record(DSLContext directory, String domain, List<Removed> removed) {
    if (removed.isEmpty()) {
      return 0;
    }
    int missing = 0;
    for (Record4<String, String, String, Long> c :
        directory
            .select(
                LEDGER_FEED_CONSUMERS.CONSUMER,
                text(XID_FROM),
                text(XID_TO),
                LEDGER_FEED_CONSUMERS.SEQ_DONE)
            .from(LEDGER_FEED_CONSUMERS)
            .where(LEDGER_FEED_CONSUMERS.DOMAIN.eq(domain))
            .orderBy(LEDGER_FEED_CONSUMERS.CONSUMER)
            .forUpdate()
            .fetch()) {
      long from = Long.parseLong(c.value2());
      long to = Long.parseLong(c.value3());
      long seqDone = c.value4();
      long inWindow = 0;
      long later = 0;
      for (Removed r : removed) {
        if (Long.compareUnsigned(r.xid(), to) >= 0) {
          later++;
        } else if (Long.compareUnsigned(r.xid(), from) >= 0 && r.seq() > seqDone) {
          inWindow = Math.max(inWindow, r.seq());
        }
      }
      if (inWindow == 0 && later == 0) {
        continue;
      }
      missing++;
      directory
          .update(LEDGER_FEED_CONSUMERS)
          .set(
              LEDGER_FEED_CONSUMERS.MISSED_SEQ,
              DSL.greatest(LEDGER_FEED_CONSUMERS.MISSED_SEQ, DSL.val(inWindow)))
          .set(LEDGER_FEED_CONSUMERS.MISSED_LATER, LEDGER_FEED_CONSUMERS.MISSED_LATER.plus(later))
          .where(LEDGER_FEED_CONSUMERS.CONSUMER.eq(c.value1()))
          .and(LEDGER_FEED_CONSUMERS.DOMAIN.eq(domain))
          .execute();
    }
    return missing;
  }

  private static Field<String> text(Field<String> xid) {
    return DSL.field("{0}::text", String.class, xid);
  }
}

package dev.ledger.feed;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Ledger;
import dev.ledger.LedgerTransaction;
import dev.ledger.TaskSpec;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A window holds at most four batches' events (more only when one transaction wrote more), so a
 * catch-up over a long log reads bounded windows whatever the table's statistics say, and still
 * delivers every event once, each transaction's events in {@code seq} order.
 */
class FeedWindowTest {

  @RegisterExtension static final PostgresExtension PG = PostgresExtension.ownCluster();

  private static final String DOMAIN = "windows";

  @Test
  void aCatchUpReadsWindowsOfAtMostFourBatchesAndOneLargeTransactionWhole() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    for (int i = 0; i < 15; i++) { // 15 transactions of 2 events each
      ledger.fileAndAdmit(TaskSpec.builder(DOMAIN, "small " + i).build());
    }
    try (Connection c = PG.dataSource().getConnection()) { // one transaction of 20 events
      c.setAutoCommit(false);
      LedgerTransaction tx = ledger.in(c);
      for (int i = 0; i < 10; i++) {
        tx.fileAndAdmit(TaskSpec.builder(DOMAIN, "large " + i).build());
      }
      c.commit();
    }
    for (int i = 0; i < 5; i++) {
      ledger.fileAndAdmit(TaskSpec.builder(DOMAIN, "after " + i).build());
    }
    List<long[]> stored = stored(); // seq, xid
    assertThat(stored).hasSize(60);

    FeedSpec spec = FeedSpec.builder("windows", DOMAIN).batchSize(2).fromStart(true).build();
    List<FeedEvent> delivered = new ArrayList<>();
    List<Long> windowSizes = new ArrayList<>();
    long lastWindow = -1;
    try (Feed feed = ledger.feed(spec)) {
      assertThat(feed.acquire()).isTrue();
      for (int polls = 0; polls < 200 && delivered.size() < stored.size(); polls++) {
        FeedBatch b = FeedLeaseTest.pollFor(feed, Math.min(2, stored.size() - delivered.size()));
        long[] window = window();
        if (window[0] != lastWindow) {
          lastWindow = window[0];
          windowSizes.add(eventsIn(window));
        }
        delivered.addAll(b.events());
        feed.commit(b);
      }
      assertThat(feed.poll().isEmpty()).isTrue();
    }
    assertThat(delivered).extracting(FeedEvent::seq).doesNotHaveDuplicates().hasSize(60);
    assertThat(delivered)
        .extracting(FeedEvent::seq)
        .containsExactlyElementsOf(stored.stream().map(r -> r[0]).toList());
    // the 15 small transactions in windows of at most 8 events (4 transactions each: 8, 8, 8,
    // then 6 before the large one), the large one alone (20), then the last 5 (10, in 8 + 2)
    assertThat(windowSizes).containsExactly(8L, 8L, 8L, 6L, 20L, 8L, 2L);
  }

  /** The domain's events as stored: seq and xid, in seq order. */
  private static List<long[]> stored() throws Exception {
    List<long[]> rows = new ArrayList<>();
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT seq, xid::text FROM "
                    + schema()
                    + ".events ORDER BY xid::text::bigint, seq")) {
      while (rs.next()) {
        rows.add(new long[] {rs.getLong(1), Long.parseLong(rs.getString(2))});
      }
    }
    return rows;
  }

  /** The consumer's window: xid_from and xid_to. */
  private static long[] window() throws Exception {
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT xid_from::text, xid_to::text FROM ledger_feed_consumers"
                    + " WHERE consumer = 'windows' AND domain = '"
                    + DOMAIN
                    + "'")) {
      assertThat(rs.next()).isTrue();
      return new long[] {Long.parseLong(rs.getString(1)), Long.parseLong(rs.getString(2))};
    }
  }

  private static long eventsIn(long[] window) throws Exception {
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(*) FROM "
                    + schema()
                    + ".events WHERE xid >= '"
                    + window[0]
                    + "'::xid8 AND xid < '"
                    + window[1]
                    + "'::xid8")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static String schema() {
    return DomainSchemas.quotedSchemaName(DOMAIN);
  }
}

package dev.ledger.feed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.InvalidInputException;
import dev.ledger.Ledger;
import dev.ledger.Redaction;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One active reader per consumer and domain (the lease, its fence, the takeover), checkpoints in
 * the caller's transaction, and what replay, scrubs and new consumers do to the feed.
 */
class FeedLeaseTest {

  @RegisterExtension static final PostgresExtension PG = PostgresExtension.ownCluster();

  private static final Duration LEASE = Duration.ofSeconds(1);

  private static FeedSpec spec(String consumer, String holder, String... domains) {
    return FeedSpec.builder(consumer, domains).lease(LEASE).holder(holder).fromStart(true).build();
  }

  private static void file(Ledger ledger, String domain, int n) {
    for (int i = 0; i < n; i++) {
      ledger.fileAndAdmit(TaskSpec.builder(domain, "task " + i).build());
    }
  }

  @Test
  void aSecondReaderWaitsTakesOverAfterTheLeaseAndTheFirstsLateCheckpointIsRefused()
      throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    file(ledger, "lease", 3);
    Feed first = ledger.feed(spec("indexer", "first", "lease"));
    Feed second = ledger.feed(spec("indexer", "second", "lease"));
    assertThat(first.acquire()).isTrue();
    assertThat(second.acquire()).isFalse();
    assertThat(second.held()).isEmpty();

    FeedBatch batch = pollFor(first, 6);
    first.commit(batch);
    file(ledger, "lease", 1);
    FeedBatch late = pollFor(first, 2);

    // the first stops renewing; once its lease has expired the second takes it
    long start = System.nanoTime();
    while (!second.acquire()) {
      Thread.sleep(50);
      assertThat(System.nanoTime() - start).isLessThan(Duration.ofSeconds(30).toNanos());
    }
    assertThat(epoch("indexer", "lease")).isEqualTo(2);
    assertThatThrownBy(() -> first.commit(late))
        .isInstanceOf(FeedFencedException.class)
        .hasMessageContaining("epoch 1")
        .satisfies(e -> assertThat(((FeedFencedException) e).domain()).isEqualTo("lease"));
    assertThat(first.held()).isEmpty();
    assertThat(delivered("indexer", "lease")).isEqualTo(6);

    FeedBatch again = second.poll();
    assertThat(again.events()).isEqualTo(late.events());
    second.commit(again);
    assertThat(second.poll().isEmpty()).isTrue();
    second.close();
    assertThat(first.acquire()).as("a closed reader gives its lease back").isTrue();
    assertThat(first.poll().isEmpty()).isTrue();
    first.close();
  }

  @Test
  void aCheckpointInTheCallersTransactionCommitsOrRollsBackWithItsWrites() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    file(ledger, "tx", 2);
    try (Feed feed = ledger.feed(spec("copier", "one", "tx"));
        Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE copied (seq BIGINT PRIMARY KEY)");
      assertThat(feed.acquire()).isTrue();
      FeedBatch batch = pollFor(feed, 4);

      c.setAutoCommit(false);
      for (FeedEvent e : batch.events()) {
        s.execute("INSERT INTO copied VALUES (" + e.seq() + ")");
      }
      feed.commit(batch, c);
      c.rollback();
      assertThat(count(s, "SELECT count(*) FROM copied")).isZero();
      assertThat(feed.poll().events()).isEqualTo(batch.events());

      for (FeedEvent e : batch.events()) {
        s.execute("INSERT INTO copied VALUES (" + e.seq() + ")");
      }
      feed.commit(batch, c);
      c.commit();
      c.setAutoCommit(true);
      assertThat(count(s, "SELECT count(*) FROM copied")).isEqualTo(4);
      assertThat(feed.poll().isEmpty()).isTrue();
      assertThatThrownBy(() -> feed.commit(batch, c))
          .isInstanceOf(InvalidInputException.class)
          .hasMessageContaining("connection");
    }
  }

  @Test
  void replayDeliversNothingAgainAndAScrubbedEventIsDeliveredRedacted() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    ledger.fileAndAdmit(
        TaskSpec.builder("erasure", "Call Ada Lovelace").origin("crm", "contact-1").build());
    try (Feed feed = ledger.feed(spec("mirror", "one", "erasure"))) {
      assertThat(feed.acquire()).isTrue();
      FeedBatch before = pollFor(feed, 2);
      feed.commit(before);
      assertThat(ledger.replay()).isPositive();
      assertThat(feed.poll().isEmpty()).as("a rebuild re-delivers nothing").isTrue();

      ledger.fileAndAdmit(
          TaskSpec.builder("erasure", "Call Grace Hopper").origin("crm", "contact-2").build());
      assertThat(ledger.scrubTasks("erasure", "crm", Redaction.ERASED)).isEqualTo(2);
      // the second task's events, redacted before delivery, and the scrub's own events: each
      // open task it reached invalidated with the redaction's reason (the consumer's signal)
      FeedBatch after = pollFor(feed, 4);
      assertThat(after.events().get(0).payload())
          .doesNotContain("Grace Hopper")
          .contains("[erased]");
      assertThat(after.events().subList(2, 4))
          .extracting(FeedEvent::kind, FeedEvent::taskId)
          .containsExactly(
              org.assertj.core.api.Assertions.tuple("invalidated", before.events().get(0).taskId()),
              org.assertj.core.api.Assertions.tuple("invalidated", after.events().get(0).taskId()));
      assertThat(after.events().get(2).payload()).contains("erased on request");
      assertThat(before.events().get(0).payload()).contains("Ada Lovelace");
    }
  }

  @Test
  void aNewConsumerStartsAtTheEventsWrittenFromNowOnUnlessFromStart() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    file(ledger, "start", 1);
    try (Feed fromNow =
            ledger.feed(FeedSpec.builder("tail", "start").lease(LEASE).holder("t").build());
        Feed fromStart = ledger.feed(spec("history", "h", "start"))) {
      assertThat(fromNow.acquire()).isTrue();
      assertThat(fromStart.acquire()).isTrue();
      assertThat(fromNow.lag()).containsExactly(new FeedLag("start", 0, 0, Duration.ZERO));
      assertThat(fromStart.lag().get(0).pending()).isEqualTo(2);
      file(ledger, "start", 1);
      assertThat(pollFor(fromNow, 2).events())
          .extracting(FeedEvent::kind)
          .containsExactly("created", "admitted");
      FeedBatch first = fromStart.poll();
      assertThat(fromStart.poll().events()).isEqualTo(first.events()); // uncommitted: again
      List<FeedEvent> all = new ArrayList<>(first.events());
      fromStart.commit(first);
      long end = System.nanoTime() + Duration.ofMinutes(5).toNanos();
      while (all.size() < 4 && System.nanoTime() < end) {
        FeedBatch b = fromStart.poll();
        all.addAll(b.events());
        fromStart.commit(b);
      }
      assertThat(all)
          .extracting(FeedEvent::kind)
          .containsExactly("created", "admitted", "created", "admitted");
    }
  }

  @Test
  void badInputIsRefusedNamingTheField() {
    assertThatThrownBy(() -> FeedSpec.builder("", "d").build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("consumer");
    assertThatThrownBy(() -> FeedSpec.builder("c").build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("domains");
    assertThatThrownBy(() -> FeedSpec.builder("c", "d", "d").build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("domains");
    assertThatThrownBy(() -> FeedSpec.builder("c", "d").batchSize(0).build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("batchSize");
    assertThatThrownBy(() -> FeedSpec.builder("c", "d").lease(Duration.ofMillis(10)).build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("lease");
  }

  @Test
  void aRunnerThatListensNeedsRoomForItsListeningConnectionAsTheWorkerPoolDoes() {
    Ledger ledger = Ledger.open(PG.dataSource());
    FeedSpec spec = spec("pooler", "one", "pooler");
    try (com.zaxxer.hikari.HikariDataSource one =
        PostgresExtension.pool(PG.jdbcUrl(), 1, "feed-pooler-test")) {
      // the listening connection would take the pool's only one: refused, naming the field
      assertThatThrownBy(() -> FeedRunner.builder(ledger, spec, one, (e, tx) -> {}).build())
          .isInstanceOfSatisfying(
              InvalidInputException.class, e -> assertThat(e.field()).isEqualTo("dataSource"));
      // polling only is allowed on one connection
      FeedRunner.builder(ledger, spec, one, (e, tx) -> {}).listen(false).build().close();
    }
  }

  @Test
  void twoRunnersOfOneConsumerNeverDeliverAtOnceAndTheSecondTakesOver() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    file(ledger, "runners", 20);
    AtomicInteger inHandler = new AtomicInteger();
    List<String> overlaps = new CopyOnWriteArrayList<>();
    Set<Long> seen = ConcurrentHashMap.newKeySet();
    List<String> byWhom = new CopyOnWriteArrayList<>();
    List<FeedRunner> runners = new ArrayList<>();
    for (String name : List.of("a", "b")) {
      FeedSpec s =
          FeedSpec.builder("follower", "runners")
              .lease(Duration.ofSeconds(2))
              .holder(name)
              .batchSize(5)
              .fromStart(true)
              .build();
      runners.add(
          FeedRunner.builder(
                  ledger,
                  s,
                  PG.dataSource(),
                  (events, tx) -> {
                    if (inHandler.incrementAndGet() > 1) {
                      overlaps.add(name);
                    }
                    Thread.sleep(20);
                    events.forEach(e -> seen.add(e.seq()));
                    byWhom.add(name);
                    inHandler.decrementAndGet();
                  })
              .pollInterval(Duration.ofMillis(100))
              .build());
    }
    runners.get(0).start();
    awaitSeen(seen, 40);
    runners.get(1).start();
    Thread.sleep(300);
    assertThat(runners.get(1).holdsAll()).as("the second waits").isFalse();
    runners.get(0).close(); // gives the lease back: the second takes over at its next try
    file(ledger, "runners", 5);
    awaitSeen(seen, 50);
    runners.get(1).close();
    assertThat(overlaps).isEmpty();
    assertThat(byWhom).contains("a", "b");
    assertThat(runners.get(0).delivered() + runners.get(1).delivered()).isEqualTo(50);
    assertThat(runners.get(0).failures() + runners.get(1).failures()).isZero();
  }

  /**
   * Polls until the batch holds {@code n} events: the watermark is the cluster's oldest running
   * transaction, which another session may hold back. The feed's tests run on a cluster of their
   * JVM's own ({@link PostgresExtension#ownCluster()}), so only this JVM's tests hold it (a lock
   * test of the class before may still be ending): up to five minutes, and the failure names who
   * held it.
   */
  static FeedBatch pollFor(Feed feed, int n) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofMinutes(5).toNanos();
    FeedBatch b = feed.poll();
    while (b.size() < n && System.nanoTime() < end) {
      Thread.sleep(20);
      b = feed.poll();
    }
    if (b.size() != n) {
      assertThat(b.size())
          .as("%s; the sessions holding the watermark back: %s", b.events(), watermarkHolders())
          .isEqualTo(n);
    }
    return b;
  }

  /**
   * The server's sessions whose transaction holds the cluster's xmin, oldest first, for a failure's
   * message: who kept an event from being delivered.
   */
  static String watermarkHolders() {
    try (Connection c = TestServer.ownCluster().adminConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT pid, datname, application_name, state, backend_xid, backend_xmin,"
                    + " now() - xact_start AS age, left(query, 200) AS query"
                    + " FROM pg_stat_activity"
                    + " WHERE pid <> pg_backend_pid()"
                    + " AND (backend_xid IS NOT NULL OR backend_xmin IS NOT NULL)"
                    + " ORDER BY xact_start LIMIT 10")) {
      List<String> rows = new ArrayList<>();
      while (rs.next()) {
        rows.add(
            String.format(
                "[pid %d db %s app '%s' %s xid %s xmin %s for %s: %s]",
                rs.getInt("pid"),
                rs.getString("datname"),
                rs.getString("application_name"),
                rs.getString("state"),
                rs.getString("backend_xid"),
                rs.getString("backend_xmin"),
                rs.getString("age"),
                rs.getString("query")));
      }
      return rows.isEmpty() ? "none" : String.join(", ", rows);
    } catch (Exception e) {
      return "(not read: " + e + ")";
    }
  }

  private static void awaitSeen(Set<Long> seen, int n) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofMinutes(5).toNanos();
    while (seen.size() < n && System.nanoTime() < end) {
      Thread.sleep(20);
    }
    assertThat(seen).hasSize(n);
  }

  private static long epoch(String consumer, String domain) throws Exception {
    return value("epoch", consumer, domain);
  }

  private static long delivered(String consumer, String domain) throws Exception {
    return value("delivered", consumer, domain);
  }

  private static long value(String column, String consumer, String domain) throws Exception {
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement()) {
      return count(
          s,
          "SELECT "
              + column
              + " FROM ledger_feed_consumers WHERE consumer = '"
              + consumer
              + "' AND domain = '"
              + domain
              + "'");
    }
  }

  private static long count(Statement s, String sql) throws Exception {
    try (ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}

package dev.ledger.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.Claimer;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.LedgerStorageException;
import dev.ledger.LedgerTimeoutException;
import dev.ledger.TaskSpec;
import dev.ledger.Timeouts;
import dev.ledger.testing.PostgresExtension;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A controlled claim in a transaction of the ledger's own commits itself in its one round trip
 * (issue 25, docs/controls.md "How it is enforced"): the controls row's lock is released by the
 * server before the claim's answer reaches the client, not by a later commit; the transaction's
 * bounds apply inside it (a lock wait past {@code lock_timeout} is the typed error, and the claim
 * leaves nothing behind); a connection lost during it is an unknown outcome; and inside a caller's
 * transaction nothing is committed.
 */
class ControlledClaimRoundTripTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final Claimer ME = Claimer.of("me").lease(Duration.ofMinutes(5));

  /** Stalls the thread that armed it right after the gated claim's execute returns. */
  private static final StallAfterGatedClaim STALL = new StallAfterGatedClaim();

  private static final ExecutorService THREADS = Executors.newCachedThreadPool();

  private static Ledger ledger;

  @BeforeAll
  static void open() {
    ledger =
        Ledger.open(
            STALL.wrap(PG.dataSource()),
            LedgerConfig.builder()
                .timeouts(Timeouts.defaults().withLock(Duration.ofMillis(300)))
                .build());
  }

  @AfterAll
  static void close() {
    THREADS.shutdownNow();
  }

  /**
   * Files {@code n} tasks into a domain with limits that never bind, and claims one of them, so the
   * ledger has the schema cached and knows it as controlled: the next claims take the gate first.
   *
   * @return the domain's schema
   */
  private static String controlled(String domain, int n) throws SQLException {
    for (int i = 0; i < n; i++) {
      ledger.fileAndAdmit(TaskSpec.builder(domain, "task " + i).build());
    }
    ledger.setLimits(domain, 1000, 1000, Duration.ofSeconds(1));
    assertThat(ledger.claimBatch(domain, ME, 1)).hasSize(1);
    try (Connection c = PG.connect();
        PreparedStatement ps =
            c.prepareStatement("SELECT schema FROM public.ledger_domains WHERE domain = ?")) {
      ps.setString(1, domain);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getString(1).replace("\"", "");
      }
    }
  }

  @Test
  void the_controls_row_is_free_and_the_claim_committed_before_the_claimer_gets_its_answer()
      throws Exception {
    String schema = controlled("round-trip", 5);

    CountDownLatch stalled = STALL.arm();
    Future<List<Lease>> claim = THREADS.submit(() -> ledger.claimBatch("round-trip", ME, 2));
    try {
      assertThat(stalled.await(10, TimeUnit.SECONDS)).isTrue();
      // the claiming thread has its answer but has not gone on: no commit of its own has run
      try (Connection other = PG.connect()) {
        other.setAutoCommit(false);
        try (Statement s = other.createStatement()) {
          s.execute("SET LOCAL lock_timeout = '1ms'");
          try (ResultSet rs =
              s.executeQuery(
                  "SELECT only_row FROM " + schema + ".queue_controls WHERE active FOR UPDATE")) {
            assertThat(rs.next()).isTrue(); // locked at once: nobody holds it
          }
          try (ResultSet rs =
              s.executeQuery(
                  "SELECT count(*) FROM (SELECT slot FROM "
                      + schema
                      + ".queue_control_slots FOR UPDATE) AS x")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(8); // and every slot row (domain V14)
          }
          try (ResultSet rs =
              s.executeQuery("SELECT count(*) FROM " + schema + ".events WHERE kind = 'claimed'")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(3); // the warm-up claim's, and these two
          }
        }
        other.rollback();
      }
    } finally {
      STALL.release();
    }
    assertThat(claim.get(10, TimeUnit.SECONDS)).hasSize(2);
    assertThat(ledger.controls("round-trip").claimedNow()).isEqualTo(3);
  }

  @Test
  void a_lock_wait_past_lock_timeout_is_the_typed_error_and_the_claim_leaves_nothing_behind()
      throws Exception {
    String schema = controlled("bounded", 3);
    String window = rateWindow(schema);

    try (Connection holder = PG.connect()) {
      holder.setAutoCommit(false);
      try (Statement s = holder.createStatement()) {
        s.executeQuery("SELECT 1 FROM " + schema + ".queue_controls WHERE active FOR UPDATE")
            .close();
        // and every slot row (domain V14), as a change of the controls does: the fast path finds
        // none free, the claim passes the exact gate and waits for the controls row
        s.executeQuery("SELECT 1 FROM " + schema + ".queue_control_slots FOR UPDATE").close();
      }
      long t0 = System.nanoTime();
      assertThatThrownBy(() -> ledger.claimBatch("bounded", ME, 2))
          .isInstanceOfSatisfying(
              LedgerTimeoutException.class,
              e -> {
                assertThat(e.bound()).isEqualTo(LedgerTimeoutException.Bound.LOCK);
                assertThat(e.outcomeUnknown()).isFalse();
              });
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
      holder.rollback();
    }
    assertThat(rateWindow(schema)).isEqualTo(window);
    assertThat(claimedEvents(schema)).isEqualTo(1);
    assertThat(ledger.controls("bounded").claimedNow()).isEqualTo(1);
    // and the connection went back to the pool usable: the next claim takes the other two
    assertThat(ledger.claimBatch("bounded", ME, 5)).hasSize(2);
  }

  @Test
  void a_connection_lost_during_the_claim_is_an_unknown_outcome() throws Exception {
    String schema = controlled("lost", 3);
    Ledger patient =
        Ledger.open(
            PG.dataSource(),
            LedgerConfig.builder()
                .timeouts(Timeouts.defaults().withLock(Duration.ofSeconds(30)))
                .build());
    patient.claimBatch("lost", ME, 1); // schema cached, controlled
    try (Connection holder = PG.connect()) {
      holder.setAutoCommit(false);
      try (Statement s = holder.createStatement()) {
        s.executeQuery("SELECT 1 FROM " + schema + ".queue_controls WHERE active FOR UPDATE")
            .close();
        // and every slot row (domain V14), as a change of the controls does: the fast path finds
        // none free, the claim passes the exact gate and waits for the controls row
        s.executeQuery("SELECT 1 FROM " + schema + ".queue_control_slots FOR UPDATE").close();
      }
      Future<List<Lease>> claim = THREADS.submit(() -> patient.claimBatch("lost", ME, 1));
      // statistics are read once per transaction: look and terminate from outside the holder's
      try (Connection looker = PG.connect();
          Statement s = looker.createStatement()) {
        int pid = waitingForLock(looker, schema);
        s.execute("SELECT pg_terminate_backend(" + pid + ")");
      }
      assertThatThrownBy(() -> claim.get(10, TimeUnit.SECONDS))
          .isInstanceOf(java.util.concurrent.ExecutionException.class)
          .satisfies(
              e ->
                  assertThat(e.getCause())
                      .isInstanceOfSatisfying(
                          LedgerStorageException.class,
                          s -> assertThat(s.outcomeUnknown()).isTrue()));
      holder.rollback();
    }
    // the server rolled it back: nothing of it was claimed
    assertThat(claimedEvents(schema)).isEqualTo(2);
  }

  @Test
  void inside_a_callers_transaction_the_claim_commits_nothing_and_holds_the_row_to_its_end()
      throws Exception {
    String schema = controlled("joined", 3);
    String window = rateWindow(schema);

    try (Connection mine = PG.connect()) {
      mine.setAutoCommit(false);
      assertThat(ledger.in(mine).claimBatch("joined", ME, 2)).hasSize(2);
      assertThat(mine.getAutoCommit()).isFalse();
      try (Connection other = PG.connect()) {
        other.setAutoCommit(false);
        try (Statement s = other.createStatement()) {
          s.execute("SET LOCAL lock_timeout = '50ms'");
          assertThatThrownBy(
                  () ->
                      s.executeQuery(
                          "SELECT 1 FROM " + schema + ".queue_controls WHERE active FOR UPDATE"))
              .isInstanceOfSatisfying(
                  SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("55P03"));
        }
        other.rollback();
      }
      assertThat(claimedEvents(schema)).isEqualTo(1);
      mine.rollback();
    }
    assertThat(claimedEvents(schema)).isEqualTo(1);
    assertThat(rateWindow(schema)).isEqualTo(window);
    assertThat(ledger.controls("joined").claimedNow()).isEqualTo(1);
  }

  /** The pid of the session waiting for a lock on the controls row, within 10 s. */
  private static int waitingForLock(Connection on, String schema) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      try (Statement s = on.createStatement();
          ResultSet rs =
              s.executeQuery(
                  "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                      + " AND query LIKE '%"
                      + schema
                      + "%queue_controls%'")) {
        if (rs.next()) {
          return rs.getInt(1);
        }
      }
      Thread.sleep(20);
    }
    throw new AssertionError("no claim waited for the controls row");
  }

  private static int claimedEvents(String schema) throws SQLException {
    try (Connection c = PG.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT count(*) FROM " + schema + ".events WHERE kind = 'claimed'")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static String rateWindow(String schema) throws SQLException {
    try (Connection c = PG.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT rate_slot || '/' || coalesce(rate_counts, '') FROM "
                    + schema
                    + ".queue_controls")) {
      assertThat(rs.next()).isTrue();
      return rs.getString(1);
    }
  }

  /**
   * A data source whose prepared statements, once armed by a thread, stall that thread right after
   * the execute of a statement locking the controls row returns, until released: the point where a
   * claim that commits itself has its answer and one in the ledger's transaction would still hold
   * the row until its commit.
   */
  private static final class StallAfterGatedClaim {
    private final AtomicBoolean armed = new AtomicBoolean();
    private final AtomicInteger stalls = new AtomicInteger();
    private volatile CountDownLatch reached = new CountDownLatch(1);
    private volatile CountDownLatch go = new CountDownLatch(0);

    CountDownLatch arm() {
      reached = new CountDownLatch(1);
      go = new CountDownLatch(1);
      armed.set(true);
      return reached;
    }

    void release() {
      armed.set(false);
      go.countDown();
    }

    DataSource wrap(DataSource ds) {
      return proxy(
          DataSource.class,
          ds,
          (m, args, result) ->
              m.getName().equals("getConnection") ? connection((Connection) result) : result);
    }

    private Connection connection(Connection c) {
      return proxy(
          Connection.class,
          c,
          (m, args, result) ->
              m.getName().equals("prepareStatement")
                      && ((String) args[0]).contains("queue_controls")
                      && ((String) args[0]).contains("for update")
                  ? statement((PreparedStatement) result)
                  : result);
    }

    private PreparedStatement statement(PreparedStatement ps) {
      return proxy(
          PreparedStatement.class,
          ps,
          (m, args, result) -> {
            if (m.getName().equals("execute") && armed.compareAndSet(true, false)) {
              stalls.incrementAndGet();
              reached.countDown();
              if (!go.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the test never released the stalled claim");
              }
            }
            return result;
          });
    }

    /** After-call hook of a proxy: what to return instead of the real result. */
    private interface After {
      Object after(java.lang.reflect.Method m, Object[] args, Object result) throws Exception;
    }

    private static <T> T proxy(Class<T> type, T target, After after) {
      InvocationHandler h =
          (p, m, args) -> {
            Object result;
            try {
              result = m.invoke(target, args);
            } catch (InvocationTargetException e) {
              throw e.getCause();
            }
            return after.after(m, args, result);
          };
      return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, h));
    }
  }
}

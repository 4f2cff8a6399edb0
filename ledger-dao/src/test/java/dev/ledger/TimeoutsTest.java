package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.LedgerTimeoutException.Bound;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.BlackholeProxy;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every wait of a call has a bound ({@link Timeouts}), and when one runs out the call ends with a
 * {@link LedgerTimeoutException} naming it, its transaction rolled back and its connection given
 * back: a row another transaction holds (lock), a statement that runs too long (statement), a
 * blackholed link (network), a server that cannot be reached (connect).
 */
class TimeoutsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final Timeouts SHORT =
      Timeouts.defaults()
          .withLock(Duration.ofMillis(300))
          .withStatement(Duration.ofSeconds(20))
          .withNetwork(Duration.ofSeconds(1))
          .withConnect(Duration.ofSeconds(1));

  static Ledger ledger;

  @BeforeAll
  static void open() {
    ledger = Ledger.open(PG.dataSource(), LedgerConfig.builder().timeouts(SHORT).build());
  }

  @Test
  void a_row_another_transaction_holds_makes_invalidate_complete_claim_and_heartbeat_task_busy()
      throws Exception {
    String domain = "busy";
    String claimed = ledger.fileAndAdmit(TaskSpec.builder(domain, "claimed").build());
    Lease lease = ledger.claim(claimed, "w1", Duration.ofMinutes(5), List.of(), Label.PUBLIC);
    String admitted = ledger.fileAndAdmit(TaskSpec.builder(domain, "admitted").build());
    try (Connection other = PostgresExtension.connect(PG.databaseName())) {
      other.setAutoCommit(false);
      lockRows(other, domain, claimed, admitted);

      assertLockBound("invalidate", () -> run(() -> ledger.invalidate(admitted, "why", null)));
      assertLockBound(
          "claim",
          () -> ledger.claim(admitted, "w2", Duration.ofMinutes(1), List.of(), Label.PUBLIC));
      assertLockBound("complete", () -> run(() -> ledger.complete(lease, "done")));
      assertLockBound("heartbeat", () -> ledger.heartbeat(lease, Duration.ofMinutes(5)));
      other.rollback();
    }
    // nothing was written, and the calls work once the rows are free
    assertThat(ledger.get(admitted).status()).isEqualTo(Status.ADMITTED);
    assertThat(ledger.get(claimed).status()).isEqualTo(Status.CLAIMED);
    ledger.complete(lease, "done");
    ledger.invalidate(admitted, "why", null);
    assertThat(ledger.get(claimed).status()).isEqualTo(Status.COMPLETED);
    assertThat(ledger.get(admitted).status()).isEqualTo(Status.INVALIDATED);
  }

  @Test
  void a_statement_running_past_its_bound_is_a_statement_timeout_and_the_lock_bound_is_not_used()
      throws Exception {
    Ledger slow =
        Ledger.open(
            PG.dataSource(),
            LedgerConfig.builder()
                .timeouts(
                    Timeouts.defaults()
                        .withLock(Duration.ofSeconds(30))
                        .withStatement(Duration.ofMillis(400)))
                .build());
    String id = slow.fileAndAdmit(TaskSpec.builder("slow", "t").build());
    try (Connection other = PostgresExtension.connect(PG.databaseName())) {
      other.setAutoCommit(false);
      lockRows(other, "slow", id);
      long start = System.nanoTime();
      LedgerTimeoutException e =
          catchThrowableOfType(
              LedgerTimeoutException.class, () -> slow.invalidate(id, "why", null));
      long ms = (System.nanoTime() - start) / 1_000_000;
      assertThat(e.bound()).isEqualTo(Bound.STATEMENT);
      assertThat(e.limit()).isEqualTo(Duration.ofMillis(400));
      assertThat(e.sqlState()).isEqualTo("57014");
      assertThat(e.getMessage())
          .isEqualTo(
              "invalidate: a statement ran longer than the statement bound (400 ms) (SQLState"
                  + " 57014)");
      assertThat(ms).isBetween(300L, 10_000L);
      other.rollback();
    }
    assertThat(slow.get(id).status()).isEqualTo(Status.ADMITTED);
  }

  @Test
  void the_bounds_end_with_the_ledgers_transaction_and_leave_the_pools_connection_as_it_was()
      throws Exception {
    try (HikariDataSource one = PostgresExtension.pool(PG.jdbcUrl(), 1)) {
      Ledger onOne = Ledger.open(one, LedgerConfig.builder().timeouts(SHORT).build());
      String id = onOne.fileAndAdmit(TaskSpec.builder("settings", "t").build());
      onOne.get(id);
      try (Connection c = one.getConnection();
          Statement s = c.createStatement()) {
        assertThat(c.getNetworkTimeout()).isZero();
        assertThat(setting(s, "lock_timeout")).isEqualTo("0");
        assertThat(setting(s, "statement_timeout")).isEqualTo("0");
      }
    }
  }

  @Test
  void inside_a_callers_transaction_the_callers_settings_are_left_alone() throws Exception {
    try (Connection c = PostgresExtension.connect(PG.databaseName());
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      s.execute("SET LOCAL lock_timeout = '7s'");
      ledger.in(c).fileAndAdmit(TaskSpec.builder("caller", "t").build());
      assertThat(setting(s, "lock_timeout")).isEqualTo("7s");
      assertThat(setting(s, "statement_timeout")).isEqualTo("0");
      assertThat(c.getNetworkTimeout()).isZero();
      c.commit();
    }
  }

  @Test
  void a_blackholed_link_ends_get_heartbeat_and_complete_within_the_network_bound_and_recovers()
      throws Exception {
    try (BlackholeProxy proxy = BlackholeProxy.to(PG.jdbcUrl());
        HikariDataSource pool = PostgresExtension.pool(proxy.jdbcUrl(PG.jdbcUrl()), 4)) {
      pool.setConnectionTimeout(1000);
      Ledger remote = Ledger.open(pool, LedgerConfig.builder().timeouts(SHORT).build());
      String id = remote.fileAndAdmit(TaskSpec.builder("partitioned", "t").build());
      Lease lease = remote.claim(id, "w1", Duration.ofMinutes(5), List.of(), Label.PUBLIC);

      proxy.blackhole();
      for (Supplier<Object> call :
          List.<Supplier<Object>>of(
              () -> remote.get(id),
              () -> remote.heartbeat(lease, Duration.ofMinutes(5)),
              () -> run(() -> remote.complete(lease, "done")))) {
        long start = System.nanoTime();
        LedgerTimeoutException e = catchThrowableOfType(LedgerTimeoutException.class, call::get);
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertThat(e).isNotNull();
        assertThat(e.bound()).isIn(Bound.NETWORK, Bound.CONNECT);
        assertThat(e.getMessage()).contains("database unreachable").doesNotContain("password");
        assertThat(ms).isLessThan(5_000);
      }
      assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isZero();

      proxy.restore();
      remote.complete(lease, "done");
      assertThat(remote.get(id).status()).isEqualTo(Status.COMPLETED);
      assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isZero();
    }
  }

  @Test
  void a_server_that_does_not_answer_the_connection_is_database_unreachable_within_the_pools_bound()
      throws Exception {
    try (BlackholeProxy proxy = BlackholeProxy.to(PG.jdbcUrl())) {
      proxy.blackhole();
      HikariConfig config = new HikariConfig();
      config.setJdbcUrl(proxy.jdbcUrl(PG.jdbcUrl()) + "&connectTimeout=1");
      config.setMaximumPoolSize(2);
      config.setConnectionTimeout(1000);
      config.setInitializationFailTimeout(-1); // the pool starts although the server is cut off
      try (HikariDataSource pool = new HikariDataSource(config)) {
        long start = System.nanoTime();
        LedgerTimeoutException e =
            catchThrowableOfType(
                LedgerTimeoutException.class,
                () -> Ledger.open(pool, LedgerConfig.builder().timeouts(SHORT).build()));
        assertThat(e.bound()).isEqualTo(Bound.CONNECT);
        assertThat(e.getMessage())
            .startsWith(
                "open: database unreachable: no connection within the connection pool's own bound");
        assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(5_000);
      }
    }
  }

  @Test
  void opening_over_a_blackholed_link_ends_within_the_network_bound() throws Exception {
    Ledger.open(PG.dataSource()); // the directory exists: opening only reads
    try (BlackholeProxy proxy = BlackholeProxy.to(PG.jdbcUrl());
        HikariDataSource pool = PostgresExtension.pool(proxy.jdbcUrl(PG.jdbcUrl()), 2)) {
      pool.setConnectionTimeout(1000);
      pool.getConnection().close(); // a connection made before the link goes dark
      proxy.blackhole();
      long start = System.nanoTime();
      LedgerTimeoutException e =
          org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
              Duration.ofSeconds(30),
              () ->
                  catchThrowableOfType(
                      LedgerTimeoutException.class,
                      () -> Ledger.open(pool, LedgerConfig.builder().timeouts(SHORT).build())),
              "Ledger.open hung on a blackholed link");
      long ms = (System.nanoTime() - start) / 1_000_000;
      assertThat(e).isNotNull();
      assertThat(e.bound()).isIn(Bound.NETWORK, Bound.CONNECT);
      assertThat(ms).isLessThan(10_000);
      assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isZero();
    }
  }

  @Test
  void a_first_filing_waits_for_another_provisioner_of_the_domain_no_longer_than_the_lock_bound()
      throws Exception {
    try (Connection other = PostgresExtension.connect(PG.databaseName());
        Statement s = other.createStatement()) {
      other.setAutoCommit(false);
      s.execute("SELECT pg_advisory_xact_lock(hashtext('ledger_domain:' || 'held-new'))");
      long start = System.nanoTime();
      LedgerTimeoutException e =
          catchThrowableOfType(
              LedgerTimeoutException.class,
              () -> ledger.file(TaskSpec.builder("held-new", "t").build()));
      long ms = (System.nanoTime() - start) / 1_000_000;
      assertThat(e.bound()).isEqualTo(Bound.LOCK);
      assertThat(e.getMessage()).startsWith("provision domain 'held-new': task busy: ");
      assertThat(ms).isBetween(250L, 5_000L);
      other.rollback();
    }
    assertThat(ledger.get(ledger.file(TaskSpec.builder("held-new", "t").build())).status())
        .isEqualTo(Status.PROPOSED);
  }

  @Test
  void bounds_are_checked_naming_the_field() {
    assertThatThrownBy(() -> Timeouts.defaults().withLock(Duration.ZERO))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("lock: must be longer than zero");
    assertThatThrownBy(() -> Timeouts.defaults().withNetwork(null))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("network: must not be null");
    assertThatThrownBy(() -> Timeouts.defaults().withStatement(Duration.ofNanos(1500)))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("statement: must be a whole number of milliseconds");
    assertThatThrownBy(() -> Timeouts.defaults().withConnect(Duration.ofDays(30)))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("connect: must be at most 2147483647 ms");
    assertThatThrownBy(() -> LedgerConfig.builder().timeouts(null).build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("timeouts: must not be null");
    assertThat(LedgerConfig.defaults().timeouts())
        .isEqualTo(
            new Timeouts(
                Duration.ofSeconds(5),
                Duration.ofSeconds(30),
                Duration.ofSeconds(45),
                Duration.ofSeconds(10)));
  }

  private static void assertLockBound(String operation, Supplier<Object> call) {
    long start = System.nanoTime();
    LedgerTimeoutException e = catchThrowableOfType(LedgerTimeoutException.class, call::get);
    long ms = (System.nanoTime() - start) / 1_000_000;
    assertThat(e).as(operation).isNotNull();
    assertThat(e.bound()).isEqualTo(Bound.LOCK);
    assertThat(e.limit()).isEqualTo(Duration.ofMillis(300));
    assertThat(e.sqlState()).isEqualTo("55P03");
    assertThat(e.outcomeUnknown()).isFalse();
    assertThat(e.getMessage())
        .isEqualTo(
            operation
                + ": task busy: waited longer than the lock bound (300 ms) for a lock another"
                + " transaction holds on the task or its domain (SQLState 55P03); retry later");
    assertThat(ms).as(operation + " took %d ms", ms).isBetween(250L, 5_000L);
  }

  private static void lockRows(Connection other, String domain, String... ids) throws Exception {
    try (PreparedStatement ps =
        other.prepareStatement(
            "SELECT id FROM "
                + DomainSchemas.quotedSchemaName(domain)
                + ".tasks WHERE id = ANY (?) FOR UPDATE")) {
      ps.setArray(1, other.createArrayOf("text", ids));
      try (ResultSet rs = ps.executeQuery()) {
        int n = 0;
        while (rs.next()) {
          n++;
        }
        assertThat(n).isEqualTo(ids.length);
      }
    }
  }

  private static String setting(Statement s, String name) throws Exception {
    try (ResultSet rs = s.executeQuery("SHOW " + name)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static Object run(Runnable r) {
    r.run();
    return null;
  }
}

package dev.ledger.tenants;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.migrate.Fleet;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * 200 registered tenants and a connection budget of 24 (8 threads, each holding up to 3 at once: a
 * call nests a second connection while the ledger's caches fill): 8 threads run a cycle in every
 * tenant, in a shuffled order, while the directory's count and the server's {@code
 * pg_stat_activity} are sampled. The tenants live in 10 databases made from one migrated template,
 * 20 tenants per database, each with a DSN of its own (its {@code ApplicationName}) and so a pool
 * of its own: the budget is about pools and connections, and making 200 databases would cost this
 * test a minute.
 */
// slow (200 tenant databases): run on purpose, -Dledger.test.groups=slow
@Tag("slow")
class TenantBudgetTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final int TENANTS = 200;
  private static final int BUDGET = 24;
  private static final int DATABASE_COUNT = 10;
  private static final String PREFIX =
      "ledger_tb_" + UUID.randomUUID().toString().substring(0, 8).toLowerCase(Locale.ROOT) + "_";
  private static final List<String> DATABASES = new ArrayList<>();
  private static String template;

  @BeforeAll
  static void twoHundredTenants() throws SQLException {
    template = PostgresExtension.newDatabase();
    try (HikariDataSource ds = PostgresExtension.pool(TestServer.get().urlFor(template), 4)) {
      Ledger.open(ds).provision(Cycles.DOMAIN);
    }
    try (Connection c = TestServer.get().adminConnection();
        Statement s = c.createStatement()) {
      for (int i = 0; i < DATABASE_COUNT; i++) {
        String db = PREFIX + i;
        s.execute("CREATE DATABASE " + db + " TEMPLATE " + template);
        DATABASES.add(db);
      }
    }
    Fleet fleet = Fleet.builder().control(PG.dataSource()).build();
    for (int i = 0; i < TENANTS; i++) {
      String tenant = String.format("b%03d", i);
      String url = TestServer.get().urlFor(DATABASES.get(i % DATABASE_COUNT));
      fleet.register(tenant, url + (url.contains("?") ? "&" : "?") + "ApplicationName=" + tenant);
    }
    assertThat(fleet.migrate().active()).isEqualTo(TENANTS);
  }

  @AfterAll
  static void dropThem() throws SQLException {
    for (String db : DATABASES) {
      PostgresExtension.dropDatabase(db);
    }
    PostgresExtension.dropDatabase(template);
  }

  @Test
  void open_connections_stay_within_the_budget_with_200_registered_tenants() throws Exception {
    List<String> picks = new ArrayList<>();
    for (int i = 0; i < TENANTS; i++) {
      picks.add(String.format("b%03d", i));
    }
    Collections.shuffle(picks, new Random(14));
    AtomicInteger next = new AtomicInteger();
    Map<String, AtomicInteger> done = new ConcurrentHashMap<>();
    List<Throwable> failures = new CopyOnWriteArrayList<>();
    AtomicLong maxOpen = new AtomicLong();
    AtomicLong maxSessions = new AtomicLong();
    AtomicBoolean sampling = new AtomicBoolean(true);

    try (TenantDirectory directory =
        TenantDirectory.builder()
            .control(PG.dataSource())
            .refreshInterval(Duration.ZERO)
            .connectionBudget(BUDGET)
            .connectionsPerTenant(3)
            // the fleet migrated every tenant and the template holds the domain: no runtime DDL,
            // so a tenant's first ledger does not resolve the migration set (Flyway) on open
            .ledgerConfig(LedgerConfig.builder().runtimeDdl(false).build())
            // 8 threads each opening a new tenant's first connection, on 2 busy cores: a wait for
            // the budget may be long, and a refused one would fail the cycle
            .connectTimeout(Duration.ofSeconds(15))
            .open()) {
      assertThat(directory.served()).hasSize(TENANTS);
      assertThat(directory.openConnections()).isZero();
      Thread sampler =
          new Thread(
              () -> {
                try (Connection c = TestServer.get().adminConnection()) {
                  while (sampling.get()) {
                    maxOpen.accumulateAndGet(directory.openConnections(), Math::max);
                    maxSessions.accumulateAndGet(sessions(c), Math::max);
                  }
                } catch (SQLException e) {
                  failures.add(e);
                }
              });
      sampler.start();
      List<Thread> workers = new ArrayList<>();
      for (int w = 0; w < 8; w++) {
        String holder = "worker-" + w;
        Thread t =
            new Thread(
                () -> {
                  for (int k = next.getAndIncrement();
                      k < picks.size();
                      k = next.getAndIncrement()) {
                    String tenant = picks.get(k);
                    try {
                      directory.run(tenant, l -> Cycles.cycle(l, holder));
                      done.computeIfAbsent(tenant, x -> new AtomicInteger()).incrementAndGet();
                    } catch (RuntimeException | AssertionError e) {
                      failures.add(e);
                    }
                  }
                });
        t.start();
        workers.add(t);
      }
      for (Thread t : workers) {
        t.join(TimeUnit.MINUTES.toMillis(5));
      }
      sampling.set(false);
      sampler.join();

      assertThat(failures).isEmpty();
      assertThat(done).hasSize(TENANTS);
      assertThat(done.values()).allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
      assertThat(maxOpen.get()).isBetween(2L, (long) BUDGET);
      // the server's view lags the directory's: a backend whose client closed the connection
      // exits a moment later and is counted until then (seen: 25 of 24 on a loaded machine,
      // while the directory held at most 24); a leak past the budget still fails this
      assertThat(maxSessions.get()).isBetween(2L, (long) BUDGET + LINGERING);
      assertThat(directory.openConnections()).isLessThanOrEqualTo(BUDGET);
    }
    try (Connection c = TestServer.get().adminConnection()) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (sessions(c) > 0 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(sessions(c)).isZero();
    }
  }

  /**
   * A busy tenant's second caller waits for the tenant's own connection while the budget is spent,
   * instead of making the least recently used tenant give up its only one (a fork and cold caches
   * on that tenant's next call: what B11 measured when every call could evict).
   */
  @Test
  void a_pool_that_holds_a_connection_does_not_grow_by_evicting_another_tenant() throws Exception {
    List<String> three = List.of("b000", "b001", "b002");
    try (TenantDirectory directory =
        TenantDirectory.builder()
            .control(PG.dataSource())
            .refreshInterval(Duration.ZERO)
            .connectionBudget(3)
            .connectionsPerTenant(2)
            .ledgerConfig(LedgerConfig.builder().runtimeDdl(false).build())
            .connectTimeout(Duration.ofSeconds(15))
            .open()) {
      for (String t : three) {
        directory.run(t, l -> Cycles.cycle(l, "warm"));
      }
      assertThat(directory.openConnections()).isEqualTo(3);
      assertThat(directory.connectionsOpened()).isEqualTo(3);
      List<Throwable> failures = new CopyOnWriteArrayList<>();
      Thread second;
      try (Connection held = directory.dataSource("b000").getConnection()) {
        assertThat(held.isValid(5)).isTrue();
        second =
            new Thread(
                () -> {
                  try {
                    directory.run("b000", l -> Cycles.cycle(l, "second"));
                  } catch (RuntimeException | AssertionError e) {
                    failures.add(e);
                  }
                });
        second.start();
        Thread.sleep(20); // the second caller waits in the pool: no idle connection, budget spent
      }
      second.join(TimeUnit.SECONDS.toMillis(30));
      assertThat(failures).isEmpty();
      assertThat(directory.budgetEvictions()).isZero();
      assertThat(directory.connectionsOpened()).isEqualTo(3);
      assertThat(directory.states().stream().filter(s -> three.contains(s.tenant())))
          .allSatisfy(s -> assertThat(s.openConnections()).isEqualTo(1));
      // a tenant with no connection still gets one: the least recently used tenant's (b001) goes
      // (once: one eviction per wait, the evicted connection's permit comes back after it closed)
      directory.run("b002", l -> Cycles.cycle(l, "again"));
      directory.run("b003", l -> Cycles.cycle(l, "fourth"));
      assertThat(directory.budgetEvictions()).isEqualTo(1);
      assertThat(directory.connectionsOpened()).isEqualTo(4);
      Map<String, Integer> open = new java.util.HashMap<>();
      directory.states().forEach(s -> open.put(s.tenant(), s.openConnections()));
      assertThat(List.of(open.get("b000"), open.get("b001"), open.get("b002"), open.get("b003")))
          .containsExactly(1, 0, 1, 1);
    }
    // the other test counts the server's sessions: wait for these to be gone
    try (Connection c = TestServer.get().adminConnection()) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (sessions(c) > 0 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(sessions(c)).isZero();
    }
  }

  /** Backends of closed connections that may still be exiting when the server is sampled. */
  private static final int LINGERING = 2;

  private static long sessions(Connection c) throws SQLException {
    try (PreparedStatement s =
        c.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE datname LIKE ?")) {
      s.setString(1, PREFIX + "%");
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}

package dev.ledger.tenants;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.Task;
import dev.ledger.migrate.Fleet;
import dev.ledger.migrate.FleetReport;
import dev.ledger.migrate.TenantStatus;
import dev.ledger.testing.LogCapture;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.StoppableServer;
import dev.ledger.testing.TestServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The tenant directory on 20 tenants over 3 real PostgreSQL servers: the shared test server (the
 * machine's service when {@code LEDGER_TEST_JDBC_URL} names it, else embedded) and two embedded
 * servers of this class's own, one of which is stopped and started again under load. The tests run
 * in order on one fleet; the last one checks that no secret reached a log, an error or a thread
 * name over all of them.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
// slow (three servers, one stopped): run on purpose, -Dledger.test.groups=slow
@Tag("slow")
class TenantDirectoryTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(TenantDirectoryTest.class);

  private static final String SECRET = "pw-" + UUID.randomUUID();
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(1);

  /** Slack over the connect timeout for a refused call on 2 busy cores. */
  private static final long SLACK_MS = 1_500;

  private static final Map<String, String> DSNS = new LinkedHashMap<>();
  private static final Map<String, StoppableServer> ON = new LinkedHashMap<>();
  private static final List<String> SHARED_DATABASES = new ArrayList<>();
  private static final List<Throwable> ERRORS = Collections.synchronizedList(new ArrayList<>());
  private static StoppableServer serverB;
  private static StoppableServer serverC;
  private static StoppableServer copyOfC;
  private static String filedBeforeStop;
  private static LogCapture logs;
  private static Fleet fleet;

  @BeforeAll
  static void fleetOfTwentyOverThreeServers() throws SQLException {
    logs = LogCapture.begin();
    serverB = StoppableServer.start();
    serverC = StoppableServer.start();
    fleet = Fleet.builder().control(PG.dataSource()).build();
    for (int i = 0; i < 20; i++) {
      String tenant = String.format("t%02d", i);
      String url;
      switch (i % 3) {
        case 0 -> {
          String db = PostgresExtension.newDatabase();
          SHARED_DATABASES.add(db);
          url = TestServer.get().urlFor(db);
        }
        case 1 -> {
          url = serverB.urlFor(serverB.createDatabase(tenant));
          ON.put(tenant, serverB);
        }
        default -> {
          url = serverC.urlFor(serverC.createDatabase(tenant));
          ON.put(tenant, serverC);
        }
      }
      DSNS.put(tenant, Cycles.withPassword(url, SECRET));
      fleet.register(tenant, DSNS.get(tenant));
    }
    FleetReport report = fleet.migrate();
    assertThat(report.active()).isEqualTo(20);
  }

  @AfterAll
  static void cleanUp() throws SQLException {
    for (StoppableServer s : new StoppableServer[] {serverB, serverC, copyOfC}) {
      if (s != null) {
        s.close();
      }
    }
    for (String db : SHARED_DATABASES) {
      PostgresExtension.dropDatabase(db);
    }
    if (logs != null) {
      logs.stop();
    }
  }

  private static TenantDirectoryBuilder directory() {
    return TenantDirectory.builder()
        .control(PG.dataSource())
        .refreshInterval(Duration.ZERO)
        .probeInterval(Duration.ofMillis(100))
        .connectTimeout(CONNECT_TIMEOUT)
        .connectionBudget(60)
        .connectionsPerTenant(3);
  }

  private static List<String> tenantsOn(StoppableServer server) {
    return ON.entrySet().stream()
        .filter(e -> e.getValue() == server)
        .map(Map.Entry::getKey)
        .toList();
  }

  private static List<String> twenty() {
    return List.copyOf(DSNS.keySet());
  }

  @Test
  @Order(1)
  void a_stopped_server_fails_only_its_tenants_fast_and_they_serve_again_after_its_restart()
      throws Exception {
    List<String> down = tenantsOn(serverC);
    List<String> up = twenty().stream().filter(t -> !down.contains(t)).toList();
    assertThat(down).hasSize(6);
    try (TenantDirectory directory = directory().open()) {
      assertThat(directory.served()).isEqualTo(twenty());
      TenantLoad load = new TenantLoad(directory, twenty(), 8);
      load.start();
      load.await(
          "2 cycles in every tenant",
          l -> twenty().stream().allMatch(t -> l.successes(1, t) >= 2),
          60);
      filedBeforeStop = directory.call(down.get(0), l -> Cycles.cycle(l, "before-stop"));

      assertThat(load.refusals).isEmpty();
      LOG.info("phase 2: stopping server C");
      load.phase(2);
      serverC.stop();
      load.await(
          "3 refusals for each stopped tenant and 3 cycles for each other",
          l ->
              down.stream().allMatch(t -> l.refusals(2, t) >= 3)
                  && up.stream().allMatch(t -> l.successes(2, t) >= 3),
          60);
      assertThat(directory.states().stream().filter(s -> !s.reachable()).map(TenantState::tenant))
          .containsExactlyInAnyOrderElementsOf(down);
      LOG.info("copying server C");
      copyOfC = serverC.copyWhileStopped();
      LOG.info("phase 3: restarting server C");

      load.phase(3);
      serverC.restart();
      load.await(
          "a cycle in every tenant after the restart",
          l -> twenty().stream().allMatch(t -> l.successes(3, t) >= 1),
          60);
      load.stop();
      LOG.info("all tenants served again");

      load.failures.forEach(f -> ERRORS.add(f.error()));
      load.refusals.forEach(r -> ERRORS.add(r.error()));
      assertThat(load.failures).isEmpty();
      assertThat(load.refusals)
          .allSatisfy(
              r -> {
                assertThat(down).contains(r.tenant());
                assertThat(r.error().tenant()).isEqualTo(r.tenant());
                assertThat(r.error().reason())
                    .isEqualTo(TenantUnavailableException.Reason.UNREACHABLE);
                assertThat(r.error().getMessage())
                    .startsWith("tenant " + r.tenant() + " is unreachable");
                assertThat(TimeUnit.NANOSECONDS.toMillis(r.nanos()))
                    .isLessThanOrEqualTo(CONNECT_TIMEOUT.toMillis() + SLACK_MS);
              });
      for (String t : up) {
        assertThat(load.refusals(2, t)).isZero();
      }
      assertThat(directory.states()).allSatisfy(s -> assertThat(s.reachable()).isTrue());
    }
  }

  @Test
  @Order(2)
  void a_tenant_moved_to_another_server_is_served_from_it_after_the_next_refresh()
      throws Exception {
    String moved = tenantsOn(serverC).get(0);
    String db = moved;
    try (TenantDirectory directory = directory().reconcile(true).open()) {
      assertThat(directory.ledger(moved).get(filedBeforeStop).id()).isEqualTo(filedBeforeStop);
      directory.call(moved, l -> l.get(filedBeforeStop));
      assertThat(sessions(serverC, db)).isPositive();

      // the copy taken while the server was stopped; the registry re-pointed to it
      String newDsn = Cycles.withPassword(copyOfC.urlFor(db), SECRET);
      fleet.register(moved, newDsn);
      directory.refresh();

      Task before = directory.ledger(moved).get(filedBeforeStop);
      assertThat(before.id()).isEqualTo(filedBeforeStop);
      String after = directory.call(moved, l -> Cycles.cycle(l, "after-move"));
      assertThat(rows(copyOfC, db, after)).isEqualTo(1);
      assertThat(rows(serverC, db, after)).isZero();
      awaitSessions(serverC, db, 0);
      DSNS.put(moved, newDsn);
    }
  }

  @Test
  @Order(3)
  void unknown_provisioning_and_degraded_tenants_are_refused_naming_tenant_and_status()
      throws Exception {
    try (TenantDirectory plain = directory().open();
        TenantDirectory reconciling = directory().reconcile(true).open()) {
      assertRefused(
          plain, "nobody", TenantUnavailableException.Reason.UNKNOWN, "tenant nobody is unknown");

      // registered while running: refused while provisioning, served after one refresh of a
      // reconciling directory (which migrates it), and by the plain one after its next refresh
      String lateDsn = Cycles.withPassword(serverB.urlFor(serverB.createDatabase("late")), SECRET);
      DSNS.put("late", lateDsn);
      fleet.register("late", lateDsn);
      plain.refresh();
      assertRefused(
          plain,
          "late",
          TenantUnavailableException.Reason.PROVISIONING,
          "tenant late is provisioning");
      reconciling.refresh();
      assertThat(reconciling.served()).contains("late");
      String first = reconciling.call("late", l -> Cycles.cycle(l, "late"));
      // a replay reads the events with COPY: the pooled connection unwraps to the driver's
      long replayed = reconciling.call("late", dev.ledger.Ledger::rebuild);
      assertThat(replayed).isEqualTo(4L);
      plain.refresh();
      assertThat(plain.ledger("late").get(first).id()).isEqualTo(first);

      // degraded by a fleet run (its database does not exist): refused until a run makes it
      // active; a plain run skips it, the reconciling directory's retry timer migrates it
      String brokenDsn = Cycles.withPassword(serverB.urlFor("broken"), SECRET);
      DSNS.put("broken", brokenDsn);
      fleet.register("broken", brokenDsn);
      assertThat(fleet.migrate().degraded()).isEqualTo(1);
      plain.refresh();
      assertRefused(
          plain, "broken", TenantUnavailableException.Reason.DEGRADED, "tenant broken is degraded");
      serverB.createDatabase("broken");
      assertThat(fleet.migrate().degraded()).isEqualTo(1);
      plain.refresh();
      assertRefused(
          plain, "broken", TenantUnavailableException.Reason.DEGRADED, "tenant broken is degraded");
      reconciling.refresh();
      assertThat(reconciling.states())
          .filteredOn(st -> st.tenant().equals("broken"))
          .singleElement()
          .satisfies(st -> assertThat(st.status()).isEqualTo(TenantStatus.ACTIVE));
      String repaired = reconciling.call("broken", l -> Cycles.cycle(l, "repaired"));
      plain.refresh();
      assertThat(plain.ledger("broken").get(repaired).id()).isEqualTo(repaired);
    }
  }

  private static void assertRefused(
      TenantDirectory directory,
      String tenant,
      TenantUnavailableException.Reason reason,
      String start) {
    assertThatThrownBy(() -> directory.ledger(tenant))
        .isInstanceOfSatisfying(
            TenantUnavailableException.class,
            e -> {
              ERRORS.add(e);
              assertThat(e.tenant()).isEqualTo(tenant);
              assertThat(e.reason()).isEqualTo(reason);
              assertThat(e.getMessage()).startsWith(start);
            });
  }

  @Test
  @Order(4)
  void no_dsn_or_password_reaches_a_log_line_an_error_or_a_thread_name() {
    String logged = logs.text();
    assertThat((CharSequence) logged)
        .contains("tenant " + tenantsOn(serverC).get(1) + " unreachable")
        .contains("ledger-tenant-t01");
    assertThat(ERRORS).hasSizeGreaterThan(10);
    List<String> texts = new ArrayList<>();
    texts.add(logged);
    ERRORS.forEach(e -> texts.add(Cycles.chain(e)));
    Thread.getAllStackTraces().keySet().forEach(t -> texts.add(t.getName()));
    for (String text : texts) {
      assertThat(text).doesNotContain(SECRET);
      for (String dsn : DSNS.values()) {
        assertThat(text)
            .doesNotContain(dsn)
            .doesNotContain(dsn.substring(0, dsn.indexOf("password=")));
      }
    }
  }

  private static long sessions(StoppableServer server, String db) throws SQLException {
    try (Connection c = DriverManager.getConnection(server.urlFor("postgres"));
        PreparedStatement s =
            c.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE datname = ?")) {
      s.setString(1, db);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static void awaitSessions(StoppableServer server, String db, long expected)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (sessions(server, db) != expected) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(db + " still has " + sessions(server, db) + " sessions");
      }
      Thread.sleep(20);
    }
  }

  private static long rows(StoppableServer server, String db, String taskId) throws SQLException {
    try (Connection c = DriverManager.getConnection(server.urlFor(db));
        PreparedStatement s =
            c.prepareStatement("SELECT count(*) FROM public.ledger_tasks WHERE id = ?")) {
      s.setString(1, taskId);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}

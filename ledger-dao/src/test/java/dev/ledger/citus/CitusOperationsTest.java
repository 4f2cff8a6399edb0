package dev.ledger.citus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.CitusUnsupportedException;
import dev.ledger.Claimer;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.Promotion;
import dev.ledger.PromotionSpec;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.feed.FeedSpec;
import dev.ledger.migrate.Fleet;
import dev.ledger.migrate.FleetReport;
import dev.ledger.migrate.MigrationJob;
import dev.ledger.migrate.MigrationReport;
import dev.ledger.retention.PurgeReport;
import dev.ledger.schedule.ScheduleSpec;
import dev.ledger.schedule.Schedules;
import dev.ledger.schedule.Timing;
import dev.ledger.tenants.TenantDirectory;
import dev.ledger.testing.CitusCluster;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.SettableClock;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The ledger's operations beyond the task's life on a real Citus cluster ({@link CitusCluster}):
 * queue controls, schedules, retention, promotions, the tenant directory serving a tenant whose
 * database is a coordinator, and the migration job's full check ({@code migrate --verify}) of
 * distributed schemas. One database of its own on the shared cluster.
 */
@Tag("slow")
class CitusOperationsTest {

  static final Duration LEASE = Duration.ofMinutes(5);
  static CitusCluster cluster;
  static String url;
  static HikariDataSource pool;
  static SettableClock clock;
  static Ledger ledger;

  @BeforeAll
  static void open() throws Exception {
    cluster = CitusCluster.shared();
    url = cluster.createDatabase("ledger_citus_more");
    pool = PostgresExtension.pool(url, 8);
    clock = new SettableClock(Instant.parse("2026-03-01T09:00:00.250Z"));
    ledger = Ledger.open(pool, LedgerConfig.builder().clock(clock).build());
  }

  @AfterAll
  static void close() {
    if (pool != null) {
      pool.close();
    }
  }

  /** The port of the worker that holds a domain's distributed schema. */
  static int nodeOf(String jdbcUrl, String schema) throws Exception {
    try (Connection c = DriverManager.getConnection(jdbcUrl)) {
      List<List<String>> rows =
          Fixtures.rows(
              c,
              "SELECT DISTINCT nodeport::text FROM citus_shards WHERE citus_table_type = 'schema'"
                  + " AND split_part(replace(table_name::text, '\"', ''), '.', 1) = '"
                  + schema
                  + "'");
      assertThat(rows).hasSize(1);
      return Integer.parseInt(rows.get(0).get(0));
    }
  }

  /** Moves a domain's schema (its colocation group, through one shard) to a worker. */
  static void move(String schema, int toPort) throws Exception {
    int from = nodeOf(url, schema);
    if (from != toPort) {
      try (Connection c = DriverManager.getConnection(url);
          Statement s = c.createStatement()) {
        s.execute(
            "SELECT citus_move_shard_placement(min(shardid), '127.0.0.1', "
                + from
                + ", '127.0.0.1', "
                + toPort
                + ", shard_transfer_mode := 'block_writes') FROM citus_shards"
                + " WHERE split_part(replace(table_name::text, '\"', ''), '.', 1) = '"
                + schema
                + "'");
      }
    }
    assertThat(nodeOf(url, schema)).isEqualTo(toPort);
  }

  static List<Integer> workerPorts() {
    return cluster.workers().stream().map(CitusCluster.Node::port).toList();
  }

  static Lease claim(String domain) {
    return ledger.claimNext(domain, Claimer.of("w").lease(LEASE)).orElseThrow();
  }

  @Test
  void pause_and_the_concurrency_and_rate_limits_hold_claims_back_on_a_distributed_domain()
      throws Exception {
    String domain = "controlled";
    String schema = ledger.provision(domain);
    assertThat(workerPorts()).contains(nodeOf(url, schema));
    for (int i = 0; i < 4; i++) {
      ledger.admit(ledger.file(TaskSpec.builder(domain, "job " + i).build()));
    }
    assertThat(ledger.pause(domain).paused()).isTrue();
    assertThat(ledger.claimNext(domain, Claimer.of("w").lease(LEASE))).isEmpty();
    assertThat(ledger.claimHold(domain)).isPresent();
    assertThat(ledger.resume(domain).paused()).isFalse();

    assertThat(ledger.setLimits(domain, 1, null, null).maxClaimed()).isEqualTo(1);
    Lease first = claim(domain);
    assertThat(ledger.claimNext(domain, Claimer.of("w").lease(LEASE))).isEmpty();
    assertThat(ledger.claimHold(domain)).isPresent();
    ledger.complete(first, null);
    Lease second = claim(domain);
    ledger.complete(second, null);

    ledger.clearLimits(domain);
    ledger.setLimits(domain, null, 1, Duration.ofHours(1));
    Lease third = claim(domain);
    ledger.complete(third, null);
    // one claim an hour: the fourth task waits for the window
    assertThat(ledger.claimNext(domain, Claimer.of("w").lease(LEASE))).isEmpty();
    assertThat(ledger.claimHold(domain)).isPresent();
    ledger.clearLimits(domain);
    ledger.complete(claim(domain), null);
    assertThat(ledger.controls(domain).claimedNow()).isZero();
  }

  @Test
  void due_schedule_ticks_are_filed_into_a_distributed_domain_once() throws Exception {
    String domain = "scheduled";
    String schema = ledger.provision(domain);
    Schedules schedules = ledger.schedules();
    schedules.add(
        ScheduleSpec.builder("minutely", domain, Timing.every(Duration.ofMinutes(1)), "Tick")
            .catchUp(3)
            .build());
    clock.advance(Duration.ofMinutes(10));
    assertThat(schedules.fileDue(domain)).isEqualTo(3);
    assertThat(schedules.fileDue(domain)).isZero();
    assertThat(ledger.withOrigin(domain, Schedules.origin("minutely"))).hasSize(3);
    try (Connection c = pool.getConnection()) {
      assertThat(Fixtures.count(c, "SELECT count(*) FROM \"" + schema + "\".tasks")).isEqualTo(3);
      assertThat(
              Fixtures.count(
                  c, "SELECT count(*) FROM ledger_tasks WHERE domain = '" + domain + "'"))
          .isEqualTo(3);
    }
    Lease tick = claim(domain);
    ledger.complete(tick, null);
    assertThat(ledger.get(tick.taskId()).status()).isEqualTo(Status.COMPLETED);
    schedules.remove("minutely");
  }

  @Test
  void retention_purges_old_terminal_tasks_and_keeps_one_a_task_on_the_other_worker_needs()
      throws Exception {
    String domain = "purged";
    String other = "purged-dependents";
    String schema = ledger.provision(domain);
    String otherSchema = ledger.provision(other);
    int first = workerPorts().get(0);
    int second = workerPorts().get(1);
    move(schema, first);
    move(otherSchema, second);
    List<String> gone = new java.util.ArrayList<>();
    for (int i = 0; i < 3; i++) {
      String id = ledger.file(TaskSpec.builder(domain, "old " + i).build());
      ledger.admit(id);
      ledger.complete(ledger.claim(id, Claimer.of("w").lease(LEASE)), null);
      gone.add(id);
    }
    String needed = ledger.file(TaskSpec.builder(domain, "needed").build());
    ledger.admit(needed);
    ledger.complete(ledger.claim(needed, Claimer.of("w").lease(LEASE)), null);
    String waiting =
        ledger.file(TaskSpec.builder(other, "waits").dependsOn(List.of(needed)).build());
    clock.advance(Duration.ofHours(2));
    String young = ledger.file(TaskSpec.builder(domain, "young").build());
    ledger.admit(young);
    ledger.complete(ledger.claim(young, Claimer.of("w").lease(LEASE)), null);

    ledger.retention().set(domain, Duration.ofHours(1));
    PurgeReport report = ledger.retention().purge(domain, 2, p -> {});
    assertThat(report.tasksRemoved()).isEqualTo(3);
    try (Connection c = pool.getConnection()) {
      assertThat(
              Fixtures.rows(c, "SELECT id FROM \"" + schema + "\".tasks ORDER BY id").stream()
                  .map(r -> r.get(0))
                  .toList())
          .containsExactlyInAnyOrder(needed, young);
      assertThat(
              Fixtures.count(
                  c,
                  "SELECT count(*) FROM \""
                      + schema
                      + "\".events WHERE task_id IN ('"
                      + String.join("','", gone)
                      + "')"))
          .isZero();
      assertThat(
              Fixtures.count(
                  c, "SELECT count(*) FROM ledger_tasks WHERE domain = '" + domain + "'"))
          .isEqualTo(2);
    }
    assertThat(ledger.get(waiting).status()).isEqualTo(Status.PROPOSED);
    assertThat(ledger.retention().purge(domain, 2, p -> {}).tasksRemoved()).isZero();
  }

  @Test
  void a_promotion_is_recorded_once_and_survives_a_rebuild() {
    PromotionSpec spec =
        new PromotionSpec("wiki", "runbook/oncall", "gold", "ana", "bo", "solid", null, "d1", "");
    assertThat(ledger.recordPromotion(spec)).isTrue();
    assertThat(ledger.recordPromotion(spec)).isFalse();
    List<Promotion> before = ledger.promotions("wiki", "runbook/oncall");
    assertThat(before).extracting(p -> p.spec().tier()).containsExactly("gold");
    ledger.rebuild();
    assertThat(ledger.promotions("wiki", "runbook/oncall")).isEqualTo(before);
  }

  @Test
  void the_event_feed_is_refused_with_a_typed_error_naming_the_reason() {
    ledger.provision("fed");
    assertThatThrownBy(() -> ledger.feed(FeedSpec.builder("audit", "fed").build()))
        .isInstanceOf(CitusUnsupportedException.class)
        .hasMessage(
            "feed is not supported on a Citus cluster (docs/scale-out.md): it orders events by"
                + " transaction id, and each node of a cluster has its own transaction ids")
        .extracting(e -> ((CitusUnsupportedException) e).operation())
        .isEqualTo("feed");
  }

  @Test
  void the_full_check_of_every_distributed_schema_finds_none_drifted() {
    ledger.provision("verified");
    MigrationReport report =
        MigrationJob.builder().dataSource(pool).verifyAll(true).build().migrate();
    assertThat(report.ok()).as(report.toString()).isTrue();
    assertThat(report.counts().failed()).isZero();
    assertThat(report.counts().migrated()).isZero();
    assertThat(report.counts().current()).isEqualTo(report.counts().schemas());
  }

  @Test
  void the_tenant_directory_serves_a_tenant_whose_database_is_a_coordinator() throws Exception {
    String tenantUrl = cluster.createDatabase("ledger_citus_tenant");
    String control = "ledger_citus_control";
    try (Connection c =
            DriverManager.getConnection(cluster.urlFor(cluster.coordinator(), "postgres"));
        Statement s = c.createStatement()) {
      s.execute("DROP DATABASE IF EXISTS " + control + " WITH (FORCE)");
      s.execute("CREATE DATABASE " + control);
    }
    try (HikariDataSource controlPool =
        PostgresExtension.pool(cluster.urlFor(cluster.coordinator(), control), 4)) {
      Fleet fleet = Fleet.builder().control(controlPool).build();
      fleet.register("acme", tenantUrl);
      FleetReport report = fleet.migrate();
      assertThat(report.active()).isEqualTo(1);
      try (TenantDirectory directory =
          TenantDirectory.builder()
              .control(controlPool)
              .refreshInterval(Duration.ZERO)
              .connectionBudget(10)
              .connectionsPerTenant(4)
              .open()) {
        String id =
            directory.call(
                "acme",
                l -> {
                  String filed = l.file(TaskSpec.builder("orders", "Ship").build());
                  l.admit(filed);
                  l.complete(l.claim(filed, Claimer.of("w").lease(LEASE)), "shipped");
                  return filed;
                });
        assertThat(directory.ledger("acme").get(id).status()).isEqualTo(Status.COMPLETED);
        String schema = directory.ledger("acme").provision("orders");
        assertThat(workerPorts()).contains(nodeOf(tenantUrl, schema));
      }
    }
  }
}

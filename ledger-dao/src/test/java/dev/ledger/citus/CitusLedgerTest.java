package dev.ledger.citus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Claimer;
import dev.ledger.FailureRecord;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.Redaction;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.WrongStateException;
import dev.ledger.migrate.MigrationJob;
import dev.ledger.migrate.MigrationReport;
import dev.ledger.testing.CitusCluster;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.ReferenceStack;
import dev.ledger.worker.Outcome;
import dev.ledger.worker.WorkerPool;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The ledger on a real Citus cluster ({@link CitusCluster}: a coordinator and two workers): each
 * domain a distributed schema on one worker, the directory on the coordinator.
 */
@Tag("slow")
class CitusLedgerTest {

  static final Duration LEASE = Duration.ofMinutes(5);
  static CitusCluster cluster;
  static String url;
  static HikariDataSource pool;
  static Ledger ledger;

  @BeforeAll
  static void open() throws Exception {
    cluster = CitusCluster.shared();
    url = cluster.createDatabase("ledger_citus_ops");
    pool = PostgresExtension.pool(url, 8);
    ledger = Ledger.open(pool, LedgerConfig.builder().build());
  }

  @AfterAll
  static void close() {
    if (pool != null) {
      pool.close();
    }
  }

  static String nodeOf(String domain) throws Exception {
    try (Connection c = DriverManager.getConnection(url)) {
      List<List<String>> rows =
          Fixtures.rows(
              c,
              "SELECT DISTINCT s.nodeport::text FROM citus_shards s"
                  + " JOIN ledger_domains d ON s.citus_table_type = 'schema'"
                  + " AND s.table_name::text LIKE replace(d.schema, '\"', '') || '.%'"
                  + " WHERE d.domain = '"
                  + domain
                  + "'");
      assertThat(rows).hasSize(1);
      return rows.get(0).get(0);
    }
  }

  @Test
  void provisioning_distributes_the_domain_schema_and_a_task_walks_its_life() throws Exception {
    String schema = ledger.provision("payments");
    assertThat(nodeOf("payments"))
        .isIn(cluster.workers().stream().map(w -> Integer.toString(w.port())).toList());
    String id = ledger.file(TaskSpec.builder("payments", "Pay").build());
    ledger.admit(id);
    Lease lease = ledger.claimNext("payments", "w1", LEASE, List.of(), Label.PUBLIC).orElseThrow();
    assertThat(lease.taskId()).isEqualTo(id);
    assertThat(ledger.claimNext("payments", "w2", LEASE, List.of(), Label.PUBLIC)).isEmpty();
    Lease extended = ledger.heartbeat(lease, Duration.ofMinutes(10));
    ledger.complete(extended, "done");
    assertThat(ledger.get(id).status()).isEqualTo(Status.COMPLETED);
    assertThat(schema).startsWith("ledger_payments_");
  }

  /** Moves a domain's schema (its colocation group, through one shard) to a node. */
  static void move(String domain, int toPort) throws Exception {
    int from = Integer.parseInt(nodeOf(domain));
    if (from == toPort) {
      return;
    }
    try (Connection c = DriverManager.getConnection(url);
        java.sql.Statement s = c.createStatement()) {
      s.execute(
          "SELECT citus_move_shard_placement(min(s.shardid), '127.0.0.1', "
              + from
              + ", '127.0.0.1', "
              + toPort
              + ", shard_transfer_mode := 'block_writes')"
              + " FROM citus_shards s JOIN ledger_domains d"
              + " ON s.table_name::text LIKE replace(d.schema, '\"', '') || '.%'"
              + " WHERE d.domain = '"
              + domain
              + "'");
    }
    assertThat(nodeOf(domain)).isEqualTo(Integer.toString(toPort));
  }

  static boolean blocked(String domain, String id) throws Exception {
    try (Connection c = DriverManager.getConnection(url)) {
      return Fixtures.rows(
              c,
              "SELECT blocked::text FROM \""
                  + ledger.provision(domain)
                  + "\".tasks WHERE id = '"
                  + id
                  + "'")
          .get(0)
          .get(0)
          .equals("true");
    }
  }

  @Test
  void a_dependency_across_two_workers_blocks_until_its_task_completes() throws Exception {
    ledger.provision("orders");
    ledger.provision("billing");
    int first = cluster.workers().get(0).port();
    int second = cluster.workers().get(1).port();
    move("orders", first);
    move("billing", second);
    String order = ledger.file(TaskSpec.builder("orders", "Order").build());
    ledger.admit(order);
    String bill =
        ledger.file(TaskSpec.builder("billing", "Bill").dependsOn(List.of(order)).build());
    ledger.admit(bill);
    // the flag kept by CitusDirectory: the billing task waits on a task of another worker's domain
    assertThatThrownBy(() -> ledger.claim(bill, Claimer.of("b")))
        .isInstanceOf(WrongStateException.class);
    assertThat(blocked("billing", bill)).isTrue();
    assertThat(ledger.claimNext("billing", "b", LEASE, List.of(), Label.PUBLIC)).isEmpty();
    Lease lease = ledger.claim(order, Claimer.of("o"));
    ledger.complete(lease, null);
    assertThat(blocked("billing", bill)).isFalse();
    assertThat(
            ledger.claimNext("billing", "b", LEASE, List.of(), Label.PUBLIC).orElseThrow().taskId())
        .isEqualTo(bill);
    // a task filed after its dependency completed is claimable at once
    String late =
        ledger.file(TaskSpec.builder("billing", "Late").dependsOn(List.of(order)).build());
    ledger.admit(late);
    assertThat(blocked("billing", late)).isFalse();
    assertThat(ledger.claim(late, Claimer.of("b")).taskId()).isEqualTo(late);
    // a batch filing (fileAll, admitted at once): one waits on an open task, one on a completed one
    String open = ledger.file(TaskSpec.builder("orders", "Open").build());
    List<String> batch =
        ledger.fileAll(
            List.of(
                TaskSpec.builder("billing", "Waits").dependsOn(List.of(open)).build(),
                TaskSpec.builder("billing", "Ready").dependsOn(List.of(order)).build()));
    assertThat(blocked("billing", batch.get(0))).isTrue();
    assertThat(blocked("billing", batch.get(1))).isFalse();
  }

  static boolean routeCompleted(String id) throws Exception {
    try (Connection c = DriverManager.getConnection(url)) {
      return Fixtures.rows(c, "SELECT completed::text FROM ledger_tasks WHERE id = '" + id + "'")
          .get(0)
          .get(0)
          .equals("true");
    }
  }

  /**
   * docs/scale-out.md, "Which writers Citus mode supports": another writer's SQL (here the
   * reference stack's, on the coordinator) completes a task of a domain on one worker; its route's
   * {@code completed} and the {@code blocked} flag of its dependent on the other worker are left as
   * they were, until a replay recomputes them.
   */
  @Test
  void another_writers_completion_is_kept_in_the_directory_only_after_a_replay() throws Exception {
    ledger.provision("written-up");
    ledger.provision("written-down");
    move("written-up", cluster.workers().get(0).port());
    move("written-down", cluster.workers().get(1).port());
    String up = ledger.file(TaskSpec.builder("written-up", "Upstream").build());
    ledger.admit(up);
    String down =
        ledger.file(TaskSpec.builder("written-down", "Waits").dependsOn(List.of(up)).build());
    ledger.admit(down);
    assertThat(blocked("written-down", down)).isTrue();
    try (ReferenceStack ref = new ReferenceStack(DriverManager.getConnection(url))) {
      ref.append(
          up,
          "claimed",
          "2026-12-07T10:00:00.000000Z",
          "{\"holder\":\"ref\",\"until\":\"2999-01-01T00:00:00.000000Z\"}");
      ref.append(up, "completed", "2026-12-07T10:00:01.000000Z", "{\"handoff\":\"by ref\"}");
    }
    assertThat(ledger.get(up).status()).isEqualTo(Status.COMPLETED);
    // the domain's triggers ran on its worker, where there is no directory: nothing kept
    assertThat(routeCompleted(up)).isFalse();
    assertThat(blocked("written-down", down)).isTrue();
    assertThat(ledger.claimNext("written-down", "w", LEASE, List.of(), Label.PUBLIC)).isEmpty();
    ledger.replay();
    assertThat(routeCompleted(up)).isTrue();
    assertThat(blocked("written-down", down)).isFalse();
    assertThat(
            ledger
                .claimNext("written-down", "w", LEASE, List.of(), Label.PUBLIC)
                .orElseThrow()
                .taskId())
        .isEqualTo(down);
  }

  /**
   * docs/scale-out.md, "Moving a domain": the guide's two statements as printed, with this
   * cluster's addresses: the first finds the domain's worker and a shard, the second moves the
   * whole schema, and the domain serves from the other worker.
   */
  @Test
  void the_guides_statements_find_a_domains_worker_and_move_it() throws Exception {
    String schema = ledger.provision("payments-guide");
    String id = ledger.file(TaskSpec.builder("payments-guide", "Pay").build());
    ledger.admit(id);
    long shard;
    String host;
    int from;
    try (Connection c = DriverManager.getConnection(url);
        java.sql.Statement s = c.createStatement();
        java.sql.ResultSet rs =
            s.executeQuery(
                "SELECT s.shardid, s.nodename, s.nodeport"
                    + "  FROM citus_shards s JOIN ledger_domains d"
                    + "    ON s.table_name::text = replace(d.schema, '\"', '') || '.tasks'"
                    + " WHERE d.domain = 'payments-guide'")) {
      assertThat(rs.next()).isTrue();
      shard = rs.getLong(1);
      host = rs.getString(2);
      from = rs.getInt(3);
      assertThat(rs.next()).isFalse();
    }
    assertThat(Integer.toString(from)).isEqualTo(nodeOf("payments-guide"));
    int to =
        cluster.workers().stream()
            .mapToInt(CitusCluster.Node::port)
            .filter(p -> p != from)
            .findFirst()
            .orElseThrow();
    try (Connection c = DriverManager.getConnection(url);
        java.sql.Statement s = c.createStatement()) {
      s.execute(
          "SELECT citus_move_shard_placement("
              + shard
              + ", '"
              + host
              + "', "
              + from
              + ", '"
              + host
              + "', "
              + to
              + ",\n shard_transfer_mode := 'block_writes')");
    }
    // every table of the schema moved with the one shard named
    try (Connection c = DriverManager.getConnection(url)) {
      assertThat(
              Fixtures.rows(
                  c,
                  "SELECT DISTINCT nodeport::text FROM citus_shards WHERE table_name::text LIKE '"
                      + schema
                      + ".%'"))
          .containsExactly(List.of(Integer.toString(to)));
    }
    Lease lease =
        ledger.claimNext("payments-guide", "w", LEASE, List.of(), Label.PUBLIC).orElseThrow();
    assertThat(lease.taskId()).isEqualTo(id);
    ledger.complete(lease, null);
    assertThat(ledger.get(id).status()).isEqualTo(Status.COMPLETED);
  }

  @Test
  void a_failed_attempt_files_its_retry_and_a_continuation_holds_its_parent() throws Exception {
    String id = ledger.file(TaskSpec.builder("retry", "Flaky").build());
    ledger.admit(id);
    Lease lease = ledger.claimNext("retry", "w1", LEASE, List.of(), Label.PUBLIC).orElseThrow();
    FailureRecord failed = ledger.worker().fail(lease, "boom", 3, Duration.ZERO);
    assertThat(failed.deadLetter()).isFalse();
    assertThat(ledger.get(id).status()).isEqualTo(Status.INVALIDATED);
    assertThat(ledger.worker().admitDue("retry", 10)).containsExactly(failed.retryId());
    Lease retry = ledger.claimNext("retry", "w1", LEASE, List.of(), Label.PUBLIC).orElseThrow();
    assertThat(retry.taskId()).isEqualTo(failed.retryId());
    assertThat(retry.attempt()).isEqualTo(1);
    // a continuation: the parent is not claimable while it is open
    String next =
        ledger.file(
            TaskSpec.builder("retry", "Next").origin("continues:" + retry.taskId(), "e1").build());
    ledger.admit(next);
    ledger.release(retry);
    Lease first = ledger.claimNext("retry", "w2", LEASE, List.of(), Label.PUBLIC).orElseThrow();
    assertThat(first.taskId()).isEqualTo(next);
    assertThat(ledger.claimNext("retry", "w2", LEASE, List.of(), Label.PUBLIC)).isEmpty();
    ledger.complete(first, null);
    assertThat(
            ledger.claimNext("retry", "w2", LEASE, List.of(), Label.PUBLIC).orElseThrow().taskId())
        .isEqualTo(retry.taskId());
  }

  @Test
  void replay_and_scrub_run_over_distributed_domains() throws Exception {
    String kept = ledger.file(TaskSpec.builder("scrubbed", "Keep").build());
    String secret =
        ledger.file(
            TaskSpec.builder("scrubbed", "Secret")
                .body("card 4111")
                .origin("mail:7", "m1")
                .build());
    ledger.admit(secret);
    Lease lease = ledger.claimNext("scrubbed", "w", LEASE, List.of(), Label.PUBLIC).orElseThrow();
    ledger.complete(lease, "sent");
    assertThat(ledger.scrubTasks("scrubbed", "mail:7", Redaction.ERASED)).isEqualTo(1);
    assertThat(ledger.get(secret).spec().title()).isEqualTo("[erased]");
    assertThat(ledger.get(secret).spec().body()).isEmpty();
    assertThat(ledger.history(secret).toString()).doesNotContain("4111");
    long events = ledger.replay();
    assertThat(events).isPositive();
    assertThat(ledger.get(secret).status()).isEqualTo(Status.COMPLETED);
    assertThat(ledger.get(secret).spec().title()).isEqualTo("[erased]");
    assertThat(ledger.get(kept).status()).isEqualTo(Status.PROPOSED);
  }

  @Test
  void a_worker_pool_is_woken_through_the_coordinator_and_completes_its_tasks() throws Exception {
    String domain = "pooled";
    ledger.provision(domain);
    java.util.Set<String> handled = java.util.concurrent.ConcurrentHashMap.newKeySet();
    try (WorkerPool pool =
        WorkerPool.builder(ledger)
            .dataSource(pool())
            .pollInterval(Duration.ofMinutes(10))
            .domain(
                domain,
                (task, ctx) -> {
                  handled.add(task.id());
                  return Outcome.done();
                })
            .start()) {
      await(Duration.ofSeconds(60), pool::listening);
      List<String> ids = new java.util.ArrayList<>();
      for (int i = 0; i < 5; i++) {
        String id = ledger.file(TaskSpec.builder(domain, "job " + i).build());
        ledger.admit(id);
        ids.add(id);
      }
      // the pool polls every 10 minutes: only the coordinator's notification wakes it
      await(
          Duration.ofSeconds(60),
          () -> ids.stream().allMatch(id -> ledger.get(id).status() == Status.COMPLETED));
      assertThat(handled).containsExactlyInAnyOrderElementsOf(ids);
    }
  }

  @Test
  void a_domain_moves_to_the_other_worker_while_a_pool_claims_and_completes() throws Exception {
    String domain = "moving";
    String schema = ledger.provision(domain);
    int from = Integer.parseInt(nodeOf(domain));
    int to =
        cluster.workers().stream()
            .mapToInt(CitusCluster.Node::port)
            .filter(p -> p != from)
            .findFirst()
            .orElseThrow();
    List<String> ids = new java.util.ArrayList<>();
    for (int i = 0; i < 120; i++) {
      String id = ledger.file(TaskSpec.builder(domain, "job " + i).build());
      ledger.admit(id);
      ids.add(id);
    }
    java.util.Map<String, Integer> runs = new java.util.concurrent.ConcurrentHashMap<>();
    java.util.concurrent.CountDownLatch moved = new java.util.concurrent.CountDownLatch(1);
    try (WorkerPool pool =
        WorkerPool.builder(ledger)
            .dataSource(pool())
            .pollInterval(Duration.ofMillis(200))
            .domain(
                domain,
                (task, ctx) -> {
                  runs.merge(task.id(), 1, Integer::sum);
                  // past the first ten, tasks stay leased in flight until the move is done: the
                  // move happens between their claims and their completions
                  if (runs.size() > 10 && !moved.await(60, java.util.concurrent.TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the move did not end within 60 s");
                  }
                  return Outcome.done();
                })
            .start()) {
      await(Duration.ofSeconds(60), () -> runs.size() > 10);
      try {
        move(domain, to);
      } finally {
        moved.countDown();
      }
      await(
          Duration.ofSeconds(120),
          () -> ids.stream().allMatch(id -> ledger.get(id).status() == Status.COMPLETED));
    }
    assertThat(nodeOf(domain)).isEqualTo(Integer.toString(to));
    // every task ran once and was claimed once: no double claim, none lost, none left leased
    assertThat(runs.keySet()).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(runs.values()).containsOnly(1);
    try (Connection c = DriverManager.getConnection(url)) {
      assertThat(
              Fixtures.rows(
                  c,
                  "SELECT task_id FROM \""
                      + schema
                      + "\".events WHERE kind = 'claimed' GROUP BY task_id HAVING count(*) > 1"))
          .isEmpty();
      assertThat(
              Fixtures.count(
                  c,
                  "SELECT count(*) FROM \""
                      + schema
                      + "\".tasks WHERE status = 'completed' AND lease_until IS NULL"))
          .isEqualTo(120);
    }
  }

  @Test
  void the_migration_job_finds_every_distributed_schema_current_in_one_or_two_statements() {
    ledger.provision("migrated");
    // the first run checks what no run recorded yet (the directory), and records it
    MigrationReport first = MigrationJob.builder().dataSource(pool()).build().migrate();
    assertThat(first.ok()).isTrue();
    assertThat(first.counts().failed()).isZero();
    assertThat(first.counts().migrated()).isZero();
    MigrationReport report = MigrationJob.builder().dataSource(pool()).build().migrate();
    assertThat(report.ok()).isTrue();
    assertThat(report.counts().checked()).isZero();
    assertThat(report.counts().flywayRuns()).isZero();
    assertThat(report.counts().current()).isEqualTo(report.counts().schemas());
    assertThat(report.counts().catalogQueries()).isBetween(1, 2);
  }

  static javax.sql.DataSource pool() {
    return pool;
  }

  static void await(Duration bound, java.util.function.BooleanSupplier done) throws Exception {
    long deadline = System.nanoTime() + bound.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("not within " + bound);
      }
      Thread.sleep(50);
    }
  }
}

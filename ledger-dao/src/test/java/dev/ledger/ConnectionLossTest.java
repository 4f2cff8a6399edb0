package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.testing.DomainLog;
import dev.ledger.testing.KillSwitch;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A database session killed in the middle of a ledger operation (issue 3, item 5): the operation
 * fails with {@link LedgerStorageException}, and its event and projection are both there or both
 * absent, never one without the other. A {@link KillSwitch} ends the session just before a chosen
 * statement of the operation's transaction; a last test kills every pooled session between
 * operations instead.
 */
class ConnectionLossTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final Duration LEASE = Duration.ofMinutes(1);
  private static final List<String> NONE = List.of();

  private KillSwitch kill;
  private Ledger ledger;

  @BeforeEach
  void open() {
    kill = new KillSwitch(PG.databaseName());
    ledger = Ledger.open(PG.dataSource(), LedgerConfig.builder().executeListener(kill).build());
  }

  @Test
  void a_session_killed_inside_a_claim_leaves_the_task_unclaimed() throws Exception {
    String domain = "kill-claim";
    String t = admitted(domain);
    String schema = dev.ledger.schema.DomainSchemas.schemaName(domain);

    // the claim is one statement (its UPDATE, then the INSERT of its `claimed` event): hold it
    // inside, after both wrote, in a test trigger on the event insert, and end the session there
    try (java.sql.Connection c = PG.dataSource().getConnection();
        java.sql.Statement st = c.createStatement()) {
      st.execute(
          "CREATE FUNCTION \""
              + schema
              + "\".test_hold() RETURNS trigger LANGUAGE plpgsql AS $$"
              + " BEGIN PERFORM pg_sleep(60); RETURN NULL; END $$");
      st.execute(
          "CREATE TRIGGER test_hold AFTER INSERT ON \""
              + schema
              + "\".events FOR EACH STATEMENT EXECUTE FUNCTION \""
              + schema
              + "\".test_hold()");
    }
    java.util.concurrent.CompletableFuture<Throwable> claim =
        java.util.concurrent.CompletableFuture.supplyAsync(
            () -> {
              try {
                ledger.claimNext(domain, "worker", LEASE, NONE, Label.PUBLIC);
                return null;
              } catch (Throwable e) {
                return e;
              }
            });
    int killed = 0;
    try (java.sql.Connection c = PG.dataSource().getConnection();
        java.sql.PreparedStatement st =
            c.prepareStatement(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    + " WHERE datname = current_database() AND wait_event = 'PgSleep'"
                    + " AND pid <> pg_backend_pid()")) {
      long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (killed == 0 && System.nanoTime() < end) {
        try (java.sql.ResultSet rs = st.executeQuery()) {
          while (rs.next()) {
            killed++;
          }
        }
        Thread.sleep(10);
      }
    }
    assertThat(killed).as("sessions killed in the claim").isEqualTo(1);
    assertThat(claim.get(30, java.util.concurrent.TimeUnit.SECONDS))
        .isInstanceOfSatisfying(
            LedgerStorageException.class,
            e -> {
              assertThat(e.sqlState()).as(e.getMessage()).isIn("57P01", "08006");
              assertThat(e.outcomeUnknown()).as(e.getMessage()).isFalse();
            })
        .hasMessageStartingWith("claim failed in the database");
    try (java.sql.Connection c = PG.dataSource().getConnection();
        java.sql.Statement st = c.createStatement()) {
      st.execute("DROP TRIGGER test_hold ON \"" + schema + "\".events");
      st.execute("DROP FUNCTION \"" + schema + "\".test_hold()");
    }

    Task after = ledger.get(t);
    assertThat(after.status()).isEqualTo(Status.ADMITTED);
    assertThat(after.attempts()).isZero();
    assertThat(after.holder()).isNull();
    assertThat(after.leaseUntil()).isNull();
    assertThat(kinds(t)).containsExactly("created", "admitted");

    Lease lease = ledger.claimNext(domain, "worker", LEASE, NONE, Label.PUBLIC).orElseThrow();
    assertThat(lease.taskId()).isEqualTo(t);
    assertThat(lease.attempt()).isEqualTo(1L);
    ledger.complete(lease, null);
    assertThat(kinds(t)).containsExactly("created", "admitted", "claimed", "completed");
    assertReplayAgrees(domain);
  }

  @Test
  void a_session_killed_while_filing_leaves_neither_event_nor_row_nor_route() {
    String domain = "kill-file";
    ledger.file(TaskSpec.builder(domain, "the domain's first task").build()); // provisions it
    DomainLog log = new DomainLog(PG.dataSource(), domain);

    // at the one statement that takes the domain's lock and writes the task's row, its `created`
    // event and its route (issue 26: a filing is one statement; the switch fires only when the
    // lock and the writes are in the same statement)
    for (Predicate<String> before :
        List.of(KillSwitch.advisoryLock().and(KillSwitch.withInsertInto("tasks")))) {
      kill.arm(before);
      // the filing commits itself in that one execute (issue 26): a session lost during it is an
      // unknown outcome, though here the server rolled it back (it was killed before the commit)
      assertStorageFailure(
          () -> ledger.file(TaskSpec.builder(domain, "lost with its session").build()),
          "file",
          true);
      assertThat(log.eventCount()).isEqualTo(1);
      assertThat(log.taskRowCount()).isEqualTo(1);
      assertThat(log.routes()).containsExactly(1, 0);
    }

    String id = ledger.file(TaskSpec.builder(domain, "filed on a live session").build());
    assertThat(log.eventCount()).isEqualTo(2);
    assertThat(log.taskRowCount()).isEqualTo(2);
    assertThat(log.routes()).containsExactly(2, 0);
    assertThat(kinds(id)).containsExactly("created");
    assertThat(
            ledger.list(domain, Status.PROPOSED).stream()
                .map(task -> task.spec().title())
                .collect(Collectors.toList()))
        .containsExactly("the domain's first task", "filed on a live session");
    assertReplayAgrees(domain);
  }

  @Test
  void a_session_killed_while_provisioning_leaves_neither_schema_nor_route() throws Exception {
    String domain = "kill-provision";
    String schema = DomainSchemas.schemaName(domain);

    // the schema is installed in the provisioning transaction; its session dies before the route
    // is written: the whole transaction is gone, schema included
    kill.arm(KillSwitch.insertInto("ledger_domains"));
    assertStorageFailure(() -> ledger.file(TaskSpec.builder(domain, "first").build()), "file");
    assertThat(ledger.domains()).doesNotContain(domain);
    assertThat(schemaExists(schema)).isFalse();

    assertFilingProvisions(domain, schema, "first, again");
  }

  /** A domain's first filing routes it, at the current version, with exactly that one task. */
  private void assertFilingProvisions(String domain, String schema, String title) throws Exception {
    String id = ledger.file(TaskSpec.builder(domain, title).build());
    assertThat(ledger.domains()).contains(domain);
    assertThat(ledger.list(domain, Status.PROPOSED).stream().map(Task::id)).containsExactly(id);
    DomainLog log = new DomainLog(PG.dataSource(), domain);
    assertThat(log.eventCount()).isEqualTo(1);
    assertThat(log.routes()).containsExactly(1, 0);
    // the scripts, not 1 to the latest: the set may have gaps
    assertThat(appliedMigrations(schema))
        .isEqualTo(dev.ledger.testing.MigrationScripts.versions("domain").size());
  }

  @Test
  void a_schema_left_without_a_route_is_adopted_by_the_next_filing() throws Exception {
    String domain = "left-behind";
    String schema = DomainSchemas.schemaName(domain);
    // as an older build's provisioning left it when its session died: Flyway made the schema on
    // its own connections, the route was never written
    LedgerMigrations.migrateDomain(PG.dataSource(), schema);
    assertThat(ledger.domains()).doesNotContain(domain);

    assertFilingProvisions(domain, schema, "first");
  }

  @Test
  void a_session_killed_while_completing_leaves_the_lease_current() {
    String domain = "kill-complete";
    String t = admitted(domain);
    Lease lease = ledger.claimNext(domain, "worker", LEASE, NONE, Label.PUBLIC).orElseThrow();
    DomainLog log = new DomainLog(PG.dataSource(), domain);

    // after the `completed` event, before the projection row (whose trigger marks the route
    // completed in the same statement, domain V8)
    for (Predicate<String> before : List.of(KillSwitch.update("tasks"))) {
      kill.arm(before);
      assertStorageFailure(() -> ledger.complete(lease, "done"), "complete");
      Task held = ledger.get(t);
      assertThat(held.status()).isEqualTo(Status.CLAIMED);
      assertThat(held.holder()).isEqualTo("worker");
      assertThat(held.attempts()).isEqualTo(1L);
      assertThat(held.handoff()).isNull();
      assertThat(kinds(t)).containsExactly("created", "admitted", "claimed");
      assertThat(log.routes()).containsExactly(1, 0);
    }

    ledger.complete(lease, "done");
    assertThat(kinds(t)).containsExactly("created", "admitted", "claimed", "completed");
    assertThat(log.routes()).containsExactly(1, 1);
    assertReplayAgrees(domain);
  }

  @Test
  void sessions_killed_between_operations_leave_every_operation_whole() throws Exception {
    String domain = "kill-between";
    List<String> failures = new ArrayList<>();
    String t = retried(() -> ledger.file(TaskSpec.builder(domain, "survivor").build()), failures);
    retried(
        () -> {
          ledger.admit(t);
          return null;
        },
        failures);
    Lease lease =
        retried(
            () -> ledger.claimNext(domain, "worker", LEASE, NONE, Label.PUBLIC).orElseThrow(),
            failures);
    Lease extended = retried(() -> ledger.heartbeat(lease, LEASE), failures);
    retried(
        () -> {
          ledger.complete(extended, "done");
          return null;
        },
        failures);

    // a failed attempt wrote nothing, a successful one everything: each event exactly once
    assertThat(failures).allSatisfy(f -> assertThat(f).startsWith("LedgerStorageException"));
    assertThat(kinds(t))
        .containsExactly("created", "admitted", "claimed", "heartbeat", "completed");
    Task done = ledger.get(t);
    assertThat(done.status()).isEqualTo(Status.COMPLETED);
    assertThat(done.attempts()).isEqualTo(1L);
    assertThat(new DomainLog(PG.dataSource(), domain).routes()).containsExactly(1, 1);
    assertReplayAgrees(domain);
  }

  // -------------------------------------------------------------------------------------------

  private String admitted(String domain) {
    String id = ledger.file(TaskSpec.builder(domain, "the task").build());
    ledger.admit(id);
    return id;
  }

  private List<String> kinds(String id) {
    return ledger.history(id).stream().map(LoggedEvent::kind).collect(Collectors.toList());
  }

  private void assertStorageFailure(Runnable operation, String name) {
    assertStorageFailure(operation, name, false);
  }

  /**
   * Runs an operation the kill switch ends; {@code unknown} when the operation's statement commits
   * itself (the session lost in it may have committed, as far as the client knows).
   */
  private void assertStorageFailure(Runnable operation, String name, boolean unknown) {
    int before = kill.fired();
    assertThatThrownBy(operation::run)
        .isInstanceOfSatisfying(
            LedgerStorageException.class,
            // the server's "terminating connection" (57P01), or the lost socket itself (08006)
            e -> {
              assertThat(e.sqlState()).as(e.getMessage()).isIn("57P01", "08006");
              // lost before the commit: the server rolled back, the outcome is known
              assertThat(e.outcomeUnknown()).as(e.getMessage()).isEqualTo(unknown);
            })
        .hasMessageStartingWith(
            unknown ? name + ": the connection was lost" : name + " failed in the database");
    assertThat(kill.fired()).as("the kill switch fired").isEqualTo(before + 1);
  }

  /**
   * Kills every other session of the test database, then runs the operation, again while it fails
   * on a dead pooled connection (the pool drops each dead one it hands out).
   */
  private static <T> T retried(Supplier<T> operation, List<String> failures) throws Exception {
    killAllOtherSessions();
    for (int attempt = 0; ; attempt++) {
      try {
        return operation.get();
      } catch (LedgerStorageException e) {
        failures.add("LedgerStorageException " + e.sqlState());
        if (attempt > 20) {
          throw e;
        }
      } catch (RuntimeException e) {
        failures.add(e.getClass().getSimpleName() + ": " + e.getMessage());
        throw e;
      }
    }
  }

  private static void killAllOtherSessions() throws Exception {
    try (Connection admin = PostgresExtension.connect(PG.databaseName());
        PreparedStatement s =
            admin.prepareStatement(
                "SELECT pid, pg_terminate_backend(pid, 10000) FROM pg_stat_activity"
                    + " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    + " AND backend_type = 'client backend'");
        ResultSet rs = s.executeQuery()) {
      while (rs.next()) {
        assertThat(rs.getBoolean(2)).as("session " + rs.getInt(1) + " ended").isTrue();
      }
    }
  }

  private static boolean schemaExists(String schema) throws Exception {
    try (Connection c = PostgresExtension.connect(PG.databaseName());
        PreparedStatement s =
            c.prepareStatement("SELECT count(*) FROM pg_namespace WHERE nspname = ?")) {
      s.setString(1, schema);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getInt(1) == 1;
      }
    }
  }

  private static int appliedMigrations(String schema) throws Exception {
    try (Connection c = PostgresExtension.connect(PG.databaseName());
        PreparedStatement s =
            c.prepareStatement(
                "SELECT count(*) FROM \""
                    + schema
                    + "\".flyway_schema_history WHERE success AND version IS NOT NULL")) {
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  /** Rebuilding the projection from the log changes nothing: log and projection agree. */
  private void assertReplayAgrees(String domain) {
    List<Task> before = everyTask(domain);
    ledger.rebuild();
    assertThat(everyTask(domain)).isEqualTo(before);
  }

  private List<Task> everyTask(String domain) {
    List<Task> all = new ArrayList<>();
    for (Status s : EnumSet.allOf(Status.class)) {
      all.addAll(ledger.list(domain, s));
    }
    return all;
  }
}

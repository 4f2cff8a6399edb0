package dev.ledger.claim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Claimer;
import dev.ledger.Completion;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Domain V13: the statement trigger that keeps a route's {@code completed} right finds the changed
 * routes through the routing table's primary key, never by scanning every domain's routes (V9's
 * join did, for every completing statement: a third of a worker pool's batch completion at 4,000
 * routes, bench B9). Shown on a directory of 6,000 routes of another domain, analyzed, by the
 * transaction's own scan counts ({@code pg_stat_xact_user_tables}, which count what this backend
 * did in this transaction, the trigger's statement included): no sequential scan reads the routing
 * table through (V9's read all 6,000 rows, every time), for the ledger's batch completion and for
 * someone else's plain {@code UPDATE}; the routes it sets are exactly the completed ones.
 */
class RouteCompletionIndexTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static Ledger ledger;

  @BeforeAll
  static void aDirectoryOfSixThousandRoutes() throws SQLException {
    ledger = Ledger.open(PG.dataSource());
    ledger.provision("elsewhere");
    for (int b = 0; b < 6; b++) {
      List<TaskSpec> batch = new ArrayList<>();
      for (int i = 0; i < 1000; i++) {
        batch.add(TaskSpec.builder("elsewhere", "other " + b + "/" + i).build());
      }
      ledger.fileAll(batch);
    }
    ledger.provision("drained");
    ledger.provision("by-hand");
    for (String domain : List.of("drained", "by-hand")) {
      List<TaskSpec> batch = new ArrayList<>();
      for (int i = 0; i < 32; i++) {
        batch.add(TaskSpec.builder(domain, "mine " + i).build());
      }
      ledger.fileAll(batch);
    }
    try (Connection c = PG.dataSource().getConnection();
        Statement st = c.createStatement()) {
      st.execute("ANALYZE public.ledger_tasks");
    }
  }

  @Test
  void a_batch_completion_sets_its_routes_through_the_primary_key() throws SQLException {
    List<Lease> leases =
        ledger.claimBatch("drained", Claimer.of("w").lease(Duration.ofMinutes(5)), 32);
    assertThat(leases).hasSize(32);
    // a connection of its own: a backend's counts not yet flushed stay in its pg_stat_xact_ views
    // past the transaction that made them (PostgreSQL 15), so a pooled connection's would show
    // what its earlier users read
    try (Connection c = PG.connect()) {
      c.setAutoCommit(false);
      List<Lease> lost =
          ledger
              .in(c)
              .worker()
              .completeAll("drained", leases.stream().map(l -> new Completion(l, null)).toList());
      assertThat(lost).isEmpty();
      assertThat(routesReadBySequentialScans(c))
          .as("routes read by sequential scans")
          .isLessThan(100);
      c.commit();
    }
    assertThat(completedRoutes("drained")).isEqualTo(32);
    assertThat(completedRoutes("elsewhere")).isZero();
  }

  @Test
  void someone_elses_update_sets_and_clears_its_routes_through_the_primary_key()
      throws SQLException {
    String tasks = "\"" + DomainSchemas.schemaName("by-hand") + "\".tasks";
    try (Connection c = PG.connect();
        Statement st = c.createStatement()) {
      c.setAutoCommit(false);
      // the reference stack's kind of write: a plain UPDATE of its own columns
      assertThat(
              st.executeUpdate(
                  "UPDATE "
                      + tasks
                      + " SET status = 'completed' WHERE id IN (SELECT id FROM "
                      + tasks
                      + " ORDER BY id LIMIT 20)"))
          .isEqualTo(20);
      assertThat(routesReadBySequentialScans(c))
          .as("routes read by sequential scans")
          .isLessThan(100);
      c.commit();
      assertThat(completedRoutes("by-hand")).isEqualTo(20);

      assertThat(
              st.executeUpdate(
                  "UPDATE "
                      + tasks
                      + " SET status = 'admitted' WHERE id IN (SELECT id FROM "
                      + tasks
                      + " WHERE status = 'completed' ORDER BY id LIMIT 5)"))
          .isEqualTo(5);
      assertThat(routesReadBySequentialScans(c))
          .as("routes read by sequential scans")
          .isLessThan(100);
      c.commit();
    }
    assertThat(completedRoutes("by-hand")).isEqualTo(15);
    assertThat(completedRoutes("elsewhere")).isZero();
  }

  /**
   * Rows of the routing table read by sequential scans on this connection (its open transaction,
   * and on PostgreSQL 15 its earlier ones not yet flushed: under 100 here). Not zero: directory
   * V6's trigger may start a hash join's scan of the routes and stop at the first row once it finds
   * no dependent to look up; V9's join read all 6,000.
   */
  private static long routesReadBySequentialScans(Connection c) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT seq_tup_read FROM pg_stat_xact_user_tables"
                    + " WHERE schemaname = 'public' AND relname = 'ledger_tasks'")) {
      assertThat(rs.next()).isTrue();
      return rs.getLong(1);
    }
  }

  private static long completedRoutes(String domain) throws SQLException {
    try (Connection c = PG.dataSource().getConnection();
        PreparedStatement st =
            c.prepareStatement(
                "SELECT count(*) FROM public.ledger_tasks WHERE completed AND domain = ?")) {
      st.setString(1, domain);
      try (ResultSet rs = st.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}

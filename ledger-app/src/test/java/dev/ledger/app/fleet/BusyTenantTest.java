package dev.ledger.app.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.app.Cli;
import dev.ledger.app.ExitCodes;
import dev.ledger.migrate.AdvisoryLocks;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A tenant whose advisory lock another run holds (here the reference reconciler's {@code SELECT
 * pg_advisory_lock(tenant_lock_key)}, held on its own connection) is busy, not failed (issue #13,
 * item 9): reported skipped (locked), its status unchanged, exit 6; the next plain run migrates it.
 */
class BusyTenantTest {

  @RegisterExtension static final PostgresExtension CONTROL = new PostgresExtension();

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void a_locked_tenant_is_skipped_keeps_its_status_and_the_next_plain_run_migrates_it()
      throws Exception {
    String busy = PostgresExtension.newDatabase();
    String idle = PostgresExtension.newDatabase();
    String control = CONTROL.jdbcUrl();
    try {
      for (String[] t : new String[][] {{"busy", busy}, {"idle", idle}}) {
        Cli.Result r =
            Cli.run(
                "fleet",
                "register",
                "--control",
                control,
                "--tenant",
                t[0],
                "--dsn",
                Tenants.dsn(t[1], "pw-" + t[0]));
        assertThat(r.exit()).as(r.all()).isEqualTo(ExitCodes.OK);
      }
      Cli.Result first;
      Cli.Result plan;
      try (Connection holder = PostgresExtension.connect(busy);
          PreparedStatement lock = holder.prepareStatement("SELECT pg_advisory_lock(?)")) {
        lock.setLong(1, AdvisoryLocks.tenantLockKey("busy"));
        lock.execute();
        plan = Cli.run("fleet", "plan", "--control", control, "--lock-timeout", "300ms");
        first =
            Cli.run("fleet", "migrate", "--control", control, "--lock-timeout", "300ms", "--json");
      }
      assertThat(plan.exit()).as(plan.all()).isEqualTo(ExitCodes.LOCKED);
      assertThat(first.exit()).as(first.all()).isEqualTo(ExitCodes.LOCKED);
      JsonNode report = JSON.readTree(first.out());
      assertThat(report.at("/report/locked").asInt()).isEqualTo(1);
      assertThat(report.at("/report/degraded").asInt()).isZero();
      assertThat(report.at("/report/active").asInt()).isEqualTo(1);
      JsonNode busyReport = report.at("/report/tenants/0");
      assertThat(busyReport.get("tenant").asText()).isEqualTo("busy");
      assertThat(busyReport.get("status").asText()).isEqualTo("provisioning");
      assertThat(busyReport.get("skipped").asBoolean()).isTrue();
      assertThat(busyReport.get("locked").asBoolean()).isTrue();
      assertThat(busyReport.get("applied").asInt()).isZero();
      assertThat(busyReport.get("error").asText())
          .isEqualTo(
              "tenant busy: another migration run has held the lock of tenant busy for longer"
                  + " than PT0.3S; wait for it to finish and run again");
      try (Connection c = PostgresExtension.connect(CONTROL.databaseName())) {
        assertThat(Fixtures.rows(c, "SELECT tenant, status FROM harness_tenants ORDER BY tenant"))
            .containsExactly(List.of("busy", "provisioning"), List.of("idle", "active"));
      }
      Cli.Result listed = Cli.run("fleet", "list", "--control", control);
      assertThat(listed.out().lines().filter(l -> l.startsWith("busy")).findFirst())
          .get()
          .satisfies(l -> assertThat(l).contains("provisioning").doesNotContain("degraded"));

      Cli.Result second = Cli.run("fleet", "migrate", "--control", control);
      assertThat(second.exit()).as(second.all()).isEqualTo(ExitCodes.OK);
      assertThat(second.out()).contains("2 tenants: 2 active, 0 degraded (0 skipped)");
      try (Connection c = PostgresExtension.connect(CONTROL.databaseName())) {
        assertThat(Fixtures.rows(c, "SELECT tenant, status FROM harness_tenants ORDER BY tenant"))
            .containsExactly(List.of("busy", "active"), List.of("idle", "active"));
      }
      assertThat(Tenants.advisoryLocks(busy)).isZero();
    } finally {
      PostgresExtension.dropDatabase(busy);
      PostgresExtension.dropDatabase(idle);
    }
  }
}

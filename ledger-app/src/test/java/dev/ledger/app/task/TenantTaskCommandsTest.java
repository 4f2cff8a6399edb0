package dev.ledger.app.task;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.app.Cli;
import dev.ledger.app.ExitCodes;
import dev.ledger.migrate.Fleet;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.sql.SQLException;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Task commands addressing a fleet tenant by id ({@code --control URL --tenant ID}): the DSN comes
 * from the registry and is never printed; refused tenants exit {@value ExitCodes#REFUSED}.
 */
class TenantTaskCommandsTest {

  @RegisterExtension static final PostgresExtension CONTROL = new PostgresExtension();

  private static final String SECRET = "pw-" + UUID.randomUUID();
  private static String tenantDb;
  private static String tenantDsn;

  @BeforeAll
  static void fleet() throws SQLException {
    tenantDb = PostgresExtension.newDatabase();
    String url = TestServer.get().urlFor(tenantDb);
    tenantDsn = url + (url.contains("?") ? "&" : "?") + "password=" + SECRET;
    Fleet fleet = Fleet.builder().control(CONTROL.dataSource()).build();
    fleet.register("acme", tenantDsn);
    String missing =
        TestServer.get().urlFor("no_such_db_" + UUID.randomUUID().toString().substring(0, 8));
    fleet.register("broken", missing + (missing.contains("?") ? "&" : "?") + "password=" + SECRET);
    assertThat(fleet.migrate().degraded()).isEqualTo(1);
    fleet.register("late", tenantDsn);
  }

  @AfterAll
  static void drop() throws SQLException {
    PostgresExtension.dropDatabase(tenantDb);
  }

  private static Cli.Result run(String tenant, String... args) {
    String[] all = new String[args.length + 4];
    System.arraycopy(args, 0, all, 0, args.length);
    all[args.length] = "--control";
    all[args.length + 1] = CONTROL.jdbcUrl();
    all[args.length + 2] = "--tenant";
    all[args.length + 3] = tenant;
    Cli.Result r = Cli.run(all);
    assertThat(r.all()).doesNotContain(SECRET).doesNotContain(tenantDsn);
    return r;
  }

  @Test
  void a_task_is_filed_and_shown_in_the_tenant_named_by_id() {
    Cli.Result filed = run("acme", "task", "file", "--domain", "ops", "--title", "Rotate keys");
    assertThat(filed.exit()).as(filed.all()).isEqualTo(ExitCodes.OK);
    String id = filed.out().strip().split("\\s+")[0];
    assertThat(id).startsWith("t");
    Cli.Result shown = run("acme", "task", "show", id);
    assertThat(shown.exit()).as(shown.all()).isEqualTo(ExitCodes.OK);
    assertThat(shown.out()).contains("Rotate keys");
    // the same database through --url: the task is there
    Cli.Result direct = Cli.run("task", "show", id, "--url", TestServer.get().urlFor(tenantDb));
    assertThat(direct.out()).contains("Rotate keys");
  }

  @Test
  void unknown_provisioning_and_degraded_tenants_are_refused_with_their_own_exit_code() {
    Cli.Result unknown = run("nobody", "task", "list", "--domain", "ops");
    assertThat(unknown.exit()).isEqualTo(ExitCodes.REFUSED);
    assertThat(unknown.err()).contains("tenant nobody is unknown");
    Cli.Result provisioning = run("late", "task", "list", "--domain", "ops");
    assertThat(provisioning.exit()).isEqualTo(ExitCodes.REFUSED);
    assertThat(provisioning.err()).contains("tenant late is provisioning");
    Cli.Result degraded = run("broken", "task", "list", "--domain", "ops");
    assertThat(degraded.exit()).isEqualTo(ExitCodes.REFUSED);
    assertThat(degraded.err()).contains("tenant broken is degraded");
  }

  @Test
  void url_and_tenant_exclude_each_other() {
    Cli.Result both =
        run("acme", "task", "list", "--domain", "ops", "--url", TestServer.get().urlFor(tenantDb));
    assertThat(both.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(both.err()).contains("--url and --tenant exclude each other");
  }
}

package dev.ledger.app.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.app.Cli;
import dev.ledger.app.ExitCodes;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A {@code --control} that names a database without a tenant registry (most likely the wrong
 * database) is refused by {@code fleet list}, {@code fleet plan}, {@code fleet migrate} and a task
 * command's {@code --tenant}: one line, exit 9, the same JSON error document as every command, and
 * nothing made there. {@code fleet migrate --create-registry} makes an empty registry; the first
 * {@code fleet register} makes one and says so on stderr; a registry only the reference reconciler
 * made is accepted as it is.
 */
class ControlDatabaseTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final ObjectMapper JSON = new ObjectMapper();

  private final List<String> databases = new ArrayList<>();

  @AfterEach
  void drop() throws Exception {
    for (String db : databases) {
      PostgresExtension.dropDatabase(db);
    }
  }

  private String newDatabase() throws Exception {
    String db = PostgresExtension.newDatabase();
    databases.add(db);
    return db;
  }

  @Test
  void a_database_without_a_registry_is_refused_by_list_plan_migrate_and_tenant_commands()
      throws Exception {
    String wrong = newDatabase();
    String url = TestServer.get().urlFor(wrong);
    String expected =
        "no tenant registry in schema public of "
            + describe(wrong)
            + " (no harness_tenants): is --control the right database? 'ledger-app fleet"
            + " register' makes the registry with its first tenant; 'ledger-app fleet migrate"
            + " --create-registry' makes an empty one";

    for (String command : List.of("list", "plan", "migrate")) {
      Cli.Result r = Cli.run("fleet", command, "--control", url);
      assertThat(r.exit()).as(r.all()).isEqualTo(ExitCodes.NO_REGISTRY);
      assertThat(r.out()).isEmpty();
      assertThat(r.err()).isEqualTo("ledger-app fleet " + command + ": " + expected + "\n");

      Cli.Result json = Cli.run("fleet", command, "--control", url, "--json");
      assertThat(json.exit()).isEqualTo(ExitCodes.NO_REGISTRY);
      JsonNode doc = JSON.readTree(json.out());
      assertThat(doc.get("command").asText()).isEqualTo("ledger-app fleet " + command);
      assertThat(doc.get("exitCode").asInt()).isEqualTo(ExitCodes.NO_REGISTRY);
      assertThat(doc.get("ok").asBoolean()).isFalse();
      assertThat(doc.get("report").isNull()).isTrue();
      assertThat(doc.get("error").asText()).isEqualTo(expected);
    }

    Cli.Result task =
        Cli.run("task", "list", "--domain", "payments", "--control", url, "--tenant", "acme");
    assertThat(task.exit()).as(task.all()).isEqualTo(ExitCodes.NO_REGISTRY);
    assertThat(task.err())
        .isEqualTo(
            "error: no tenant registry in schema public of "
                + describe(wrong)
                + " (no harness_tenants): is --control the right database?\n");

    assertThat(tables(wrong)).as("nothing was made in the wrong database").isEmpty();
  }

  @Test
  void migrate_with_create_registry_makes_an_empty_registry_that_later_runs_accept()
      throws Exception {
    String control = newDatabase();
    String url = TestServer.get().urlFor(control);

    Cli.Result created = Cli.run("fleet", "migrate", "--control", url, "--create-registry");
    assertThat(created.exit()).as(created.all()).isEqualTo(ExitCodes.OK);
    assertThat(created.out()).contains("0 tenants: 0 active, 0 degraded");
    assertThat(tables(control))
        .containsExactly("harness_tenants", "ledger_control_history", "ledger_tenant_notes");

    Cli.Result again = Cli.run("fleet", "migrate", "--control", url);
    assertThat(again.exit()).as(again.all()).isEqualTo(ExitCodes.OK);
    Cli.Result list = Cli.run("fleet", "list", "--control", url);
    assertThat(list.exit()).as(list.all()).isEqualTo(ExitCodes.OK);
    assertThat(list.out()).endsWith("0 tenants\n");
  }

  @Test
  void the_first_registration_makes_the_registry_and_says_so_on_stderr() throws Exception {
    String control = newDatabase();
    String tenant = newDatabase();
    String url = TestServer.get().urlFor(control);
    String dsn = TestServer.get().urlFor(tenant);

    Cli.Result first =
        Cli.run("fleet", "register", "--control", url, "--tenant", "a", "--dsn", dsn, "--json");
    assertThat(first.exit()).as(first.all()).isEqualTo(ExitCodes.OK);
    assertThat(first.err())
        .isEqualTo(
            "ledger-app fleet register: made a new tenant registry in schema public of "
                + describe(control)
                + "\n");
    JsonNode report = JSON.readTree(first.out()).get("report");
    assertThat(report.get("tenant").asText()).isEqualTo("a");
    assertThat(report.get("registryCreated").asBoolean()).isTrue();

    Cli.Result second =
        Cli.run("fleet", "register", "--control", url, "--tenant", "b", "--dsn", dsn, "--json");
    assertThat(second.exit()).as(second.all()).isEqualTo(ExitCodes.OK);
    assertThat(second.err()).isEmpty();
    assertThat(JSON.readTree(second.out()).at("/report/registryCreated").asBoolean()).isFalse();

    Cli.Result list = Cli.run("fleet", "list", "--control", url);
    assertThat(list.exit()).as(list.all()).isEqualTo(ExitCodes.OK);
    assertThat(list.out()).endsWith("2 tenants\n");
  }

  @Test
  void a_registry_only_the_reference_reconciler_made_is_accepted() throws Exception {
    String control = newDatabase();
    try (Connection c = PostgresExtension.connect(control);
        Statement s = c.createStatement()) {
      // the reference's bootstrap_registry
      s.execute(
          "CREATE TABLE IF NOT EXISTS harness_tenants (tenant TEXT PRIMARY KEY, dsn TEXT NOT NULL,"
              + " status TEXT NOT NULL)");
    }
    Cli.Result plan = Cli.run("fleet", "plan", "--control", TestServer.get().urlFor(control));
    assertThat(plan.exit()).as(plan.all()).isEqualTo(ExitCodes.OK);
    assertThat(plan.out()).contains("0 tenants: 0 active, 0 degraded");
  }

  private static String describe(String database) {
    return dev.ledger.migrate.Dsn.parse(TestServer.get().urlFor(database)).describe();
  }

  private static List<String> tables(String database) throws Exception {
    List<String> names = new ArrayList<>();
    try (Connection c = PostgresExtension.connect(database);
        Statement s = c.createStatement();
        ResultSet r =
            s.executeQuery(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                    + " WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')"
                    + " AND n.nspname NOT LIKE 'pg_toast%' AND c.relkind IN ('r', 'p')"
                    + " ORDER BY 1")) {
      while (r.next()) {
        names.add(r.getString(1));
      }
    }
    return names;
  }
}

package dev.ledger.app.migrate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.app.Cli;
import dev.ledger.app.ExitCodes;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Errors that named the wrong problem (issue #13, item 11): a domain schema holding an unrelated
 * table is a foreign schema (exit 7, never a hint to baseline it), and {@code status} on a database
 * that does not exist fails at once naming the database.
 */
class MisleadingErrorsTest {

  @Test
  void a_routed_domain_schema_holding_an_unrelated_table_is_foreign_exit_7_and_left_alone()
      throws Exception {
    String db = PostgresExtension.newDatabase();
    String schema = DomainSchemas.schemaName("acme");
    try {
      try (Connection c = PostgresExtension.connect(db);
          Statement s = c.createStatement()) {
        s.execute("CREATE SCHEMA " + schema);
        s.execute("CREATE TABLE " + schema + ".invoices (id int PRIMARY KEY)");
      }
      String url = TestServer.get().urlFor(db);
      // the domain's first filing: its schema name is taken by the foreign schema
      Cli.Result filed =
          Cli.run("task", "file", "--url", url, "--domain", "acme", "--title", "first");
      assertThat(filed.exit()).as(filed.all()).isEqualTo(ExitCodes.FOREIGN_SCHEMA);
      assertThat(filed.err())
          .contains(
              "foreign schema: "
                  + schema
                  + " (domain acme) exists and holds tables [invoices] that are not a ledger's")
          .doesNotContainIgnoringCase("baseline");

      // routed (as by hand): migrate reports it foreign and leaves it alone
      try (Connection c = PostgresExtension.connect(db);
          Statement s = c.createStatement()) {
        s.execute(
            "INSERT INTO public.ledger_domains (domain, schema) VALUES ('acme', '\""
                + schema
                + "\"')");
      }
      Cli.Result migrate = Cli.run("migrate", "--url", url);
      assertThat(migrate.exit()).as(migrate.all()).isEqualTo(ExitCodes.FOREIGN_SCHEMA);
      assertThat(migrate.all()).doesNotContainIgnoringCase("baseline");
      assertThat(migrate.out())
          .contains("foreign")
          .contains(
              "foreign schema: "
                  + schema
                  + " (domain acme) exists and holds tables [invoices] that are not a ledger's");
      try (Connection c = PostgresExtension.connect(db)) {
        assertThat(
                Fixtures.rows(
                    c,
                    "SELECT tablename FROM pg_tables WHERE schemaname = '"
                        + schema
                        + "' ORDER BY 1"))
            .containsExactly(List.of("invoices"));
      }
      Cli.Result json = Cli.run("migrate", "--url", url, "--json");
      assertThat(json.exit()).isEqualTo(ExitCodes.FOREIGN_SCHEMA);
      assertThat(json.out()).contains("\"state\":\"foreign\"").contains("\"exitCode\":7");
    } finally {
      PostgresExtension.dropDatabase(db);
    }
  }

  @Test
  void status_on_a_database_that_does_not_exist_fails_at_once_naming_the_database() {
    String url = TestServer.get().urlFor("ledger_no_such_database_5e1f");
    long t0 = System.nanoTime();
    Cli.Result r = Cli.run("status", "--url", url);
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertThat(r.exit()).as(r.all()).isEqualTo(ExitCodes.DATABASE);
    assertThat(r.err())
        .contains("ledger_no_such_database_5e1f")
        .contains("does not exist")
        .doesNotContain("migrations")
        .doesNotContain("Flyway");
    assertThat(r.err().lines().count()).isEqualTo(1);
    // the pool's 30 s connection timeout is not waited out (a bound, not a speed measurement)
    assertThat(ms).isLessThan(15_000);
  }
}

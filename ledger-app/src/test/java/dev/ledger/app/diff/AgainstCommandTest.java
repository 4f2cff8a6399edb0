package dev.ledger.app.diff;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.app.Cli;
import dev.ledger.diff.DiffReport;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code schema-diff --against} and {@code --config} from the command line: exit codes, the report
 * printed even when the checks cannot run, the password never printed, and the marker CI finds the
 * comment by.
 */
class AgainstCommandTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final String BASE = "CREATE TABLE t (id bigint PRIMARY KEY, v text);\n";

  @TempDir Path temp;

  private Path base() {
    return DiffFixtures.migrations(temp.resolve("base"), "V1__t.sql", BASE);
  }

  private Path head() {
    return DiffFixtures.migrations(
        temp.resolve("head"),
        "V1__t.sql",
        BASE,
        "V2__v.sql",
        "ALTER TABLE t ALTER COLUMN v SET NOT NULL;\n");
  }

  @Test
  void rows_a_new_not_null_rejects_exit_3_whatever_fail_on_says() throws Exception {
    String staging = PostgresExtension.newDatabase();
    try {
      try (Connection c = PostgresExtension.connect(staging);
          Statement s = c.createStatement()) {
        s.execute(BASE + "INSERT INTO t VALUES (1, NULL), (2, 'x'), (3, NULL); ANALYZE t;");
      }
      Cli.Result result =
          Cli.run(
              "schema-diff",
              "--base",
              base().toString(),
              "--head",
              head().toString(),
              "--url",
              PG.jdbcUrl(),
              "--against",
              TestServer.get().urlFor(staging),
              "--fail-on",
              "never");

      assertThat(result.exit()).as(result.all()).isEqualTo(SchemaDiffCommand.UNVERIFIED);
      assertThat(result.err()).isEmpty();
      assertThat(result.out())
          .contains(
              "> **Against `"
                  + shownName(TestServer.get().urlFor(staging))
                  + "`: 1 check finds rows the SQL fails on, 1 locking change with its table's"
                  + " size.** Do not run this SQL on it as it is.\n")
          .contains("| not-null | `t` | column `v` | 2 | **fails**: 2 rows rejected |\n")
          .contains("~3 rows) under ACCESS EXCLUSIVE: column `v` changed\n")
          .endsWith("\n" + DiffReport.MARKER + "\n");
    } finally {
      PostgresExtension.dropDatabase(staging);
    }
  }

  @Test
  void
      an_unreachable_database_prints_the_report_with_checks_not_run_exits_2_and_hides_the_password()
          throws Exception {
    String url = "jdbc:postgresql://127.0.0.1:1/staging?user=ci&password=s3cr3t-Pw";
    for (String format : new String[] {"markdown", "json", "sql"}) {
      Cli.Result result =
          Cli.run(
              "schema-diff",
              "--base",
              base().toString(),
              "--head",
              head().toString(),
              "--url",
              PG.jdbcUrl(),
              "--against",
              url,
              "--format",
              format,
              "--verbose");

      assertThat(result.exit()).as(result.all()).isEqualTo(SchemaDiffCommand.ERROR);
      assertThat(result.out())
          .contains("Schema diff: 1 change (1 destructive)")
          .contains("Data checks against `127.0.0.1:1/staging` not run: unreachable: ");
      assertThat(result.err())
          .startsWith(
              "schema-diff: --against: Data checks against `127.0.0.1:1/staging` not run:"
                  + " unreachable: ");
      assertThat(result.all()).doesNotContain("s3cr3t");
    }
  }

  @Test
  void a_url_that_is_not_jdbc_is_a_usage_error_before_the_diff() {
    Cli.Result result =
        Cli.run(
            "schema-diff",
            "--base",
            base().toString(),
            "--head",
            head().toString(),
            "--against",
            "postgres://ci:s3cr3t@replica/app");
    assertThat(result.exit()).isEqualTo(SchemaDiffCommand.ERROR);
    assertThat(result.out()).isEmpty();
    assertThat(result.err())
        .isEqualTo(
            "schema-diff: --against: expected"
                + " jdbc:postgresql://host[:port]/database[?user=...&password=...]\n");
  }

  @Test
  void an_unknown_rule_in_the_config_is_a_usage_error_naming_the_file_and_line() throws Exception {
    Path config = temp.resolve("schema-diff.json");
    Files.writeString(config, "{\n  \"allow\": [\"prefer-bigints\"]\n}\n");
    Cli.Result result =
        Cli.run(
            "schema-diff",
            "--base",
            base().toString(),
            "--head",
            head().toString(),
            "--config",
            config.toString());
    assertThat(result.exit()).isEqualTo(SchemaDiffCommand.ERROR);
    assertThat(result.err())
        .isEqualTo(
            "schema-diff: --config "
                + config
                + " line 2: unknown rule 'prefer-bigints' in 'allow'; known rules: prefer-bigint,"
                + " prefer-identity, prefer-text, prefer-timestamptz, prefer-if-exists\n");
  }

  @Test
  void the_markdown_ends_with_the_marker_ci_finds_the_comment_by_even_without_changes() {
    Cli.Result result =
        Cli.run(
            "schema-diff",
            "--base",
            base().toString(),
            "--head",
            base().toString(),
            "--url",
            PG.jdbcUrl());
    assertThat(result.exit()).isZero();
    assertThat(result.out())
        .isEqualTo(
            "**Schema diff: no changes.**\n\nBase `"
                + base()
                + "` → head `"
                + base()
                + "`.\n\n<!-- ledger-schema-diff -->\n");
  }

  /**
   * How the report names a database: {@code host:port/database}, as the test server's URL has it
   * (the embedded default's port on a machine with only a JDK, 5432 in CI's second run).
   */
  private static String shownName(String jdbcUrl) {
    java.net.URI u = java.net.URI.create(jdbcUrl.substring("jdbc:".length()));
    return u.getHost() + (u.getPort() > 0 ? ":" + u.getPort() : "") + u.getPath();
  }
}

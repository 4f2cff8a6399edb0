package dev.ledger.app.diff;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.app.Cli;
import dev.ledger.testing.PostgresExtension;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command over the library: {@code --fail-on} and the check of the SQL mapped to exit codes 0,
 * 1 and 3, and {@code --format} choosing what is printed. What the diff finds is the library's
 * (ledger-schema-diff's tests); errors and exit 2 are {@link ErrorsTest}'s.
 */
class SchemaDiffCommandTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final String ACCOUNTS =
      """
      CREATE TABLE accounts (
          id       bigint PRIMARY KEY,
          email    varchar(100) NOT NULL,
          nickname text
      );
      """;

  @TempDir Path temp;

  /** The base: one table. The head: the base plus one migration. */
  private Cli.Result diff(String headMigration, String... options) {
    Path base = DiffFixtures.migrations(temp.resolve("base"), "V1__accounts.sql", ACCOUNTS);
    Path head =
        DiffFixtures.migrations(
            temp.resolve("head"), "V1__accounts.sql", ACCOUNTS, "V2__change.sql", headMigration);
    List<String> args =
        new ArrayList<>(
            List.of(
                "schema-diff",
                "--base",
                base.toString(),
                "--head",
                head.toString(),
                "--url",
                PG.jdbcUrl()));
    args.addAll(List.of(options));
    Cli.Result result = Cli.run(args.toArray(String[]::new));
    assertThat(result.err()).isEmpty();
    return result;
  }

  @Test
  void identical_sets_print_the_markdown_verdict_and_exit_0() {
    Path base = DiffFixtures.migrations(temp.resolve("base"), "V1__accounts.sql", ACCOUNTS);
    Path head = DiffFixtures.migrations(temp.resolve("head"), "V1__accounts.sql", ACCOUNTS);
    Cli.Result result =
        Cli.run(
            "schema-diff",
            "--base",
            base.toString(),
            "--head",
            head.toString(),
            "--url",
            PG.jdbcUrl(),
            "--fail-on",
            "any");
    assertThat(result.exit()).isEqualTo(SchemaDiffCommand.NO_FAILURE).isZero();
    assertThat(result.err()).isEmpty();
    assertThat(result.out())
        .isEqualTo(
            "**Schema diff: no changes.**\n\nBase `"
                + base
                + "` → head `"
                + head
                + "`.\n\n<!-- ledger-schema-diff -->\n");
  }

  @Test
  void fail_on_destructive_is_the_default_and_format_sql_prints_the_script() {
    Cli.Result result = diff("ALTER TABLE accounts DROP COLUMN nickname;", "--format", "sql");
    assertThat(result.exit()).isEqualTo(SchemaDiffCommand.RULE_TRIPPED).isEqualTo(1);
    assertThat(result.out())
        .startsWith("-- Schema diff: 1 change (1 destructive); checked: the base plus this SQL")
        .endsWith("ALTER TABLE accounts DROP COLUMN nickname;\n");
  }

  @Test
  void fail_on_destructive_exits_0_on_a_locking_change() {
    assertThat(
            diff("CREATE INDEX accounts_by_email ON accounts (email);", "--fail-on", "destructive")
                .exit())
        .isZero();
  }

  @Test
  void fail_on_any_exits_1_on_a_safe_change() {
    assertThat(diff("ALTER TABLE accounts ADD COLUMN note text;", "--fail-on", "any").exit())
        .isEqualTo(1);
  }

  @Test
  void fail_on_never_exits_0_on_a_destructive_change() {
    assertThat(diff("DROP TABLE accounts;", "--fail-on", "never").exit()).isZero();
  }

  /**
   * A row holding an enum value the head removes: the column's conversion to the swapped-in type
   * fails on it on the scratch schema (an enum in use, and what depends on it, now migrate).
   */
  private static final String GREEN = "INSERT INTO t VALUES ('green');";

  @Test
  void sql_that_is_not_safe_to_run_exits_3_whatever_fail_on_says() {
    Path base =
        DiffFixtures.migrations(
            temp.resolve("base"),
            "V1__schema.sql",
            "CREATE TYPE color AS ENUM ('red', 'green');\nCREATE TABLE t (c color);\n" + GREEN);
    Path head =
        DiffFixtures.migrations(
            temp.resolve("head"),
            "V1__schema.sql",
            "CREATE TYPE color AS ENUM ('red');\nCREATE TABLE t (c color);");
    Cli.Result result =
        Cli.run(
            "schema-diff",
            "--base",
            base.toString(),
            "--head",
            head.toString(),
            "--url",
            PG.jdbcUrl(),
            "--fail-on=never",
            "--format",
            "json");
    assertThat(result.exit()).isEqualTo(SchemaDiffCommand.UNVERIFIED).isEqualTo(3);
    assertThat(result.err()).isEmpty();
    assertThat(DiffFixtures.json(result.out()).get("verification").get("status").asText())
        .isEqualTo("sql failed");
  }
}

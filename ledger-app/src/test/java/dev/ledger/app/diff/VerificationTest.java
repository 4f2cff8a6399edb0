package dev.ledger.app.diff;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledger.testing.PostgresExtension;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The check behind every verdict: the base, then the printed SQL, applied to a scratch schema and
 * compared with the head. SQL that fails, SQL that does not reach the head and kinds the tool does
 * not migrate each exit with 3 and name the object, whatever {@code --fail-on} says.
 */
class VerificationTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @TempDir Path temp;

  private Cli.Result diff(String baseDdl, String headDdl, String... options) {
    Path base = Cli.migrations(temp.resolve("base"), "V1__schema.sql", baseDdl);
    Path head = Cli.migrations(temp.resolve("head"), "V1__schema.sql", headDdl);
    String[] args = new String[8 + options.length];
    String[] fixed = {
      "schema-diff",
      "--base",
      base.toString(),
      "--head",
      head.toString(),
      "--url",
      PG.jdbcUrl(),
      "--fail-on=never"
    };
    System.arraycopy(fixed, 0, args, 0, fixed.length);
    System.arraycopy(options, 0, args, fixed.length, options.length);
    return Cli.run(args);
  }

  @Test
  void sql_that_fails_on_the_scratch_schema_exits_3_naming_the_change_and_the_statement() {
    Cli.Result result =
        diff(
            "CREATE TYPE color AS ENUM ('red', 'green');\nCREATE TABLE t (c color);",
            "CREATE TYPE color AS ENUM ('red');\nCREATE TABLE t (c color);",
            "--format",
            "json");
    assertThat(result.exit()).isEqualTo(SchemaDiffCommand.UNVERIFIED);
    assertThat(result.err()).isEmpty();
    JsonNode check = result.json().get("verification");
    assertThat(check.get("status").asText()).isEqualTo("sql failed");
    assertThat(check.get("failedChange").asText()).isEqualTo("enum `color`");
    assertThat(check.get("failedStatement").asText()).isEqualTo("DROP TYPE color;");
    assertThat(check.get("error").asText())
        .startsWith("ERROR: cannot drop type color because other objects depend on it");
    assertThat(result.json().get("verdict").asText())
        .startsWith(
            "Schema diff: 1 change (1 destructive); NOT SAFE TO RUN: checked on a scratch schema,"
                + " this SQL fails at enum `color` (");
  }

  @Test
  void markdown_of_a_failing_script_says_not_to_run_it() {
    Cli.Result result =
        diff(
            "CREATE TYPE color AS ENUM ('red', 'green');\nCREATE TABLE t (c color);",
            "CREATE TYPE color AS ENUM ('red');\nCREATE TABLE t (c color);");
    assertThat(result.exit()).isEqualTo(SchemaDiffCommand.UNVERIFIED);
    assertThat(result.out())
        .contains(
            "> **Do not run this SQL as it is.** NOT SAFE TO RUN: checked on a scratch schema,"
                + " this SQL fails at enum `color`")
        .contains("> Failing statement: `DROP TYPE color;`");
  }

  @Test
  void a_type_change_without_a_cast_is_refused_naming_the_column() {
    Cli.Result result =
        diff(
            "CREATE TABLE events (id int, ts bigint);",
            "CREATE TABLE events (id int, ts timestamp);",
            "--format",
            "json");
    assertThat(result.exit()).isEqualTo(SchemaDiffCommand.UNVERIFIED);
    JsonNode check = result.json().get("verification");
    assertThat(check.get("status").asText()).isEqualTo("refused");
    assertThat(check.get("refused").get(0).asText())
        .isEqualTo(
            "column `ts` on `events` (no cast from bigint to timestamp without time zone: write"
                + " the ALTER COLUMN ... TYPE ... USING expression yourself)");
  }

  @Test
  void a_kind_the_tool_does_not_migrate_is_refused_by_name_with_exit_3() {
    Cli.Result result =
        diff(
            "CREATE TABLE t (id int);",
            "CREATE TABLE t (id int);\nCREATE RULE t_no_delete AS ON DELETE TO t DO INSTEAD NOTHING;",
            "--format",
            "json");
    assertThat(result.exit()).isEqualTo(SchemaDiffCommand.UNVERIFIED);
    JsonNode check = result.json().get("verification");
    assertThat(check.get("status").asText()).isEqualTo("refused");
    assertThat(check.get("refused").get(0).asText())
        .isEqualTo("other `rule t_no_delete on t` (the tool does not migrate a rule)");
    assertThat(result.json().get("sql")).isEmpty();
  }

  @Test
  void sql_that_runs_but_does_not_reach_the_head_exits_3_naming_what_still_differs() {
    // The child's column becomes its own while still inherited: no ALTER TABLE says that.
    Cli.Result result =
        diff(
            "CREATE TABLE p (id int, x int);\nCREATE TABLE c () INHERITS (p);",
            "CREATE TABLE p (id int, x int);\nCREATE TABLE c (x int) INHERITS (p);",
            "--format",
            "json");
    assertThat(result.exit()).isEqualTo(SchemaDiffCommand.UNVERIFIED);
    JsonNode check = result.json().get("verification");
    assertThat(check.get("status").asText()).isEqualTo("differs");
    assertThat(check.get("remaining").get(0).asText()).isEqualTo("column `x` on `c`");
  }

  @Test
  void sets_naming_a_schema_after_the_default_schema_compare_equal() {
    String ddl =
        """
        CREATE SCHEMA "${flyway:defaultSchema}_audit";
        CREATE TABLE "${flyway:defaultSchema}_audit".log (
            id int,
            origin text DEFAULT '${flyway:defaultSchema}'
        );
        CREATE COLLATION numeric (provider = icu, locale = 'en-u-kn-true');
        CREATE TABLE names (v text COLLATE numeric);
        """;
    Cli.Result result = diff(ddl, ddl);
    assertThat(result.err()).isEmpty();
    assertThat(result.exit()).isZero();
    assertThat(result.out()).startsWith("**Schema diff: no changes.**");
  }

  @Test
  void the_scratch_schema_never_appears_in_the_sql() {
    Cli.Result result =
        diff(
            "CREATE TABLE t (id int);",
            """
            CREATE TABLE t (id int);
            CREATE SCHEMA "${flyway:defaultSchema}_audit";
            CREATE COLLATION numeric (provider = icu, locale = 'en-u-kn-true');
            CREATE TABLE "${flyway:defaultSchema}_audit".log (v text COLLATE numeric);
            """,
            "--format",
            "sql");
    assertThat(result.exit()).isZero();
    assertThat(result.out()).doesNotContain("ledger_diff_");
    assertThat(result.out())
        .contains("CREATE SCHEMA ${flyway:defaultSchema}_audit;")
        .contains("CREATE COLLATION \"numeric\" (provider = icu, locale = 'en-u-kn-true');")
        .contains("v text COLLATE \"numeric\"");
  }

  @Test
  void placeholders_per_side_make_a_changed_value_a_reviewable_diff() {
    Cli.Result result =
        diff(
            "CREATE TABLE t (id int, kind text DEFAULT '${kind}');",
            "CREATE TABLE t (id int, kind text DEFAULT '${kind}');",
            "--base-placeholder",
            "kind=old",
            "--head-placeholder",
            "kind=new",
            "--format",
            "json");
    assertThat(result.err()).isEmpty();
    assertThat(result.exit()).isZero();
    assertThat(result.json().get("sql").get(0).asText())
        .isEqualTo("ALTER TABLE t ALTER COLUMN kind SET DEFAULT 'new'::text;");
  }
}

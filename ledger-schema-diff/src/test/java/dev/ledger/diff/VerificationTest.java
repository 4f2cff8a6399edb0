package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledger.testing.PostgresExtension;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The check behind every verdict: the base, then the printed SQL, applied to a scratch schema and
 * compared with the head. SQL that fails, SQL that does not reach the head and kinds the tool does
 * not migrate each leave the report unverified ({@code ledger-app schema-diff} exits with 3) and
 * name the object, whatever {@link FailOn} says.
 */
class VerificationTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @TempDir Path temp;

  private DiffReport diff(String baseDdl, String headDdl) {
    return diff(baseDdl, headDdl, Map.of(), Map.of());
  }

  private DiffReport diff(
      String baseDdl,
      String headDdl,
      Map<String, String> basePlaceholders,
      Map<String, String> headPlaceholders) {
    Path base = Diffs.migrations(temp.resolve("base"), "V1__schema.sql", baseDdl);
    Path head = Diffs.migrations(temp.resolve("head"), "V1__schema.sql", headDdl);
    return SchemaDiff.run(
        new SchemaDiff.Request(
            base.toString(),
            head.toString(),
            Map.of(),
            basePlaceholders,
            headPlaceholders,
            PG.jdbcUrl(),
            FailOn.NEVER,
            false));
  }

  /**
   * A row holding an enum value the head removes: converting its column to the enum swapped in
   * fails on it.
   */
  private static final String GREEN = "INSERT INTO t VALUES ('green');";

  @Test
  void sql_that_fails_on_the_scratch_schema_is_unverified_naming_the_change_and_the_statement() {
    DiffReport result =
        diff(
            "CREATE TYPE color AS ENUM ('red', 'green');\nCREATE TABLE t (c color);\n" + GREEN,
            "CREATE TYPE color AS ENUM ('red');\nCREATE TABLE t (c color);");
    assertThat(result.verified()).isFalse();
    JsonNode check = Diffs.json(result).get("verification");
    assertThat(check.get("status").asText()).isEqualTo("sql failed");
    assertThat(check.get("failedChange").asText()).isEqualTo("enum `color`");
    assertThat(check.get("failedStatement").asText())
        .isEqualTo(
            "ALTER TABLE t ALTER COLUMN c TYPE color_ledger_new USING c::text::color_ledger_new;");
    assertThat(check.get("error").asText())
        .startsWith("ERROR: invalid input value for enum color_ledger_new: \"green\"");
    assertThat(Diffs.json(result).get("verdict").asText())
        .startsWith(
            "Schema diff: 1 change (1 destructive); NOT SAFE TO RUN: checked on a scratch schema,"
                + " this SQL fails at enum `color` (");
  }

  @Test
  void markdown_of_a_failing_script_says_not_to_run_it() {
    DiffReport result =
        diff(
            "CREATE TYPE color AS ENUM ('red', 'green');\nCREATE TABLE t (c color);\n" + GREEN,
            "CREATE TYPE color AS ENUM ('red');\nCREATE TABLE t (c color);");
    assertThat(result.verified()).isFalse();
    assertThat(result.markdown())
        .contains(
            "> **Do not run this SQL as it is.** NOT SAFE TO RUN: checked on a scratch schema,"
                + " this SQL fails at enum `color`")
        .contains(
            "> Failing statement: `ALTER TABLE t ALTER COLUMN c TYPE color_ledger_new USING"
                + " c::text::color_ledger_new;`");
  }

  @Test
  void a_type_change_without_a_cast_is_refused_naming_the_column() {
    DiffReport result =
        diff(
            "CREATE TABLE events (id int, ts bigint);",
            "CREATE TABLE events (id int, ts timestamp);");
    assertThat(result.verified()).isFalse();
    JsonNode check = Diffs.json(result).get("verification");
    assertThat(check.get("status").asText()).isEqualTo("refused");
    assertThat(check.get("refused").get(0).asText())
        .isEqualTo(
            "column `ts` on `events` (no cast from bigint to timestamp without time zone: give"
                + " the conversion with --using events.ts=EXPR, an expression over the old"
                + " value)");
  }

  @Test
  void a_kind_the_tool_does_not_migrate_is_refused_by_name_and_unverified() {
    DiffReport result =
        diff(
            "CREATE TABLE t (id int);",
            "CREATE TABLE t (id int);\n"
                + "CREATE AGGREGATE total(int) (sfunc = int4pl, stype = int, initcond = '0');");
    assertThat(result.verified()).isFalse();
    JsonNode check = Diffs.json(result).get("verification");
    assertThat(check.get("status").asText()).isEqualTo("refused");
    assertThat(check.get("refused").get(0).asText())
        .isEqualTo("other `aggregate total(integer)` (the tool does not migrate an aggregate)");
    assertThat(Diffs.json(result).get("sql")).isEmpty();
  }

  @Test
  void sql_that_runs_but_does_not_reach_the_head_is_unverified_naming_what_still_differs() {
    // The child's column becomes its own while still inherited: no ALTER TABLE says that.
    DiffReport result =
        diff(
            "CREATE TABLE p (id int, x int);\nCREATE TABLE c () INHERITS (p);",
            "CREATE TABLE p (id int, x int);\nCREATE TABLE c (x int) INHERITS (p);");
    assertThat(result.verified()).isFalse();
    JsonNode check = Diffs.json(result).get("verification");
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
    DiffReport result = diff(ddl, ddl);
    assertThat(result.verified()).isTrue();
    assertThat(result.markdown()).startsWith("**Schema diff: no changes.**");
  }

  @Test
  void the_scratch_schema_never_appears_in_the_sql() {
    DiffReport result =
        diff(
            "CREATE TABLE t (id int);",
            """
            CREATE TABLE t (id int);
            CREATE SCHEMA "${flyway:defaultSchema}_audit";
            CREATE COLLATION numeric (provider = icu, locale = 'en-u-kn-true');
            CREATE TABLE "${flyway:defaultSchema}_audit".log (v text COLLATE numeric);
            """);
    assertThat(result.verified()).isTrue();
    assertThat(result.sql()).doesNotContain("ledger_diff_");
    assertThat(result.sql())
        .contains("CREATE SCHEMA ${flyway:defaultSchema}_audit;")
        .contains("CREATE COLLATION \"numeric\" (provider = icu, locale = 'en-u-kn-true');")
        .contains("v text COLLATE \"numeric\"");
  }

  @Test
  void placeholders_per_side_make_a_changed_value_a_reviewable_diff() {
    DiffReport result =
        diff(
            "CREATE TABLE t (id int, kind text DEFAULT '${kind}');",
            "CREATE TABLE t (id int, kind text DEFAULT '${kind}');",
            Map.of("kind", "old"),
            Map.of("kind", "new"));
    assertThat(result.verified()).isTrue();
    assertThat(Diffs.json(result).get("sql").get(0).asText())
        .isEqualTo("ALTER TABLE t ALTER COLUMN kind SET DEFAULT 'new'::text;");
  }
}

package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.testing.PostgresExtension;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Enums and composite types changed while columns use them: the plan (a new enum swapped in, values
 * renamed in place, attributes added or dropped in place) is checked by the tool, and then run here
 * on a schema holding rows, which are read back: every row keeps its value.
 */
class TypesInUseTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @TempDir Path temp;

  private static final String ROWS =
      "CREATE TABLE t (id int PRIMARY KEY, c color DEFAULT 'red', cs color[]);\n"
          + "CREATE INDEX t_c ON t (c);\n"
          + "CREATE VIEW reds AS SELECT id, c FROM t WHERE c = 'red';\n"
          + "INSERT INTO t VALUES (1, 'red', '{red,green}'), (2, 'green', NULL), (3, NULL, '{}');\n";

  private int runs;

  private DiffReport diff(String baseDdl, String headDdl) {
    runs++;
    Path base = Diffs.migrations(temp.resolve("base" + runs), "V1__schema.sql", baseDdl);
    Path head = Diffs.migrations(temp.resolve("head" + runs), "V1__schema.sql", headDdl);
    DiffReport report = SchemaDiff.run(Diffs.request(base, head, PG.jdbcUrl()));
    assertThat(report.verification().status())
        .as(report.verification().sentence())
        .isEqualTo(Verification.Status.EXACT);
    return report;
  }

  /** Runs the base's DDL, then the script, on a new schema; returns the query's rows as text. */
  private List<String> applyAndRead(String baseDdl, List<String> script, String query)
      throws SQLException {
    return Diffs.applyAndRead(PG.dataSource(), "types_in_use_" + runs, baseDdl, script, query);
  }

  @Test
  void an_enum_value_removed_while_columns_use_it_swaps_in_a_new_type_and_keeps_the_rows()
      throws SQLException {
    String base = "CREATE TYPE color AS ENUM ('red', 'green', 'blue');\n" + ROWS;
    String head = "CREATE TYPE color AS ENUM ('red', 'green');\n" + ROWS;
    DiffReport report = diff(base, head);
    assertThat(Diffs.changeLines(report))
        .containsExactly("- enum color changed destructive", "- view reds changed safe");
    List<String> script = report.diff().script();
    assertThat(script.get(script.size() - 1)).startsWith("CREATE VIEW reds AS");
    assertThat(script.subList(0, script.size() - 1))
        .containsExactly(
            "DROP VIEW reds;",
            "CREATE TYPE color_ledger_new AS ENUM ('red', 'green');",
            "ALTER TABLE t ALTER COLUMN c DROP DEFAULT;",
            "ALTER TABLE t ALTER COLUMN c TYPE color_ledger_new USING c::text::color_ledger_new;",
            "ALTER TABLE t ALTER COLUMN cs TYPE color_ledger_new[] USING"
                + " cs::text[]::color_ledger_new[];",
            "DROP TYPE color;",
            "ALTER TYPE color_ledger_new RENAME TO color;",
            "ALTER TABLE t ALTER COLUMN c SET DEFAULT 'red'::color;");
    assertThat(Diffs.change(report, "color").get("reason").asText())
        .isEqualTo(
            "enum values removed ('blue') while columns use it: the head's type is made as"
                + " color_ledger_new, each column converted through text (rewrites `t` under an"
                + " ACCESS EXCLUSIVE lock), the old type dropped and the new one renamed; a row"
                + " holding a removed value fails the conversion");
    assertThat(
            applyAndRead(
                base,
                report.diff().script(),
                "SELECT id, c, cs, (SELECT count(*) FROM reds) FROM t ORDER BY id"))
        .containsExactly("1 red {red,green} 1", "2 green null 1", "3 null {} 1");
  }

  @Test
  void enum_values_reordered_while_columns_use_it_keep_the_rows_in_the_new_order()
      throws SQLException {
    String base = "CREATE TYPE color AS ENUM ('red', 'green');\n" + ROWS;
    String head = "CREATE TYPE color AS ENUM ('green', 'red');\n" + ROWS;
    DiffReport report = diff(base, head);
    assertThat(Diffs.changeLines(report))
        .containsExactly("- enum color changed locking", "- view reds changed safe");
    assertThat(applyAndRead(base, report.diff().script(), "SELECT id, c FROM t ORDER BY c, id"))
        .containsExactly("2 green", "1 red", "3 null");
  }

  @Test
  void an_enum_value_renamed_is_renamed_in_place() throws SQLException {
    String base = "CREATE TYPE color AS ENUM ('red', 'green', 'blue');\n" + ROWS;
    String head =
        "CREATE TYPE color AS ENUM ('red', 'verde', 'blue');\n" + ROWS.replace("green", "verde");
    DiffReport report = diff(base, head);
    assertThat(Diffs.changeLines(report)).containsExactly("- enum color changed safe");
    assertThat(report.diff().script())
        .containsExactly("ALTER TYPE color RENAME VALUE 'green' TO 'verde';");
    assertThat(applyAndRead(base, report.diff().script(), "SELECT id, c, cs FROM t ORDER BY id"))
        .containsExactly("1 red {red,verde}", "2 verde null", "3 null {}");
  }

  @Test
  void a_composite_types_attributes_are_added_and_dropped_in_place() throws SQLException {
    String rows =
        "CREATE TABLE p (id int, v pair);\nINSERT INTO p VALUES (1, ROW(1, 2)), (2, NULL);\n";
    String base = "CREATE TYPE pair AS (x integer, y integer);\n" + rows;
    String head =
        "CREATE TYPE pair AS (x integer, z text);\n" + rows.replace("ROW(1, 2)", "ROW(1, NULL)");
    DiffReport report = diff(base, head);
    assertThat(Diffs.changeLines(report))
        .containsExactly("- composite type pair changed destructive");
    assertThat(report.diff().script())
        .containsExactly(
            "ALTER TYPE pair DROP ATTRIBUTE y;", "ALTER TYPE pair ADD ATTRIBUTE z text;");
    assertThat(applyAndRead(base, report.diff().script(), "SELECT id, v FROM p ORDER BY id"))
        .containsExactly("1 (1,)", "2 null");
  }

  @Test
  void a_composite_attribute_retyped_while_a_column_uses_it_swaps_in_a_new_type_and_keeps_the_rows()
      throws SQLException {
    String rows =
        "CREATE TABLE p (id int, v pair, vs pair[]);\n"
            + "INSERT INTO p VALUES (1, ROW(1, 2), ARRAY[ROW(3, 4)::pair, NULL]),"
            + " (2, ROW(NULL, NULL), '{}'), (3, NULL, NULL);\n";
    String base = "CREATE TYPE pair AS (x integer, y integer);\n" + rows;
    String head = "CREATE TYPE pair AS (x bigint, y integer);\n" + rows;
    DiffReport report = diff(base, head);
    assertThat(Diffs.changeLines(report)).containsExactly("- composite type pair changed locking");
    assertThat(report.diff().script())
        .containsExactly(
            "CREATE TYPE pair_ledger_new AS (x bigint, y integer);",
            "ALTER TABLE p ALTER COLUMN v TYPE pair_ledger_new USING CASE WHEN v::text IS NULL"
                + " THEN NULL ELSE ROW((v).x::bigint, (v).y)::pair_ledger_new END;",
            "ALTER TABLE p ALTER COLUMN vs TYPE pair_ledger_new[] USING"
                + " vs::text[]::pair_ledger_new[];",
            "DROP TYPE pair;",
            "ALTER TYPE pair_ledger_new RENAME TO pair;");
    assertThat(
            applyAndRead(
                base,
                report.diff().script(),
                "SELECT id, v::text, v IS NULL, vs::text, pg_typeof((v).x) FROM p ORDER BY id"))
        .containsExactly(
            "1 (1,2) f {\"(3,4)\",NULL} bigint", "2 (,) t {} bigint", "3 null t null bigint");
  }

  @Test
  void a_composite_attribute_retyped_with_no_cast_while_a_column_uses_it_is_refused_by_name() {
    String rows = "CREATE TABLE p (id int, v pair);\n";
    Path base =
        Diffs.migrations(
            temp.resolve("refused-base"),
            "V1__schema.sql",
            "CREATE TYPE pair AS (x integer, y integer);\n" + rows);
    Path head =
        Diffs.migrations(
            temp.resolve("refused-head"),
            "V1__schema.sql",
            "CREATE TYPE pair AS (x timestamp, y integer);\n" + rows);
    DiffReport report = SchemaDiff.run(Diffs.request(base, head, PG.jdbcUrl()));
    assertThat(report.verification().status()).isEqualTo(Verification.Status.REFUSED);
    assertThat(report.verification().refused())
        .containsExactly(
            "composite type `pair` (no cast from integer to timestamp without time zone for an"
                + " attribute it retypes while columns use it: convert the columns yourself, a new"
                + " type and ALTER COLUMN ... TYPE ... USING an expression over the old value)");
  }

  @Test
  void what_depends_on_a_type_made_again_is_dropped_before_it_and_made_again_after_it() {
    String over =
        "CREATE DOMAIN some_pair AS pair;\n"
            + "CREATE FUNCTION first(p pair) RETURNS integer LANGUAGE sql AS 'SELECT 1';\n";
    DiffReport report =
        diff(
            "CREATE TYPE pair AS (x integer, y text);\n" + over,
            "CREATE TYPE pair AS (y text, x integer);\n" + over);
    // before: the domain and the function were dropped at the end of the script, after the type
    // they hold on to was to be dropped (which failed) and after they were made again
    assertThat(report.diff().script())
        .containsExactly(
            "DROP FUNCTION first(p pair);",
            "DROP DOMAIN some_pair;",
            "DROP TYPE pair;",
            "CREATE TYPE pair AS (y text, x integer);",
            "CREATE DOMAIN some_pair AS pair;",
            "SET check_function_bodies = false;",
            "CREATE OR REPLACE FUNCTION first(p pair)\n RETURNS integer\n LANGUAGE sql\n"
                + "AS $function$SELECT 1$function$;");
  }
}

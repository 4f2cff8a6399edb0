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
 * What depends on a type swapped or re-made, moved out of the way and back ({@link
 * SwapDependents}): the plan is checked by the tool (exact), then run here on a schema holding rows
 * that are read back.
 */
class SwapDependentsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @TempDir Path temp;

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

  private List<String> applyAndRead(String baseDdl, List<String> script, String query)
      throws SQLException {
    return Diffs.applyAndRead(PG.dataSource(), "swap_dependents_" + runs, baseDdl, script, query);
  }

  private static final String DEPENDENTS =
      """
      CREATE TABLE t (id int PRIMARY KEY, c color DEFAULT 'red');
      CREATE INDEX t_reds ON t (id) WHERE c = 'red';
      ALTER TABLE t ADD CONSTRAINT t_known CHECK (c <> 'blue');
      CREATE DOMAIN warm AS color;
      CREATE TABLE w (id int, x warm DEFAULT 'green', xs warm[]);
      CREATE TYPE paint AS (tone color, coats integer);
      CREATE TABLE walls (id int, p paint);
      CREATE FUNCTION is_red(x color) RETURNS boolean LANGUAGE sql IMMUTABLE
        AS 'SELECT x = ''red''::color';
      INSERT INTO t VALUES (1, 'red'), (2, 'green'), (3, NULL);
      INSERT INTO w VALUES (1, 'green', '{red,green}'), (2, NULL, NULL);
      INSERT INTO walls VALUES (1, ROW('red', 2)), (2, ROW(NULL, 1));
      """;

  @Test
  void
      an_enum_value_removed_moves_its_index_check_domain_composite_and_function_and_keeps_the_rows()
          throws SQLException {
    String base = "CREATE TYPE color AS ENUM ('red', 'green', 'blue');\n" + DEPENDENTS;
    String head =
        "CREATE TYPE color AS ENUM ('red', 'green');\n"
            + DEPENDENTS.replace("c <> 'blue'", "c IS NOT NULL OR id > 2");
    DiffReport report = diff(base, head);
    assertThat(Diffs.changeLines(report))
        .containsExactly(
            "t constraint t_known changed destructive",
            "- composite type paint changed safe",
            "- domain warm changed safe",
            "- enum color changed destructive",
            "- function is_red(x color) changed safe");
    assertThat(report.diff().script())
        .containsExactly(
            "CREATE TYPE color_ledger_new AS ENUM ('red', 'green');",
            "ALTER TABLE t ALTER COLUMN c DROP DEFAULT;",
            "ALTER TABLE w ALTER COLUMN x DROP DEFAULT;",
            "ALTER TABLE t DROP CONSTRAINT t_known;",
            "DROP INDEX t_reds;",
            "ALTER TABLE w ALTER COLUMN x TYPE text USING x::text;",
            "ALTER TABLE w ALTER COLUMN xs TYPE text[] USING xs::text[];",
            "ALTER TABLE walls ALTER COLUMN p TYPE text USING p::text;",
            "DROP FUNCTION is_red(x color);",
            "DROP DOMAIN warm;",
            "DROP TYPE paint;",
            "ALTER TABLE t ALTER COLUMN c TYPE color_ledger_new USING c::text::color_ledger_new;",
            "DROP TYPE color;",
            "ALTER TYPE color_ledger_new RENAME TO color;",
            "CREATE TYPE paint AS (tone color, coats integer);",
            "CREATE DOMAIN warm AS color;",
            "SET check_function_bodies = false;",
            "CREATE OR REPLACE FUNCTION is_red(x color)\n RETURNS boolean\n LANGUAGE sql\n"
                + " IMMUTABLE\nAS $function$SELECT x = 'red'::color$function$;",
            "ALTER TABLE w ALTER COLUMN x TYPE warm USING x::warm;",
            "ALTER TABLE w ALTER COLUMN xs TYPE warm[] USING xs::warm[];",
            "ALTER TABLE walls ALTER COLUMN p TYPE paint USING p::paint;",
            "ALTER TABLE t ALTER COLUMN c SET DEFAULT 'red'::color;",
            "ALTER TABLE w ALTER COLUMN x SET DEFAULT 'green'::color;",
            "CREATE INDEX t_reds ON t USING btree (id) WHERE c = 'red'::color;",
            "ALTER TABLE t ADD CONSTRAINT t_known CHECK (c IS NOT NULL OR id > 2);");
    assertThat(
            applyAndRead(
                base,
                report.diff().script(),
                "SELECT 't', id, c::text, is_red(c) FROM t"
                    + " UNION ALL SELECT 'w', id, x::text || ' ' || coalesce(xs::text, '-'), null"
                    + " FROM w UNION ALL SELECT 'walls', id, p::text, is_red((p).tone) FROM walls"
                    + " ORDER BY 1, 2"))
        .containsExactly(
            "t 1 red t",
            "t 2 green f",
            "t 3 null null",
            "w 1 green {red,green} null",
            "w 2 null null",
            "walls 1 (red,2) t",
            "walls 2 (,1) null");
  }

  @Test
  void a_function_whose_result_type_changes_keeps_the_defaults_that_call_it() throws SQLException {
    String table =
        "CREATE TABLE t (id int, n bigint DEFAULT next_n(), m integer DEFAULT next_n() + 1);\n"
            + "INSERT INTO t (id) VALUES (1);\n";
    String base = "CREATE FUNCTION next_n() RETURNS integer LANGUAGE sql AS 'SELECT 7';\n" + table;
    String head =
        "CREATE FUNCTION next_n() RETURNS bigint LANGUAGE sql AS 'SELECT 8::bigint';\n" + table;
    DiffReport report = diff(base, head);
    assertThat(Diffs.changeLines(report))
        .containsExactly("t column m changed safe", "- function next_n() changed safe");
    assertThat(report.diff().script())
        .containsExactly(
            "ALTER TABLE t ALTER COLUMN n DROP DEFAULT;",
            "ALTER TABLE t ALTER COLUMN m DROP DEFAULT;",
            "DROP FUNCTION next_n();",
            "SET check_function_bodies = false;",
            "CREATE OR REPLACE FUNCTION next_n()\n RETURNS bigint\n LANGUAGE sql\n"
                + "AS $function$SELECT 8::bigint$function$;",
            "ALTER TABLE t ALTER COLUMN n SET DEFAULT next_n();",
            "ALTER TABLE t ALTER COLUMN m SET DEFAULT (next_n() + 1);");
    List<String> script = new java.util.ArrayList<>(report.diff().script());
    script.add("INSERT INTO t (id) VALUES (2)");
    assertThat(applyAndRead(base, script, "SELECT id, n, m FROM t ORDER BY id"))
        .containsExactly("1 7 8", "2 8 9");
  }

  @Test
  void a_composite_attribute_renamed_keeps_its_values() throws SQLException {
    String rows =
        "CREATE TABLE p (id int, v pair);\nINSERT INTO p VALUES (1, ROW(1, 2)), (2, NULL);\n";
    String base = "CREATE TYPE pair AS (x integer, y integer);\n" + rows;
    String head = "CREATE TYPE pair AS (x integer, \"Y axis\" integer);\n" + rows;
    DiffReport report = diff(base, head);
    assertThat(Diffs.changeLines(report)).containsExactly("- composite type pair changed safe");
    assertThat(report.diff().script())
        .containsExactly("ALTER TYPE pair RENAME ATTRIBUTE y TO \"Y axis\";");
    assertThat(
            applyAndRead(
                base, report.diff().script(), "SELECT id, (v).\"Y axis\" FROM p ORDER BY id"))
        .containsExactly("1 2", "2 null");
  }

  @Test
  void a_swap_moves_foreign_keys_and_keeps_a_partitioned_indexs_names_and_the_rows()
      throws SQLException {
    String tables =
        """
        CREATE TABLE pal (c color PRIMARY KEY);
        CREATE TABLE uses_pal (id int, c color REFERENCES pal);
        CREATE TABLE pt (id int, c color) PARTITION BY RANGE (id);
        CREATE TABLE pt_1 PARTITION OF pt FOR VALUES FROM (0) TO (10);
        CREATE INDEX pt_reds ON ONLY pt (id) WHERE c = 'red';
        CREATE INDEX "pt_1 reds" ON pt_1 (id) WHERE c = 'red';
        ALTER INDEX pt_reds ATTACH PARTITION "pt_1 reds";
        INSERT INTO pal VALUES ('red'), ('green');
        INSERT INTO uses_pal VALUES (1, 'green'), (2, NULL);
        INSERT INTO pt VALUES (1, 'red'), (2, 'green');
        """;
    String base = "CREATE TYPE color AS ENUM ('red', 'green', 'blue');\n" + tables;
    String head = "CREATE TYPE color AS ENUM ('red', 'green');\n" + tables;
    DiffReport report = diff(base, head);
    assertThat(report.diff().script())
        .containsExactly(
            "CREATE TYPE color_ledger_new AS ENUM ('red', 'green');",
            "ALTER TABLE uses_pal DROP CONSTRAINT uses_pal_c_fkey;",
            "DROP INDEX pt_reds;",
            "ALTER TABLE pal ALTER COLUMN c TYPE color_ledger_new USING c::text::color_ledger_new;",
            "ALTER TABLE pt ALTER COLUMN c TYPE color_ledger_new USING c::text::color_ledger_new;",
            "ALTER TABLE uses_pal ALTER COLUMN c TYPE color_ledger_new USING"
                + " c::text::color_ledger_new;",
            "DROP TYPE color;",
            "ALTER TYPE color_ledger_new RENAME TO color;",
            "CREATE INDEX pt_reds ON ONLY pt USING btree (id) WHERE c = 'red'::color;",
            "CREATE INDEX \"pt_1 reds\" ON pt_1 USING btree (id) WHERE c = 'red'::color;",
            "ALTER INDEX pt_reds ATTACH PARTITION \"pt_1 reds\";",
            "ALTER TABLE uses_pal ADD CONSTRAINT uses_pal_c_fkey FOREIGN KEY (c) REFERENCES"
                + " pal(c);");
    assertThat(
            applyAndRead(
                base,
                report.diff().script(),
                "SELECT 'uses_pal', id::text, c::text FROM uses_pal"
                    + " UNION ALL SELECT 'pt', id::text, c::text FROM pt"
                    + " UNION ALL SELECT 'index', i.indexrelid::regclass::text,"
                    + " i.indisvalid || ' ' || coalesce(h.inhparent::regclass::text, '-')"
                    + " FROM pg_index i LEFT JOIN pg_inherits h ON h.inhrelid = i.indexrelid"
                    + " WHERE i.indexrelid::regclass::text IN ('pt_reds', '\"pt_1 reds\"')"
                    + " ORDER BY 1, 2"))
        .containsExactly(
            "index \"pt_1 reds\" true pt_reds",
            "index pt_reds true -",
            "pt 1 red",
            "pt 2 green",
            "uses_pal 1 green",
            "uses_pal 2 null");
  }
}

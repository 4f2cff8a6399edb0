package dev.ledger.diff;

import java.util.ArrayList;
import java.util.List;

/**
 * Acceptance cases of {@link SchemaDiffAcceptanceTest} for a type swapped or re-made while other
 * objects depend on it: an enum whose values are removed or reordered while an index, a CHECK
 * constraint, a domain, a composite type's attribute or a function's parameter uses it; a function
 * whose interface changes while a column default calls it; a composite type's attribute renamed; a
 * composite type whose attributes are retyped or moved while columns use it (swapped for a new
 * type); around a swap, foreign keys, exclusion constraints and partitioned indexes moved, and what
 * a swap cannot move refused by name. Each base holds rows, so the tool's check runs the plan over
 * them.
 */
final class SwapDependentCases {

  private SwapDependentCases() {}

  private static final String COLOR3 = "CREATE TYPE color AS ENUM ('red', 'green', 'blue');\n";
  private static final String COLOR2 = "CREATE TYPE color AS ENUM ('red', 'green');\n";
  private static final String REORDERED = "CREATE TYPE color AS ENUM ('green', 'red');\n";

  private static final String T =
      "CREATE TABLE t (id bigint PRIMARY KEY, c color DEFAULT 'red', b text);\n";
  private static final String ROWS =
      "INSERT INTO t (id, c, b) VALUES (1, 'red', 'green'), (2, 'green', 'red'), (3, NULL, NULL);\n";

  /**
   * The cases, in a stable order.
   *
   * @return each case once
   */
  static List<AcceptanceCases.Case> all() {
    List<AcceptanceCases.Case> cases = new ArrayList<>();
    enumDependents(cases);
    defaults(cases);
    compositeRenames(cases);
    compositeSwaps(cases);
    aroundSwaps(cases);
    return cases;
  }

  private static void exact(
      List<AcceptanceCases.Case> cases, String name, String o, String n, String classes) {
    cases.add(new AcceptanceCases.Case(name, o, n, classes, null));
  }

  private static void refused(
      List<AcceptanceCases.Case> cases,
      String name,
      String o,
      String n,
      String classes,
      String refused) {
    cases.add(new AcceptanceCases.Case(name, o, n, classes, refused));
  }

  private static void enumDependents(List<AcceptanceCases.Case> cases) {
    String partial = "CREATE INDEX t_reds ON t (id) WHERE c = 'red';\n";
    exact(
        cases,
        "enum value removed while a partial index names a value",
        COLOR3 + T + partial + ROWS,
        COLOR2 + T + partial + ROWS,
        "destructive");
    String expression = "CREATE INDEX t_red_first ON t ((c = 'red'), id);\n";
    exact(
        cases,
        "enum values reordered while an expression index compares it",
        COLOR2 + T + expression + ROWS,
        REORDERED + T + expression + ROWS,
        "locking");
    String check = "ALTER TABLE t ADD CONSTRAINT t_not_blue CHECK (c <> 'blue');\n";
    String checkGreen =
        "ALTER TABLE t ADD CONSTRAINT t_not_blue CHECK (c IS DISTINCT FROM 'green' OR id > 1);\n";
    exact(
        cases,
        "enum value removed while a CHECK constraint names a value",
        COLOR3 + T + check + ROWS,
        COLOR2 + T + checkGreen + ROWS,
        "destructive");
    exact(
        cases,
        "enum values reordered while a CHECK constraint compares them",
        COLOR2 + T + "ALTER TABLE t ADD CONSTRAINT t_warm CHECK (c >= 'red' OR id > 1);\n" + ROWS,
        REORDERED
            + T
            + "ALTER TABLE t ADD CONSTRAINT t_warm CHECK (c >= 'red' OR id > 1);\n"
            + ROWS,
        "locking");
    String domain =
        "CREATE DOMAIN warm AS color NOT NULL DEFAULT 'red' CHECK (VALUE <> 'green' OR true);\n"
            + "CREATE TABLE w (id int, x warm, xs warm[]);\n"
            + "INSERT INTO w VALUES (1, 'red', '{red,green}'), (2, 'green', NULL);\n";
    exact(
        cases,
        "enum value removed while a domain over it is used by columns",
        COLOR3 + T + domain + ROWS,
        COLOR2 + T + domain + ROWS,
        "destructive+safe");
    exact(
        cases,
        "enum values reordered while an unused domain is over it",
        COLOR2 + T + "CREATE DOMAIN warm AS color CHECK (VALUE <> 'green');\n" + ROWS,
        REORDERED + T + "CREATE DOMAIN warm AS color CHECK (VALUE <> 'green');\n" + ROWS,
        "locking+safe");
    String composite =
        "CREATE TYPE paint AS (tone color, coats integer);\n"
            + "CREATE TABLE walls (id int, p paint, ps paint[]);\n"
            + "INSERT INTO walls VALUES (1, ROW('red', 2), ARRAY[ROW('green', 1)::paint]),"
            + " (2, NULL, NULL);\n";
    exact(
        cases,
        "enum value removed while a composite attribute used by a column has it",
        COLOR3 + T + composite + ROWS,
        COLOR2 + T + composite + ROWS,
        "destructive+safe");
    exact(
        cases,
        "enum values reordered while an unused composite attribute has it",
        COLOR2 + T + "CREATE TYPE paint AS (tone color, coats integer);\n" + ROWS,
        REORDERED + T + "CREATE TYPE paint AS (tone color, coats integer);\n" + ROWS,
        "locking+safe");
    String function =
        "CREATE FUNCTION is_red(x color) RETURNS boolean LANGUAGE sql IMMUTABLE"
            + " AS 'SELECT x = ''red''::color';\n";
    exact(
        cases,
        "enum value removed while a function parameter has it",
        COLOR3 + T + function + ROWS,
        COLOR2 + T + function + ROWS,
        "destructive+safe");
    String returns =
        "CREATE FUNCTION first_color() RETURNS color LANGUAGE sql AS 'SELECT ''red''::color';\n"
            + "CREATE FUNCTION colors(VARIADIC xs color[]) RETURNS integer LANGUAGE sql"
            + " AS 'SELECT cardinality(xs)';\n";
    exact(
        cases,
        "enum values reordered while functions return it and take an array of it",
        COLOR2 + T + returns + ROWS,
        REORDERED + T + returns + ROWS,
        "locking+safe");
    exact(
        cases,
        "enum value removed while a column default calls a function returning it",
        COLOR3
            + "CREATE FUNCTION first_color() RETURNS color LANGUAGE sql AS 'SELECT ''red''::color';\n"
            + "CREATE TABLE d (id int, c color DEFAULT first_color());\n"
            + "INSERT INTO d (id) VALUES (1);\n",
        COLOR2
            + "CREATE FUNCTION first_color() RETURNS color LANGUAGE sql AS 'SELECT ''red''::color';\n"
            + "CREATE TABLE d (id int, c color DEFAULT first_color());\n"
            + "INSERT INTO d (id) VALUES (1);\n",
        "destructive+safe");
    String all =
        partial
            + check
            + "CREATE DOMAIN warm AS color;\nCREATE TABLE w (id int, x warm);\n"
            + "INSERT INTO w VALUES (1, 'green');\n"
            + "CREATE TYPE paint AS (tone color, coats integer);\n"
            + "CREATE TABLE walls (id int, p paint);\nINSERT INTO walls VALUES (1, ROW('red', 2));\n"
            + function;
    exact(
        cases,
        "enum value removed while an index, a check, a domain, a composite and a function use it",
        COLOR3 + T + all + ROWS,
        COLOR2 + T + all.replace("c <> 'blue'", "c IS NOT NULL OR id > 0") + ROWS,
        "destructive+safe");
  }

  private static void defaults(List<AcceptanceCases.Case> cases) {
    String table =
        "CREATE TABLE t (id bigint PRIMARY KEY, n integer DEFAULT next_n());\n"
            + "INSERT INTO t (id) VALUES (1), (2);\n";
    exact(
        cases,
        "function return type changed while a column default calls it",
        "CREATE FUNCTION next_n() RETURNS integer LANGUAGE sql AS 'SELECT 7';\n" + table,
        "CREATE FUNCTION next_n() RETURNS bigint LANGUAGE sql AS 'SELECT 7::bigint';\n" + table,
        "safe");
    exact(
        cases,
        "function parameter renamed while a column default calls it",
        "CREATE FUNCTION scaled(x integer) RETURNS integer LANGUAGE sql AS 'SELECT x * 2';\n"
            + "CREATE TABLE t (id int, n integer DEFAULT scaled(3), m integer DEFAULT scaled(4));\n"
            + "INSERT INTO t (id) VALUES (1);\n",
        "CREATE FUNCTION scaled(y integer) RETURNS integer LANGUAGE sql AS 'SELECT y * 2';\n"
            + "CREATE TABLE t (id int, n integer DEFAULT scaled(3), m integer DEFAULT scaled(4));\n"
            + "INSERT INTO t (id) VALUES (1);\n",
        "safe");
    exact(
        cases,
        "function parameter default added while a column default calls it, and the default changes",
        "CREATE FUNCTION pad(x integer) RETURNS integer LANGUAGE sql AS 'SELECT x + 1';\n"
            + "CREATE TABLE t (id int, n integer DEFAULT pad(1));\n",
        "CREATE FUNCTION pad(x integer DEFAULT 0) RETURNS integer LANGUAGE sql AS 'SELECT x + 1';\n"
            + "CREATE TABLE t (id int, n integer DEFAULT pad());\n",
        "safe");
  }

  private static void compositeRenames(List<AcceptanceCases.Case> cases) {
    String rows =
        "CREATE TABLE p (id int, v pair, vs pair[]);\n"
            + "INSERT INTO p VALUES (1, ROW(1, 2), ARRAY[ROW(3, 4)::pair]), (2, NULL, NULL);\n";
    exact(
        cases,
        "composite attribute renamed while a column uses it",
        "CREATE TYPE pair AS (x integer, y integer);\n" + rows,
        "CREATE TYPE pair AS (x integer, \"Y axis\" integer);\n" + rows,
        "safe");
    exact(
        cases,
        "composite attribute renamed, unused",
        "CREATE TYPE pair AS (x integer, y integer);",
        "CREATE TYPE pair AS (left_x integer, y integer);",
        "safe");
    exact(
        cases,
        "composite attributes renamed and one added while a column uses it",
        "CREATE TYPE pair AS (x integer, y integer);\n" + rows,
        "CREATE TYPE pair AS (a integer, b integer, c text);\n"
            + rows.replace("ROW(1, 2)", "ROW(1, 2, NULL)").replace("ROW(3, 4)", "ROW(3, 4, NULL)"),
        "safe");
  }

  private static void compositeSwaps(List<AcceptanceCases.Case> cases) {
    String rows =
        "CREATE TABLE p (id int, v pair, vs pair[]);\n"
            + "INSERT INTO p VALUES (1, ROW(1, 2), ARRAY[ROW(3, 4)::pair, NULL]),"
            + " (2, ROW(NULL, NULL), '{}'), (3, NULL, NULL);\n";
    exact(
        cases,
        "composite attribute retyped and another renamed while columns use it",
        "CREATE TYPE pair AS (x integer, y integer);\n" + rows,
        "CREATE TYPE pair AS (x bigint, \"Y\" integer);\n" + rows,
        "locking");
    String view = "CREATE VIEW xs AS SELECT id, (v).x FROM p;\nCREATE INDEX p_x ON p (((v).x));\n";
    exact(
        cases,
        "composite attribute retyped to text while a view and an index use its column",
        "CREATE TYPE pair AS (x integer, y integer);\n" + rows + view,
        "CREATE TYPE pair AS (x text, y integer);\n" + rows + view,
        "locking+safe");
    String values =
        "CREATE TABLE q (id int, v pair);\n"
            + "INSERT INTO q VALUES (1, ROW(1, 'a')), (2, ROW(NULL, NULL)), (3, NULL);\n";
    exact(
        cases,
        "composite attributes reordered while a column uses it",
        "CREATE TYPE pair AS (x integer, y text);\n" + values,
        "CREATE TYPE pair AS (y text, x integer);\n" + values.replace("ROW(1, 'a')", "ROW('a', 1)"),
        "locking");
    exact(
        cases,
        "composite attribute retyped, one dropped and one added while a column uses it",
        "CREATE TYPE pair AS (x integer, y text);\n" + values,
        "CREATE TYPE pair AS (x numeric, z date);\n"
            + values.replace("ROW(1, 'a')", "ROW(1, NULL)"),
        "destructive");
    String nested =
        "CREATE TYPE crate AS (a pair, label text);\n"
            + "CREATE TABLE b (id int, bx crate);\n"
            + "INSERT INTO b VALUES (1, '(\"(1,2)\",one)'), (2, NULL);\n";
    exact(
        cases,
        "composite attribute retyped while a composite over it is used by a column",
        "CREATE TYPE pair AS (x integer, y integer);\n" + rows + nested,
        "CREATE TYPE pair AS (x bigint, y integer);\n" + rows + nested,
        "locking+safe");
    refused(
        cases,
        "composite attributes reordered while an array column uses it",
        "CREATE TYPE pair AS (x integer, y text);\n" + rows.replace("ROW(3, 4)", "ROW(3, 'b')"),
        "CREATE TYPE pair AS (y text, x integer);\n"
            + rows.replace("ROW(1, 2)", "ROW('a', 1)").replace("ROW(3, 4)", "ROW('b', 3)"),
        "locking",
        "`p.vs` is an array of it");
    refused(
        cases,
        "composite attribute retyped with no cast while a column uses it",
        "CREATE TYPE pair AS (x integer, y integer);\n" + rows,
        "CREATE TYPE pair AS (x timestamp, y integer);\n"
            + "CREATE TABLE p (id int, v pair, vs pair[]);\n",
        "destructive",
        "no cast from integer to timestamp without time zone");
  }

  private static void aroundSwaps(List<AcceptanceCases.Case> cases) {
    String enumKey =
        "CREATE TABLE pal (c color PRIMARY KEY);\n"
            + "CREATE TABLE uses_pal (id int, c color REFERENCES pal);\n"
            + "INSERT INTO pal VALUES ('red'), ('green');\n"
            + "INSERT INTO uses_pal VALUES (1, 'green'), (2, NULL);\n";
    exact(
        cases,
        "enum values reordered while a foreign key joins two columns of it",
        COLOR2 + T + enumKey + ROWS,
        REORDERED + T + enumKey + ROWS,
        "locking");
    String exclusion =
        "ALTER TABLE t ADD CONSTRAINT t_one_red EXCLUDE USING btree (c WITH =) WHERE (c = 'red');\n";
    exact(
        cases,
        "enum value removed while an exclusion constraint names a value",
        COLOR3 + T + exclusion + ROWS,
        COLOR2 + T + exclusion + ROWS,
        "destructive");
    String partitioned =
        "CREATE TABLE pt (id int, c color) PARTITION BY RANGE (id);\n"
            + "CREATE TABLE pt_1 PARTITION OF pt FOR VALUES FROM (0) TO (10);\n"
            + "CREATE TABLE pt_2 PARTITION OF pt FOR VALUES FROM (10) TO (20);\n"
            + "CREATE INDEX pt_reds ON ONLY pt (id) WHERE c = 'red';\n"
            + "CREATE INDEX \"pt_1 reds\" ON pt_1 (id) WHERE c = 'red';\n"
            + "CREATE INDEX pt_2_reds ON pt_2 (id) WHERE c = 'red';\n"
            + "ALTER INDEX pt_reds ATTACH PARTITION \"pt_1 reds\";\n"
            + "ALTER INDEX pt_reds ATTACH PARTITION pt_2_reds;\n"
            + "INSERT INTO pt VALUES (1, 'red'), (11, 'green');\n";
    exact(
        cases,
        "enum value removed while a partitioned index names a value, its partitions' named apart",
        COLOR3 + T + partitioned + ROWS,
        COLOR2 + T + partitioned + ROWS,
        "destructive");
    String generated =
        "CREATE TABLE g (id int, c color, red boolean GENERATED ALWAYS AS (c = 'red') STORED);\n"
            + "INSERT INTO g (id, c) VALUES (1, 'red');\n";
    refused(
        cases,
        "enum values reordered while a generated column compares it",
        COLOR2 + T + generated + ROWS,
        REORDERED + T + generated + ROWS,
        "locking",
        "generated column `g.red`");
    String late =
        "CREATE TABLE allowed (c color);\nINSERT INTO allowed VALUES ('red'), ('green');\n"
            + "CREATE FUNCTION is_allowed(x color) RETURNS boolean LANGUAGE sql STABLE\n"
            + "BEGIN ATOMIC SELECT EXISTS (SELECT 1 FROM allowed a WHERE a.c = x); END;\n"
            + "CREATE TABLE k (id int, c color CONSTRAINT k_allowed CHECK (is_allowed(c)));\n"
            + "INSERT INTO k VALUES (1, 'green');\n";
    refused(
        cases,
        "enum values reordered while a check calls a function that uses a table",
        COLOR2 + T + late + ROWS,
        REORDERED + T + late + ROWS,
        "locking+safe",
        "function `is_allowed(x color)` uses a table");
    refused(
        cases,
        "enum values reordered while the head adds a composite over it and a new table",
        COLOR2 + T + ROWS,
        REORDERED
            + T
            + "CREATE TABLE later (id int);\nCREATE TYPE rec AS (c color, l later);\n"
            + ROWS,
        "locking+safe",
        "composite type `rec`, new in the head");
  }
}

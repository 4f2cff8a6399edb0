package dev.ledger.diff;

import static dev.ledger.diff.AcceptanceCases.T;
import static dev.ledger.diff.AcceptanceCases.TOUCH;
import static dev.ledger.diff.AcceptanceCases.exact;

/**
 * Acceptance cases of {@link SchemaDiffAcceptanceTest} ({@link AcceptanceCases}): enums, domains
 * and composite types (also while columns use them), functions and their changed interfaces.
 */
final class TypeAndFunctionCases {

  private TypeAndFunctionCases() {}

  /** Adds the cases, in a stable order. */
  static void addAll() {
    types();
    functions();
    functionInterfaces();
  }

  private static void types() {
    String color = "CREATE TYPE color AS ENUM ('red', 'green');\n";
    exact("enum added", T, color + T, "safe");
    exact("enum dropped", color + T, T, "safe");
    exact(
        "enum column added",
        T,
        color + T + "ALTER TABLE t ADD COLUMN c color DEFAULT 'red';",
        "safe");
    exact(
        "enum value appended",
        color,
        "CREATE TYPE color AS ENUM ('red', 'green', 'blue');",
        "safe");
    exact(
        "enum value inserted",
        color,
        "CREATE TYPE color AS ENUM ('red', 'amber', 'green');",
        "safe");
    exact(
        "enum value prepended",
        color,
        "CREATE TYPE color AS ENUM ('black', 'red', 'green');",
        "safe");
    exact(
        "enum value added and used as a default",
        color + T + "ALTER TABLE t ADD COLUMN c color;",
        "CREATE TYPE color AS ENUM ('red', 'green', 'blue');\n"
            + T
            + "ALTER TABLE t ADD COLUMN c color DEFAULT 'blue';",
        "safe");
    exact("enum value removed, unused", color, "CREATE TYPE color AS ENUM ('red');", "destructive");
    exact("enum array column", T, color + T + "ALTER TABLE t ADD COLUMN cs color[];", "safe");
    exact("domain added", T, "CREATE DOMAIN positive AS integer CHECK (VALUE > 0);\n" + T, "safe");
    exact(
        "domain used by a new column",
        T,
        "CREATE DOMAIN positive AS integer CHECK (VALUE > 0);\n"
            + T
            + "ALTER TABLE t ADD COLUMN p positive;",
        "safe");
    exact(
        "domain changed, unused",
        "CREATE DOMAIN positive AS integer CHECK (VALUE > 0);",
        "CREATE DOMAIN positive AS integer NOT NULL DEFAULT 1 CHECK (VALUE > 0);",
        "destructive");
    String used = T + "ALTER TABLE t ADD COLUMN p positive;\n";
    exact(
        "domain check added while a column uses it",
        "CREATE DOMAIN positive AS integer;\n" + used,
        "CREATE DOMAIN positive AS integer CHECK (VALUE > 0);\n" + used,
        "destructive");
    exact(
        "domain check added NOT VALID while a column uses it",
        "CREATE DOMAIN positive AS integer;\n" + used,
        "CREATE DOMAIN positive AS integer;\n"
            + used
            + "ALTER DOMAIN positive ADD CONSTRAINT positive_check CHECK (VALUE > 0) NOT VALID;",
        "safe");
    exact(
        "domain check changed while a column uses it",
        "CREATE DOMAIN positive AS integer CHECK (VALUE > 0);\n" + used,
        "CREATE DOMAIN positive AS integer CHECK (VALUE > 1);\n" + used,
        "destructive");
    exact(
        "domain check dropped while a column uses it",
        "CREATE DOMAIN positive AS integer CHECK (VALUE > 0);\n" + used,
        "CREATE DOMAIN positive AS integer;\n" + used,
        "safe");
    exact(
        "domain default and NOT NULL changed while a column uses it",
        "CREATE DOMAIN positive AS integer NOT NULL DEFAULT 1 CONSTRAINT \"Big:One\" CHECK (VALUE < 100);\n"
            + used,
        "CREATE DOMAIN positive AS integer DEFAULT 2 CONSTRAINT \"Big:One\" CHECK (VALUE < 100);\n"
            + used,
        "safe");
    exact(
        "domain base type changed, unused",
        "CREATE DOMAIN positive AS integer CHECK (VALUE > 0);",
        "CREATE DOMAIN positive AS bigint CHECK (VALUE > 0);",
        "safe");
    exact("domain dropped", "CREATE DOMAIN positive AS integer;", "", "safe");
    exact("composite type added", T, "CREATE TYPE pair AS (x integer, y integer);\n" + T, "safe");
    exact(
        "composite column added",
        T,
        "CREATE TYPE pair AS (x integer, y integer);\n" + T + "ALTER TABLE t ADD COLUMN p pair;",
        "safe");
    exact(
        "composite type changed, unused",
        "CREATE TYPE pair AS (x integer, y integer);",
        "CREATE TYPE pair AS (x integer, y integer, z integer);",
        "safe");
    exact("composite type dropped", "CREATE TYPE pair AS (x integer);", "", "safe");
    // Issue 31: what depends on a type made again is dropped before it, not at the script's end.
    String over =
        "CREATE DOMAIN some_pair AS pair;\n"
            + "CREATE FUNCTION first(p pair) RETURNS integer LANGUAGE sql AS 'SELECT 1';\n";
    exact(
        "composite attributes reordered while a domain and a function use the type",
        "CREATE TYPE pair AS (x integer, y text);\n" + over,
        "CREATE TYPE pair AS (y text, x integer);\n" + over,
        "safe");
    typesInUse();
    exact(
        "collation added and used",
        T,
        T
            + """
        CREATE COLLATION numeric (provider = icu, locale = 'en-u-kn-true');
        CREATE TABLE c (v text COLLATE numeric);
        """,
        "safe");
    exact(
        "collation dropped",
        "CREATE COLLATION numeric (provider = icu, locale = 'en-u-kn-true');",
        "",
        "safe");
    exact(
        "nondeterministic collation",
        T,
        T
            + "CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);",
        "safe");
    exact(
        "extension added and used",
        T,
        "CREATE EXTENSION citext;\n" + T + "ALTER TABLE t ADD COLUMN e citext;",
        "safe");
    exact("extension dropped", "CREATE EXTENSION pg_trgm;\n" + T, T, "destructive");
    exact(
        "extension in another schema",
        T,
        T + "CREATE SCHEMA ext;\nCREATE EXTENSION hstore WITH SCHEMA ext;",
        "safe");
  }

  /**
   * Enums and composite types changed while columns use them; the base holds rows, so the check
   * runs the plan over them (RowsSurviveTypeChangeTest reads the rows back).
   */
  private static void typesInUse() {
    String rows =
        T
            + "ALTER TABLE t ADD COLUMN c color DEFAULT 'red', ADD COLUMN cs color[];\n"
            + "CREATE INDEX t_c ON t (c);\n"
            + "INSERT INTO t (id, c, cs) VALUES (1, 'red', '{red,green}'), (2, 'green', NULL),"
            + " (3, NULL, '{}');\n";
    exact(
        "enum value removed while columns use it",
        "CREATE TYPE color AS ENUM ('red', 'green', 'blue');\n" + rows,
        "CREATE TYPE color AS ENUM ('red', 'green');\n" + rows,
        "destructive");
    exact(
        "enum values reordered while columns use it",
        "CREATE TYPE color AS ENUM ('red', 'green');\n" + rows,
        "CREATE TYPE color AS ENUM ('green', 'red');\n" + rows,
        "locking");
    exact(
        "enum value removed and one added while columns use it",
        "CREATE TYPE color AS ENUM ('red', 'green', 'blue');\n" + rows,
        "CREATE TYPE color AS ENUM ('red', 'amber', 'green');\n" + rows,
        "destructive");
    String view = "CREATE VIEW reds AS SELECT id, c FROM t WHERE c = 'red';\n";
    exact(
        "enum value removed while a view uses its column",
        "CREATE TYPE color AS ENUM ('red', 'green', 'blue');\n" + rows + view,
        "CREATE TYPE color AS ENUM ('red', 'green');\n" + rows + view,
        "destructive+safe");
    exact(
        "enum value renamed while columns use it",
        "CREATE TYPE color AS ENUM ('red', 'green', 'blue');\n" + rows,
        "CREATE TYPE color AS ENUM ('red', 'verde', 'blue');\n" + rows.replace("green", "verde"),
        "safe");
    String parted =
        """
        CREATE TABLE m (at int NOT NULL, c color DEFAULT 'green') PARTITION BY RANGE (at);
        CREATE TABLE m_1 PARTITION OF m FOR VALUES FROM (0) TO (10);
        CREATE TABLE m_2 PARTITION OF m FOR VALUES FROM (10) TO (20);
        INSERT INTO m VALUES (1, 'red'), (12, 'green');
        """;
    exact(
        "enum value removed while a partitioned table uses it",
        "CREATE TYPE color AS ENUM ('red', 'green', 'blue');\n" + parted,
        "CREATE TYPE color AS ENUM ('red', 'green');\n" + parted,
        "destructive");
    exact(
        "enum in another schema reordered while a column uses it",
        "CREATE SCHEMA ref;\nCREATE TYPE ref.\"Tone\" AS ENUM ('dark', 'light');\n"
            + "CREATE TABLE s (tone ref.\"Tone\");\nINSERT INTO s VALUES ('light');",
        "CREATE SCHEMA ref;\nCREATE TYPE ref.\"Tone\" AS ENUM ('light', 'dark');\n"
            + "CREATE TABLE s (tone ref.\"Tone\");\nINSERT INTO s VALUES ('light');",
        "locking");
    String pairRows =
        "CREATE TABLE p (id int, v pair, vs pair[]);\n"
            + "INSERT INTO p VALUES (1, ROW(1, 2), ARRAY[ROW(3, 4)::pair]);\n";
    exact(
        "composite attribute added while a column uses it",
        "CREATE TYPE pair AS (x integer, y integer);\n" + pairRows,
        "CREATE TYPE pair AS (x integer, y integer, \"Z z\" text);\n"
            + pairRows
                .replace("ROW(1, 2)", "ROW(1, 2, NULL)")
                .replace("ROW(3, 4)", "ROW(3, 4, NULL)"),
        "safe");
    exact(
        "composite attribute dropped while a column uses it",
        "CREATE TYPE pair AS (x integer, y integer);\n" + pairRows,
        "CREATE TYPE pair AS (x integer);\n"
            + pairRows.replace("ROW(1, 2)", "ROW(1)").replace("ROW(3, 4)", "ROW(3)"),
        "destructive");
    exact(
        "composite attribute type changed, unused",
        "CREATE TYPE pair AS (x integer, y integer);",
        "CREATE TYPE pair AS (x bigint, y integer);",
        "safe");
    exact(
        "composite attribute type changed while a column uses it",
        "CREATE TYPE pair AS (x integer, y integer);\n" + pairRows,
        "CREATE TYPE pair AS (x bigint, y integer);\n" + pairRows,
        "locking");
  }

  private static void functions() {
    String add = "CREATE FUNCTION add(x int, y int) RETURNS int LANGUAGE sql AS 'SELECT x + y';\n";
    exact("function added", T, T + add, "safe");
    exact("function dropped", T + add, T, "safe");
    exact(
        "function body changed",
        T + add,
        T + "CREATE FUNCTION add(x int, y int) RETURNS int LANGUAGE sql AS 'SELECT y + x';\n",
        "safe");
    exact(
        "function volatility changed",
        T + add,
        T
            + "CREATE FUNCTION add(x int, y int) RETURNS int LANGUAGE sql IMMUTABLE"
            + " AS 'SELECT x + y';\n",
        "safe");
    exact(
        "function overload added",
        T + add,
        T + add + "CREATE FUNCTION add(x bigint) RETURNS bigint LANGUAGE sql AS 'SELECT x';\n",
        "safe");
    exact("plpgsql function", T, T + TOUCH, "safe");
    exact(
        "function over a table's rows",
        T,
        T + "CREATE FUNCTION big() RETURNS SETOF t LANGUAGE sql AS 'SELECT * FROM t WHERE a > 9';",
        "safe");
    exact(
        "sql-standard function body",
        T,
        T
            + "CREATE FUNCTION n() RETURNS bigint LANGUAGE sql BEGIN ATOMIC SELECT count(*) FROM t;"
            + " END;",
        "safe");
    exact(
        "function used by a default",
        T,
        "CREATE FUNCTION one() RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT 1';\n"
            + T
            + "ALTER TABLE t ALTER COLUMN a SET DEFAULT one();",
        "safe");
    exact(
        "function used by a check",
        T,
        "CREATE FUNCTION ok(int) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT $1 > 0';\n"
            + T
            + "CREATE TABLE k (v int CHECK (ok(v)));",
        "safe");
    exact(
        "procedure added",
        T,
        T + "CREATE PROCEDURE wipe() LANGUAGE sql AS 'DELETE FROM t';",
        "safe");
    exact(
        "procedure dropped",
        T + "CREATE PROCEDURE wipe() LANGUAGE sql AS 'DELETE FROM t';",
        T,
        "safe");
    exact(
        "function with defaults and out params",
        T,
        T + "CREATE FUNCTION f(a int DEFAULT 1, OUT b int) LANGUAGE sql AS 'SELECT a';",
        "safe");
    exact(
        "function security definer with search path",
        T,
        T
            + "CREATE FUNCTION sd() RETURNS int LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog"
            + " AS 'SELECT 1';",
        "safe");
  }

  private static void functionInterfaces() {
    String f1 = "CREATE FUNCTION f() RETURNS integer LANGUAGE sql AS 'SELECT 1';\n";
    String f2 = "CREATE FUNCTION f() RETURNS bigint LANGUAGE sql AS 'SELECT 2::bigint';\n";
    exact("function return type changed", T + f1, T + f2, "safe");
    String v = "CREATE VIEW v AS SELECT f() AS x, a FROM t;\n";
    exact("function return type changed, a view uses it", T + f1 + v, T + f2 + v, "safe");
    exact(
        "function parameter renamed",
        T + "CREATE FUNCTION g(x integer) RETURNS integer LANGUAGE sql AS 'SELECT x';",
        T + "CREATE FUNCTION g(y integer) RETURNS integer LANGUAGE sql AS 'SELECT y';",
        "safe");
    exact(
        "function OUT parameters changed",
        T + "CREATE FUNCTION h(OUT a integer, OUT b text) LANGUAGE sql AS 'SELECT 1, ''x''';",
        T
            + "CREATE FUNCTION h(OUT a integer, OUT c text, OUT d date) LANGUAGE sql"
            + " AS 'SELECT 1, ''x'', current_date';",
        "safe");
  }
}

package dev.ledger.diff;

import java.util.ArrayList;
import java.util.List;

/**
 * The cases of {@link SchemaDiffAcceptanceTest}: old DDL, new DDL, and the classes the changes must
 * have ({@code destructive}, {@code locking}, {@code safe}, joined with {@code +} in that sorted
 * order; empty for no change), plus, for a case the tool must refuse, the object its refusal names.
 * Grouped by object kind; within a kind, one case per change kind.
 */
final class AcceptanceCases {

  private AcceptanceCases() {}

  /**
   * One case.
   *
   * @param name unique
   * @param oldDdl the base schema
   * @param newDdl the head schema
   * @param classes the expected classes, e.g. {@code destructive+safe}
   * @param refused for a refused case, text the refusal must contain; else null
   */
  record Case(String name, String oldDdl, String newDdl, String classes, String refused) {}

  private static final List<Case> CASES = new ArrayList<>();

  private static void exact(String name, String oldDdl, String newDdl, String classes) {
    CASES.add(new Case(name, oldDdl, newDdl, classes, null));
  }

  private static void refused(
      String name, String oldDdl, String newDdl, String classes, String refused) {
    CASES.add(new Case(name, oldDdl, newDdl, classes, refused));
  }

  static synchronized List<Case> all() {
    if (CASES.isEmpty()) {
      columnsByType();
      typeChanges();
      tables();
      constraints();
      indexes();
      sequences();
      schemas();
      types();
      functions();
      views();
      triggersAndPolicies();
      commentsAndGrants();
      partitionsAndInheritance();
      storage();
      rulesAndColumnPrivileges();
      functionInterfaces();
      refusals();
    }
    return List.copyOf(CASES);
  }

  private static final String T = "CREATE TABLE t (id bigint PRIMARY KEY, a integer, b text);\n";

  /** A type and a literal of it. */
  private record Typed(String type, String literal) {}

  private static final List<Typed> TYPES =
      List.of(
          new Typed("smallint", "1"),
          new Typed("integer", "1"),
          new Typed("bigint", "1"),
          new Typed("numeric(10,2)", "1.5"),
          new Typed("numeric", "1.5"),
          new Typed("real", "1.5"),
          new Typed("double precision", "1.5"),
          new Typed("text", "'x'"),
          new Typed("varchar(20)", "'x'"),
          new Typed("char(5)", "'x'"),
          new Typed("boolean", "true"),
          new Typed("date", "'2025-01-01'"),
          new Typed("timestamp", "'2025-01-01 00:00'"),
          new Typed("timestamptz", "now()"),
          new Typed("time", "'12:00'"),
          new Typed("interval", "'1 day'"),
          new Typed("uuid", "gen_random_uuid()"),
          new Typed("jsonb", "'{}'"),
          new Typed("json", "'[]'"),
          new Typed("bytea", "'\\x00'"),
          new Typed("inet", "'127.0.0.1'"),
          new Typed("integer[]", "'{}'"),
          new Typed("text[]", "ARRAY['a']"),
          new Typed("tsrange", "'empty'"));

  /** Every column change kind, for each type. */
  private static void columnsByType() {
    for (Typed t : TYPES) {
      String n = t.type();
      String with = T + "CREATE TABLE c (id int, v " + n + ");";
      String withDefault = T + "CREATE TABLE c (id int, v " + n + " DEFAULT " + t.literal() + ");";
      String notNull = T + "CREATE TABLE c (id int, v " + n + " NOT NULL);";
      String without = T + "CREATE TABLE c (id int);";
      exact(n + ": column added", without, with, "safe");
      // gen_random_uuid() is volatile: every row is filled, the table rewritten.
      String withDefaultClass = t.literal().equals("gen_random_uuid()") ? "locking" : "safe";
      exact(n + ": column added with a default", without, withDefault, withDefaultClass);
      exact(n + ": column added NOT NULL without a default", without, notNull, "destructive");
      exact(n + ": column dropped", with, without, "destructive");
      exact(n + ": SET NOT NULL", with, notNull, "destructive");
      exact(n + ": DROP NOT NULL", notNull, with, "safe");
      exact(n + ": default set", with, withDefault, "safe");
      exact(n + ": default dropped", withDefault, with, "safe");
      exact(n + ": column comment", with, with + "\nCOMMENT ON COLUMN c.v IS 'the v';", "safe");
      exact(n + ": table with the column created", T, with, "safe");
    }
  }

  private static void typeChanges() {
    String[][] changes = {
      {"integer", "bigint", "locking"},
      {"smallint", "integer", "locking"},
      {"bigint", "integer", "destructive"},
      {"integer", "smallint", "destructive"},
      {"varchar(20)", "varchar(50)", "safe"},
      {"varchar(50)", "varchar(20)", "destructive"},
      {"varchar(20)", "text", "safe"},
      {"text", "varchar(20)", "destructive"},
      {"text", "varchar", "safe"},
      {"numeric(10,2)", "numeric(12,2)", "safe"},
      {"numeric(10,2)", "numeric(10,4)", "destructive"},
      {"numeric(10,2)", "numeric", "safe"},
      {"integer", "numeric", "locking"},
      {"real", "double precision", "locking"},
      {"double precision", "real", "destructive"},
      {"timestamp", "timestamptz", "locking"},
      {"timestamptz", "timestamp", "locking"},
      {"timestamp(3)", "timestamp(6)", "safe"},
      {"timestamp(6)", "timestamp(3)", "destructive"},
      {"integer", "text", "locking"},
      {"text", "integer", "destructive"},
      {"char(5)", "char(10)", "locking"},
      {"date", "timestamp", "destructive"},
      {"json", "jsonb", "destructive"},
      {"integer[]", "bigint[]", "locking"},
      {"text", "uuid", "destructive"},
    };
    for (String[] c : changes) {
      exact(
          "type " + c[0] + " to " + c[1],
          "CREATE TABLE c (id int, v " + c[0] + ");",
          "CREATE TABLE c (id int, v " + c[1] + ");",
          c[2]);
    }
    exact(
        "type changed with a default",
        "CREATE TABLE c (v integer DEFAULT 0);",
        "CREATE TABLE c (v bigint DEFAULT 0);",
        "locking");
    exact(
        "collation changed",
        "CREATE TABLE c (v text);",
        "CREATE TABLE c (v text COLLATE \"C\");",
        "locking");
    refused(
        "type bigint to timestamp has no cast",
        "CREATE TABLE c (v bigint);",
        "CREATE TABLE c (v timestamp);",
        "destructive",
        "column `v` on `c` (no cast from bigint to timestamp without time zone");
    refused(
        "type integer to boolean[] has no cast",
        "CREATE TABLE c (v integer);",
        "CREATE TABLE c (v boolean[]);",
        "destructive",
        "column `v` on `c` (no cast");
  }

  private static void tables() {
    exact("identical", T, T, "");
    exact("table added", T, T + "CREATE TABLE u (id int);", "safe");
    exact("table dropped", T + "CREATE TABLE u (id int);", T, "destructive");
    exact("empty table added", T, T + "CREATE TABLE u ();", "safe");
    exact(
        "quoted names",
        T,
        T + "CREATE TABLE \"Mixed Case\" (\"Col\" int, \"select\" text);",
        "safe");
    exact(
        "column renamed",
        T,
        "CREATE TABLE t (id bigint PRIMARY KEY, a integer, c text);",
        "destructive+safe");
    exact(
        "table renamed",
        T + "CREATE TABLE u (id int);",
        T + "CREATE TABLE w (id int);",
        "destructive+safe");
    exact(
        "identity column added",
        T,
        T + "ALTER TABLE t ADD COLUMN n int GENERATED ALWAYS AS IDENTITY;",
        "locking");
    exact(
        "identity options changed",
        T + "CREATE TABLE u (id int GENERATED ALWAYS AS IDENTITY);",
        T
            + "CREATE TABLE u (id int GENERATED ALWAYS AS IDENTITY (START WITH 100 INCREMENT BY 10));",
        "safe");
    exact(
        "identity options on create",
        T,
        T + "CREATE TABLE u (id int GENERATED ALWAYS AS IDENTITY (START WITH 100 CACHE 5 CYCLE));",
        "safe");
    exact(
        "identity descending",
        T,
        T + "CREATE TABLE u (id int GENERATED BY DEFAULT AS IDENTITY (INCREMENT BY -1));",
        "safe");
    exact(
        "identity maxvalue changed",
        T + "CREATE TABLE u (id bigint GENERATED ALWAYS AS IDENTITY);",
        T + "CREATE TABLE u (id bigint GENERATED ALWAYS AS IDENTITY (MAXVALUE 1000000));",
        "safe");
    exact(
        "identity always to by default",
        "CREATE TABLE u (id int GENERATED ALWAYS AS IDENTITY);",
        "CREATE TABLE u (id int GENERATED BY DEFAULT AS IDENTITY);",
        "safe");
    exact(
        "identity dropped",
        "CREATE TABLE u (id int GENERATED ALWAYS AS IDENTITY);",
        "CREATE TABLE u (id int NOT NULL);",
        "safe");
    exact(
        "identity added to a column",
        "CREATE TABLE u (id int NOT NULL);",
        "CREATE TABLE u (id int GENERATED ALWAYS AS IDENTITY);",
        "safe");
    exact(
        "generated column added",
        T,
        T + "ALTER TABLE t ADD COLUMN a2 integer GENERATED ALWAYS AS (a * 2) STORED;",
        "locking");
    exact(
        "generated expression changed",
        "CREATE TABLE g (a int, b int GENERATED ALWAYS AS (a + 1) STORED);",
        "CREATE TABLE g (a int, b int GENERATED ALWAYS AS (a + 2) STORED);",
        "locking");
    exact(
        "generated no longer",
        "CREATE TABLE g (a int, b int GENERATED ALWAYS AS (a + 1) STORED);",
        "CREATE TABLE g (a int, b int);",
        "safe");
    exact("serial column added", T, T + "ALTER TABLE t ADD COLUMN s serial;", "locking+safe");
    exact(
        "circular foreign keys dropped",
        T
            + """
        CREATE TABLE a (id int PRIMARY KEY, b_id int);
        CREATE TABLE b (id int PRIMARY KEY, a_id int REFERENCES a);
        ALTER TABLE a ADD FOREIGN KEY (b_id) REFERENCES b;
        """,
        T,
        "destructive");
    exact(
        "circular foreign keys created",
        T,
        T
            + """
        CREATE TABLE a (id int PRIMARY KEY, b_id int);
        CREATE TABLE b (id int PRIMARY KEY, a_id int REFERENCES a);
        ALTER TABLE a ADD FOREIGN KEY (b_id) REFERENCES b;
        """,
        "safe");
    exact(
        "self-referencing table dropped",
        T + "CREATE TABLE tree (id int PRIMARY KEY, parent int REFERENCES tree);",
        T,
        "destructive");
    exact(
        "referencing chain dropped",
        T
            + """
        CREATE TABLE a (id int PRIMARY KEY);
        CREATE TABLE b (id int PRIMARY KEY, a_id int REFERENCES a);
        CREATE TABLE c (id int PRIMARY KEY, b_id int REFERENCES b);
        """,
        T,
        "destructive");
  }

  private static void constraints() {
    String u = T + "CREATE TABLE u (id int NOT NULL, t_id bigint, x int, r tsrange);\n";
    exact("primary key added", u, u + "ALTER TABLE u ADD PRIMARY KEY (id);", "destructive");
    exact("primary key dropped", u + "ALTER TABLE u ADD PRIMARY KEY (id);", u, "safe");
    exact("unique added", u, u + "ALTER TABLE u ADD CONSTRAINT u_x UNIQUE (x);", "destructive");
    exact("unique dropped", u + "ALTER TABLE u ADD CONSTRAINT u_x UNIQUE (x);", u, "safe");
    exact(
        "unique nulls not distinct",
        u,
        u + "ALTER TABLE u ADD CONSTRAINT u_x UNIQUE NULLS NOT DISTINCT (x);",
        "destructive");
    exact(
        "unique widened over an existing key",
        u + "ALTER TABLE u ADD CONSTRAINT u_x UNIQUE (x);",
        u
            + "ALTER TABLE u ADD CONSTRAINT u_x UNIQUE (x);\n"
            + "ALTER TABLE u ADD CONSTRAINT u_xi UNIQUE (x, id);",
        "locking");
    exact(
        "foreign key added",
        u,
        u + "ALTER TABLE u ADD FOREIGN KEY (t_id) REFERENCES t;",
        "destructive");
    exact(
        "foreign key added not valid",
        u,
        u + "ALTER TABLE u ADD FOREIGN KEY (t_id) REFERENCES t NOT VALID;",
        "safe");
    exact(
        "foreign key validated",
        u + "ALTER TABLE u ADD CONSTRAINT fk FOREIGN KEY (t_id) REFERENCES t NOT VALID;",
        u + "ALTER TABLE u ADD CONSTRAINT fk FOREIGN KEY (t_id) REFERENCES t;",
        "safe");
    exact(
        "foreign key dropped", u + "ALTER TABLE u ADD FOREIGN KEY (t_id) REFERENCES t;", u, "safe");
    exact(
        "foreign key on delete changed",
        u + "ALTER TABLE u ADD CONSTRAINT fk FOREIGN KEY (t_id) REFERENCES t;",
        u + "ALTER TABLE u ADD CONSTRAINT fk FOREIGN KEY (t_id) REFERENCES t ON DELETE CASCADE;",
        "destructive");
    exact("check added", u, u + "ALTER TABLE u ADD CONSTRAINT c CHECK (x > 0);", "destructive");
    exact(
        "check added not valid",
        u,
        u + "ALTER TABLE u ADD CONSTRAINT c CHECK (x > id) NOT VALID;",
        "safe");
    exact(
        "check validated",
        u + "ALTER TABLE u ADD CONSTRAINT c CHECK (x > 0) NOT VALID;",
        u + "ALTER TABLE u ADD CONSTRAINT c CHECK (x > 0);",
        "safe");
    exact(
        "check changed",
        u + "ALTER TABLE u ADD CONSTRAINT c CHECK (x > 0);",
        u + "ALTER TABLE u ADD CONSTRAINT c CHECK (x > 1);",
        "destructive");
    exact("check dropped", u + "ALTER TABLE u ADD CONSTRAINT c CHECK (x > 0);", u, "safe");
    exact(
        "exclusion added",
        u,
        u + "ALTER TABLE u ADD CONSTRAINT no_overlap EXCLUDE USING gist (r WITH &&);",
        "destructive");
    exact(
        "exclusion dropped",
        u + "ALTER TABLE u ADD CONSTRAINT no_overlap EXCLUDE USING gist (r WITH &&);",
        u,
        "safe");
    exact(
        "deferrable unique",
        u,
        u + "ALTER TABLE u ADD CONSTRAINT u_x UNIQUE (x) DEFERRABLE INITIALLY DEFERRED;",
        "destructive");
    exact(
        "constraint on new column of existing table",
        u,
        u + "ALTER TABLE u ADD COLUMN y int CHECK (y > 0);",
        "destructive+safe");
  }

  private static void indexes() {
    String u = T + "CREATE TABLE u (id int, x int, j jsonb, s text);\n";
    exact("index added", u, u + "CREATE INDEX u_x ON u (x);", "locking");
    exact("index dropped", u + "CREATE INDEX u_x ON u (x);", u, "locking");
    exact(
        "index changed",
        u + "CREATE INDEX u_x ON u (x);",
        u + "CREATE INDEX u_x ON u (x, id);",
        "locking");
    exact("unique index added", u, u + "CREATE UNIQUE INDEX u_x ON u (x);", "destructive");
    exact("partial index", u, u + "CREATE INDEX u_x ON u (x) WHERE x > 0;", "locking");
    exact("expression index", u, u + "CREATE INDEX u_lower ON u (lower(s));", "locking");
    exact("include index", u, u + "CREATE INDEX u_x ON u (x) INCLUDE (id);", "locking");
    exact("gin index", u, u + "CREATE INDEX u_j ON u USING gin (j);", "locking");
    exact("hash index", u, u + "CREATE INDEX u_h ON u USING hash (s);", "locking");
    exact("brin index", u, u + "CREATE INDEX u_b ON u USING brin (id);", "locking");
    exact("descending index", u, u + "CREATE INDEX u_d ON u (x DESC NULLS LAST);", "locking");
    exact(
        "index with storage parameter",
        u,
        u + "CREATE INDEX u_f ON u (x) WITH (fillfactor = 70);",
        "locking");
    exact(
        "index on a new table",
        T,
        T + "CREATE TABLE v (x int);\nCREATE INDEX v_x ON v (x);",
        "safe");
  }

  private static void sequences() {
    exact("sequence added", T, T + "CREATE SEQUENCE s;", "safe");
    exact("sequence dropped", T + "CREATE SEQUENCE s;", T, "destructive");
    exact(
        "sequence options changed",
        T + "CREATE SEQUENCE s;",
        T + "CREATE SEQUENCE s INCREMENT BY 5 MAXVALUE 1000 CACHE 3 CYCLE;",
        "safe");
    exact(
        "sequence bounds exclude its values",
        T + "CREATE SEQUENCE s;",
        T + "CREATE SEQUENCE s MINVALUE 10 START 10;",
        "destructive");
    exact(
        "sequence type changed",
        T + "CREATE SEQUENCE s AS integer;",
        T + "CREATE SEQUENCE s AS bigint;",
        "safe");
    exact(
        "sequence owned", T + "CREATE SEQUENCE s;", T + "CREATE SEQUENCE s OWNED BY t.a;", "safe");
    exact(
        "sequence disowned",
        T + "CREATE SEQUENCE s OWNED BY t.a;",
        T + "CREATE SEQUENCE s;",
        "safe");
    exact(
        "sequence owner moves to a new table",
        T
            + "CREATE SEQUENCE s; CREATE TABLE o (id int DEFAULT nextval('s'));"
            + " ALTER SEQUENCE s OWNED BY o.id;",
        T
            + "CREATE SEQUENCE s; CREATE TABLE n (id int DEFAULT nextval('s'));"
            + " ALTER SEQUENCE s OWNED BY n.id;",
        "destructive+safe");
    exact(
        "sequence default added",
        T + "CREATE SEQUENCE s;",
        T + "CREATE SEQUENCE s;\nALTER TABLE t ALTER COLUMN a SET DEFAULT nextval('s');",
        "safe");
  }

  private static void schemas() {
    exact("schema added", T, T + "CREATE SCHEMA audit;", "safe");
    exact("schema dropped", T + "CREATE SCHEMA audit;", T, "destructive");
    exact(
        "table in a new schema",
        T,
        T + "CREATE SCHEMA audit;\nCREATE TABLE audit.log (id int);",
        "safe");
    exact(
        "schema named after the default schema",
        T + "CREATE SCHEMA \"${flyway:defaultSchema}_audit\";",
        T
            + "CREATE SCHEMA \"${flyway:defaultSchema}_audit\";\n"
            + "CREATE TABLE \"${flyway:defaultSchema}_audit\".log (id int);",
        "safe");
    exact(
        "default naming the default schema",
        T,
        T + "CREATE TABLE d (origin text DEFAULT '${flyway:defaultSchema}');",
        "safe");
    exact(
        "cross-schema foreign key",
        T,
        T
            + """
        CREATE SCHEMA audit;
        CREATE TABLE audit.log (id int, t_id bigint REFERENCES t);
        """,
        "safe");
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

  private static final String TOUCH =
      """
      CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN NEW.a := 1; RETURN NEW; END $$;
      """;

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

  private static void views() {
    String v = "CREATE VIEW v AS SELECT id, a FROM t;\n";
    exact("view added", T, T + v, "safe");
    exact("view dropped", T + v, T, "safe");
    exact("view changed", T + v, T + "CREATE VIEW v AS SELECT id, a, b FROM t;\n", "safe");
    exact("view over a view", T, T + v + "CREATE VIEW w AS SELECT id FROM v;", "safe");
    exact(
        "view under a view changed",
        T + v + "CREATE VIEW w AS SELECT id FROM v;",
        T + "CREATE VIEW v AS SELECT id, a, b FROM t;\nCREATE VIEW w AS SELECT id FROM v;",
        "safe");
    exact(
        "view over a dropped column",
        T + "CREATE VIEW v AS SELECT id, b FROM t;",
        T + "ALTER TABLE t DROP COLUMN b;",
        "destructive+safe");
    exact(
        "view kept around a retyped column",
        T + v,
        "CREATE TABLE t (id bigint PRIMARY KEY, a bigint, b text);\n" + v,
        "locking+safe");
    exact(
        "view kept around a dropped other column",
        T + v,
        "CREATE TABLE t (id bigint PRIMARY KEY, a integer);\n" + v,
        "destructive");
    exact(
        "view over a dropped table",
        T + "CREATE TABLE u (x int);\nCREATE VIEW uv AS SELECT x FROM u;",
        T,
        "destructive+safe");
    exact(
        "view with check option",
        T,
        T + "CREATE VIEW v WITH (check_option = local) AS SELECT id, a FROM t WHERE a > 0;",
        "safe");
    exact(
        "security invoker view",
        T,
        T + "CREATE VIEW v WITH (security_invoker = true) AS SELECT id FROM t;",
        "safe");
    exact(
        "view using a function",
        T,
        T
            + "CREATE FUNCTION dbl(int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT $1 * 2';\n"
            + "CREATE VIEW v AS SELECT dbl(a) AS d FROM t;",
        "safe");
    String mv = "CREATE MATERIALIZED VIEW mv AS SELECT a, count(*) AS n FROM t GROUP BY a;\n";
    exact("materialized view added", T, T + mv, "safe");
    exact("materialized view dropped", T + mv, T, "safe");
    exact(
        "materialized view changed",
        T + mv,
        T
            + "CREATE MATERIALIZED VIEW mv AS SELECT a, count(*) AS n, max(id) AS m FROM t GROUP BY a;",
        "locking");
    exact(
        "materialized view index added",
        T + mv,
        T + mv + "CREATE UNIQUE INDEX mv_a ON mv (a);",
        "locking");
    exact(
        "materialized view with no data",
        T,
        T + "CREATE MATERIALIZED VIEW mv AS SELECT a FROM t WITH NO DATA;",
        "safe");
    exact(
        "materialized view kept around a retyped column",
        T + mv,
        "CREATE TABLE t (id bigint PRIMARY KEY, a bigint, b text);\n" + mv,
        "locking+safe");
  }

  private static void triggersAndPolicies() {
    String tg =
        "CREATE TRIGGER t_touch BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION touch();\n";
    exact("trigger added", T + TOUCH, T + TOUCH + tg, "safe");
    exact("trigger and its function added", T, T + TOUCH + tg, "safe");
    exact("trigger dropped", T + TOUCH + tg, T + TOUCH, "safe");
    exact(
        "trigger changed",
        T + TOUCH + tg,
        T
            + TOUCH
            + "CREATE TRIGGER t_touch BEFORE INSERT OR UPDATE ON t FOR EACH ROW"
            + " EXECUTE FUNCTION touch();",
        "safe");
    exact(
        "trigger disabled",
        T + TOUCH + tg,
        T + TOUCH + tg + "ALTER TABLE t DISABLE TRIGGER t_touch;",
        "safe");
    exact(
        "trigger with when",
        T + TOUCH,
        T
            + TOUCH
            + "CREATE TRIGGER t_when BEFORE UPDATE ON t FOR EACH ROW WHEN (OLD.a IS DISTINCT"
            + " FROM NEW.a) EXECUTE FUNCTION touch();",
        "safe");
    exact(
        "trigger function replaced",
        T + TOUCH + tg,
        T
            + """
        CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN NEW.a := 2; RETURN NEW; END $$;
        """
            + tg,
        "safe");
    exact(
        "trigger on a dropped table",
        T
            + TOUCH
            + "CREATE TABLE u (a int);\n"
            + "CREATE TRIGGER u_touch BEFORE INSERT ON u FOR EACH ROW EXECUTE FUNCTION touch();",
        T + TOUCH,
        "destructive+safe");
    exact(
        "constraint trigger",
        T + TOUCH,
        T
            + TOUCH
            + "CREATE CONSTRAINT TRIGGER t_c AFTER INSERT ON t DEFERRABLE INITIALLY DEFERRED"
            + " FOR EACH ROW EXECUTE FUNCTION touch();",
        "safe");
    String rls = "ALTER TABLE t ENABLE ROW LEVEL SECURITY;\n";
    String pol = "CREATE POLICY p ON t FOR SELECT TO PUBLIC USING (a > 0);\n";
    exact("row security enabled", T, T + rls, "safe");
    exact("row security disabled", T + rls, T, "safe");
    exact(
        "row security forced",
        T + rls,
        T + rls + "ALTER TABLE t FORCE ROW LEVEL SECURITY;",
        "safe");
    exact("policy added", T + rls, T + rls + pol, "safe");
    exact("policy dropped", T + rls + pol, T + rls, "safe");
    exact(
        "policy changed",
        T + rls + pol,
        T + rls + "CREATE POLICY p ON t FOR SELECT TO PUBLIC USING (a > 1);",
        "safe");
    exact(
        "restrictive policy with check",
        T + rls,
        T + rls + "CREATE POLICY r ON t AS RESTRICTIVE FOR INSERT WITH CHECK (a IS NOT NULL);",
        "safe");
    exact(
        "policy over a dropped column",
        T + rls + "CREATE POLICY p ON t USING (b <> '');",
        "CREATE TABLE t (id bigint PRIMARY KEY, a integer);\n" + rls,
        "destructive+safe");
    exact(
        "policy kept around a retyped column",
        T + rls + pol,
        "CREATE TABLE t (id bigint PRIMARY KEY, a bigint, b text);\n" + rls + pol,
        "locking+safe");
    exact("replica identity full", T, T + "ALTER TABLE t REPLICA IDENTITY FULL;", "safe");
    exact(
        "replica identity using index",
        T + "CREATE UNIQUE INDEX t_a ON t (a);\n" + "ALTER TABLE t ALTER COLUMN a SET NOT NULL;",
        T
            + "CREATE UNIQUE INDEX t_a ON t (a);\nALTER TABLE t ALTER COLUMN a SET NOT NULL;\n"
            + "ALTER TABLE t REPLICA IDENTITY USING INDEX t_a;",
        "safe");
    exact(
        "replica identity back to default", T + "ALTER TABLE t REPLICA IDENTITY FULL;", T, "safe");
    exact("statistics added", T, T + "CREATE STATISTICS t_ab (ndistinct) ON a, b FROM t;", "safe");
    exact(
        "statistics dropped", T + "CREATE STATISTICS t_ab (ndistinct) ON a, b FROM t;", T, "safe");
  }

  private static void commentsAndGrants() {
    exact("table comment", T, T + "COMMENT ON TABLE t IS 'the t';", "safe");
    exact(
        "table comment changed",
        T + "COMMENT ON TABLE t IS 'the t';",
        T + "COMMENT ON TABLE t IS 'it''s the t';",
        "safe");
    exact("table comment removed", T + "COMMENT ON TABLE t IS 'the t';", T, "safe");
    exact(
        "comment on a dropped table",
        T + "CREATE TABLE u (x int);\nCOMMENT ON TABLE u IS 'u';",
        T,
        "destructive+safe");
    exact(
        "index comment",
        T + "CREATE INDEX t_a ON t (a);",
        T + "CREATE INDEX t_a ON t (a);\nCOMMENT ON INDEX t_a IS 'by a';",
        "safe");
    exact("constraint comment", T, T + "COMMENT ON CONSTRAINT t_pkey ON t IS 'the key';", "safe");
    exact(
        "view comment",
        T + "CREATE VIEW v AS SELECT id FROM t;",
        T + "CREATE VIEW v AS SELECT id FROM t;\nCOMMENT ON VIEW v IS 'v';",
        "safe");
    exact(
        "function comment",
        T + "CREATE FUNCTION one() RETURNS int LANGUAGE sql AS 'SELECT 1';",
        T
            + "CREATE FUNCTION one() RETURNS int LANGUAGE sql AS 'SELECT 1';\n"
            + "COMMENT ON FUNCTION one() IS 'one';",
        "safe");
    exact(
        "type comment",
        "CREATE TYPE color AS ENUM ('red');",
        "CREATE TYPE color AS ENUM ('red');\nCOMMENT ON TYPE color IS 'colors';",
        "safe");
    exact(
        "schema comment",
        "CREATE SCHEMA audit;",
        "CREATE SCHEMA audit;\nCOMMENT ON SCHEMA audit IS 'audit';",
        "safe");
    exact(
        "sequence comment",
        "CREATE SEQUENCE s;",
        "CREATE SEQUENCE s;\nCOMMENT ON SEQUENCE s IS 's';",
        "safe");
    exact(
        "comment on a re-created view",
        T + "CREATE VIEW v AS SELECT id, a FROM t;\n" + "COMMENT ON VIEW v IS 'v';",
        T + "CREATE VIEW v AS SELECT id, a, b FROM t;\n" + "COMMENT ON VIEW v IS 'v';",
        "safe");
    exact("grant select to public", T, T + "GRANT SELECT ON t TO PUBLIC;", "safe");
    exact("grant revoked", T + "GRANT SELECT, INSERT ON t TO PUBLIC;", T, "safe");
    exact(
        "grant changed",
        T + "GRANT SELECT ON t TO PUBLIC;",
        T + "GRANT SELECT, UPDATE ON t TO PUBLIC;",
        "safe");
    exact(
        "grant on a view",
        T + "CREATE VIEW v AS SELECT id FROM t;",
        T + "CREATE VIEW v AS SELECT id FROM t;\nGRANT SELECT ON v TO PUBLIC;",
        "safe");
    exact(
        "grant on a sequence",
        "CREATE SEQUENCE s;",
        "CREATE SEQUENCE s;\nGRANT USAGE ON SEQUENCE s TO PUBLIC;",
        "safe");
    exact(
        "execute revoked from public",
        "CREATE FUNCTION one() RETURNS int LANGUAGE sql AS 'SELECT 1';",
        "CREATE FUNCTION one() RETURNS int LANGUAGE sql AS 'SELECT 1';\n"
            + "REVOKE EXECUTE ON FUNCTION one() FROM PUBLIC;",
        "safe");
    exact(
        "usage on a schema",
        "CREATE SCHEMA audit;",
        "CREATE SCHEMA audit;\nGRANT USAGE ON SCHEMA audit TO PUBLIC;",
        "safe");
    exact(
        "usage on a type revoked",
        "CREATE TYPE color AS ENUM ('red');",
        "CREATE TYPE color AS ENUM ('red');\nREVOKE USAGE ON TYPE color FROM PUBLIC;",
        "safe");
    exact(
        "grant kept on a re-created view",
        T + "CREATE VIEW v AS SELECT id, a FROM t;\n" + "GRANT SELECT ON v TO PUBLIC;",
        "CREATE TABLE t (id bigint PRIMARY KEY, a bigint, b text);\n"
            + "CREATE VIEW v AS SELECT id, a FROM t;\nGRANT SELECT ON v TO PUBLIC;",
        "locking+safe");
  }

  private static void partitionsAndInheritance() {
    String m =
        "CREATE TABLE m (id bigint, at date, PRIMARY KEY (id, at)) PARTITION BY RANGE (at);\n";
    String p25 =
        "CREATE TABLE m_2025 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');\n";
    String p26 =
        "CREATE TABLE m_2026 PARTITION OF m FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');\n";
    exact("partitioned table added", T, T + m + p25 + "CREATE INDEX m_at ON m (at);", "safe");
    exact("partition added", m + p25, m + p25 + p26, "safe");
    exact("partition dropped", m + p25 + p26, m + p25, "destructive");
    exact("partitioned parent dropped", T + m + p25 + p26, T, "destructive");
    exact(
        "index on a partitioned parent",
        m + p25,
        m + p25 + "CREATE INDEX m_at ON m (at);",
        "locking");
    // Issue 31: a partitioned parent's index is built on every partition and attached.
    exact(
        "hash index on a partitioned parent",
        m + p25 + p26,
        m + p25 + p26 + "CREATE INDEX m_id_hash ON m USING hash (id);",
        "locking");
    exact(
        "functional index on a partitioned parent",
        m + p25 + p26,
        m + p25 + p26 + "CREATE INDEX m_year ON m ((extract(year FROM at)));",
        "locking");
    exact(
        "index column order changed on a partitioned parent",
        m + p25 + p26 + "CREATE INDEX m_ix ON m (id, at);",
        m + p25 + p26 + "CREATE INDEX m_ix ON m (at, id);",
        "locking");
    exact(
        "partition's own index attached to a new parent index",
        m + p25 + p26 + "CREATE INDEX m_2025_at ON m_2025 (at);",
        m + p25 + p26 + "CREATE INDEX m_2025_at ON m_2025 (at);\nCREATE INDEX m_at ON m (at);",
        "locking");
    String bare = "CREATE TABLE m (id bigint, at date) PARTITION BY RANGE (at);\n";
    exact(
        "partition's unique index taken over by its key",
        bare + p25 + "CREATE UNIQUE INDEX m_2025_key ON m_2025 (id);",
        bare
            + p25
            + "CREATE UNIQUE INDEX m_2025_key ON m_2025 (id);\n"
            + "ALTER TABLE m_2025 ADD CONSTRAINT m_2025_key UNIQUE USING INDEX m_2025_key;",
        "locking");
    exact(
        "parent's key over a partition's unique index",
        bare + p25 + "CREATE UNIQUE INDEX m_2025_at_id ON m_2025 (at, id);",
        bare
            + p25
            + "CREATE UNIQUE INDEX m_2025_at_id ON m_2025 (at, id);\n"
            + "ALTER TABLE m ADD PRIMARY KEY (at, id);",
        "destructive");
    exact(
        "attached partitions' NOT NULL after the parent's key goes",
        "CREATE TABLE m (id bigint NOT NULL, at date NOT NULL, PRIMARY KEY (id, at))"
            + " PARTITION BY RANGE (at);\n"
            + "CREATE TABLE m_2025 (id bigint NOT NULL, at date NOT NULL);\n"
            + "ALTER TABLE m ATTACH PARTITION m_2025 FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');",
        bare
            + "CREATE TABLE m_2025 (id bigint, at date);\n"
            + "ALTER TABLE m ATTACH PARTITION m_2025 FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');",
        "safe");
    exact(
        "foreign key to a partitioned table whose key is made again",
        m
            + p25
            + "CREATE TABLE r (id bigint, m_id bigint, m_at date, FOREIGN KEY (m_id, m_at) REFERENCES m);",
        m.replace("PRIMARY KEY (id, at)", "PRIMARY KEY (at, id)")
            + p25
            + "CREATE TABLE r (id bigint, m_id bigint, m_at date,"
            + " FOREIGN KEY (m_at, m_id) REFERENCES m (at, id));",
        "destructive+locking+safe");
    exact(
        "column on a partitioned parent",
        m + p25,
        m + p25 + "ALTER TABLE m ADD COLUMN x int;",
        "safe");
    exact(
        "column dropped from a partitioned parent",
        m + p25 + "ALTER TABLE m ADD COLUMN x int;",
        m + p25,
        "destructive");
    exact(
        "partition bound changed",
        m + p25,
        m + "CREATE TABLE m_2025 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2025-07-01');",
        "locking");
    exact(
        "partition detached",
        m + p25,
        m
            + "CREATE TABLE m_2025 (id bigint NOT NULL, at date NOT NULL,"
            + " CONSTRAINT m_2025_pkey PRIMARY KEY (id, at));",
        "locking");
    exact("default partition", m, m + "CREATE TABLE m_rest PARTITION OF m DEFAULT;", "safe");
    exact(
        "list partitions",
        T,
        T
            + """
        CREATE TABLE l (id int, region text) PARTITION BY LIST (region);
        CREATE TABLE l_eu PARTITION OF l FOR VALUES IN ('eu');
        CREATE TABLE l_us PARTITION OF l FOR VALUES IN ('us', 'ca');
        """,
        "safe");
    exact(
        "hash partitions",
        T,
        T
            + """
        CREATE TABLE h (id int) PARTITION BY HASH (id);
        CREATE TABLE h0 PARTITION OF h FOR VALUES WITH (MODULUS 2, REMAINDER 0);
        CREATE TABLE h1 PARTITION OF h FOR VALUES WITH (MODULUS 2, REMAINDER 1);
        """,
        "safe");
    exact(
        "sub-partitions",
        T,
        T
            + m
            + """
        CREATE TABLE m_2025 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')
            PARTITION BY RANGE (id);
        CREATE TABLE m_2025_a PARTITION OF m_2025 FOR VALUES FROM (0) TO (1000);
        """,
        "safe");
    exact(
        "partition attached from a table",
        T,
        T
            + m
            + """
        CREATE TABLE m_2025 (id bigint NOT NULL, at date NOT NULL);
        ALTER TABLE m ATTACH PARTITION m_2025 FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
        """,
        "safe");
    exact(
        "foreign key on a partitioned table",
        T + m + p25,
        T + m + p25 + "ALTER TABLE m ADD COLUMN t_id bigint REFERENCES t;",
        "destructive+safe");
    exact(
        "trigger on a partitioned table",
        T + TOUCH + "CREATE TABLE m (id bigint, a int, at date) PARTITION BY RANGE (at);\n" + p25,
        T
            + TOUCH
            + "CREATE TABLE m (id bigint, a int, at date) PARTITION BY RANGE (at);\n"
            + p25
            + "CREATE TRIGGER m_touch BEFORE INSERT ON m FOR EACH ROW EXECUTE FUNCTION touch();",
        "safe");
    refused(
        "partition key changed",
        T + "CREATE TABLE k (id bigint, at date) PARTITION BY RANGE (at);",
        T + "CREATE TABLE k (id bigint, at date) PARTITION BY RANGE (id);",
        "destructive",
        "table `k`");
    refused(
        "table becomes partitioned",
        T + "CREATE TABLE k (id bigint, at date);",
        T + "CREATE TABLE k (id bigint, at date) PARTITION BY RANGE (at);",
        "destructive",
        "table `k`");
    String p = "CREATE TABLE p (id int, x int);\n";
    exact("inheritance child added", p, p + "CREATE TABLE c (y int) INHERITS (p);", "safe");
    exact(
        "inheritance child dropped", p + "CREATE TABLE c (y int) INHERITS (p);", p, "destructive");
    exact(
        "inheritance parent and child dropped",
        T + p + "CREATE TABLE c () INHERITS (p);",
        T,
        "destructive");
    exact(
        "column added to an inheritance parent",
        p + "CREATE TABLE c () INHERITS (p);",
        p + "CREATE TABLE c () INHERITS (p);\nALTER TABLE p ADD COLUMN z int;",
        "safe");
    exact(
        "inheritance child keeps a dropped parent column",
        p + "CREATE TABLE c () INHERITS (p);",
        "CREATE TABLE p (id int);\nCREATE TABLE c (x int) INHERITS (p);",
        "destructive+safe");
    exact(
        "inheritance removed",
        p + "CREATE TABLE c (id int, x int) INHERITS (p);",
        p + "CREATE TABLE c (id int, x int);",
        "safe");
    exact(
        "inheritance added",
        p + "CREATE TABLE c (id int, x int);",
        p + "CREATE TABLE c (id int, x int) INHERITS (p);",
        "safe");
    exact(
        "inherited check",
        p,
        p
            + "ALTER TABLE p ADD CONSTRAINT x_pos CHECK (x > 0);\n"
            + "CREATE TABLE c () INHERITS (p);",
        "destructive+safe");
  }

  private static void storage() {
    String u = "CREATE TABLE u (x int PRIMARY KEY);\n";
    String unlogged = "CREATE UNLOGGED TABLE u (x int PRIMARY KEY);\n";
    exact("storage: unlogged table", T + u, T + unlogged, "locking");
    exact("storage: logged again", T + unlogged, T + u, "locking");
    exact(
        "storage: storage parameters",
        T + u,
        T + "CREATE TABLE u (x int PRIMARY KEY) WITH (fillfactor = 50);",
        "safe");
    exact(
        "storage: storage parameters changed and reset",
        T + "CREATE TABLE u (x int) WITH (fillfactor = 50, autovacuum_enabled = false);",
        T + "CREATE TABLE u (x int) WITH (fillfactor = 70);",
        "safe");
    exact(
        "storage: unlogged with parameters, then logged without",
        T + "CREATE UNLOGGED TABLE u (x int) WITH (fillfactor = 50);",
        T + "CREATE TABLE u (x int);",
        "locking");
    exact("storage: new unlogged table", T, T + unlogged, "safe");
    exact("storage: unlogged table dropped", T + unlogged, T, "destructive+safe");
    exact(
        "storage: parameters on a partitioned table's partition",
        T
            + "CREATE TABLE m (id bigint, at date) PARTITION BY RANGE (at);\n"
            + "CREATE TABLE m25 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');",
        T
            + "CREATE TABLE m (id bigint, at date) PARTITION BY RANGE (at);\n"
            + "CREATE TABLE m25 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')"
            + " WITH (fillfactor = 80);",
        "safe");
  }

  private static void rulesAndColumnPrivileges() {
    String keep = "CREATE RULE t_keep AS ON DELETE TO t DO INSTEAD NOTHING;\n";
    exact("rule added", T, T + keep, "safe");
    exact("rule dropped", T + keep, T, "safe");
    exact(
        "rule changed",
        T + keep,
        T + "CREATE RULE t_keep AS ON DELETE TO t WHERE old.a > 0 DO INSTEAD NOTHING;",
        "safe");
    exact("rule disabled", T + keep, T + keep + "ALTER TABLE t DISABLE RULE t_keep;", "safe");
    exact(
        "rule on a new table",
        T,
        T
            + "CREATE TABLE log (id bigint, at timestamptz);\n"
            + "CREATE RULE t_log AS ON INSERT TO t DO ALSO INSERT INTO log VALUES (new.id, now());",
        "safe");
    exact("column privileges", T, T + "GRANT SELECT (a) ON t TO PUBLIC;", "safe");
    exact(
        "column privileges widened",
        T + "GRANT SELECT (a) ON t TO PUBLIC;",
        T + "GRANT SELECT (a), UPDATE (a), INSERT (b) ON t TO PUBLIC;",
        "safe");
    exact("column privileges revoked", T + "GRANT SELECT (a, b) ON t TO PUBLIC;", T, "safe");
    exact(
        "column privileges on a dropped column",
        T + "GRANT SELECT (a, b) ON t TO PUBLIC;",
        "CREATE TABLE t (id bigint PRIMARY KEY, b text);\nGRANT SELECT (b) ON t TO PUBLIC;",
        "destructive+safe");
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

  private static void refusals() {
    refused(
        "aggregate added",
        T,
        T + "CREATE AGGREGATE total(int) (sfunc = int4pl, stype = int, initcond = '0');",
        "destructive",
        "aggregate total(integer)");
    refused(
        "operator added",
        T,
        T
            + """
        CREATE FUNCTION near(int, int) RETURNS boolean LANGUAGE sql AS 'SELECT abs($1 - $2) < 2';
        CREATE OPERATOR ~~~ (LEFTARG = int, RIGHTARG = int, FUNCTION = near);
        """,
        "destructive+safe",
        "operator");
    refused(
        "range type added",
        T,
        T + "CREATE TYPE floatrange AS RANGE (subtype = float8);",
        "destructive",
        "range type");
    refused(
        "text search configuration added",
        T,
        T + "CREATE TEXT SEARCH CONFIGURATION simple2 (COPY = simple);",
        "destructive",
        "text search configuration");
  }
}

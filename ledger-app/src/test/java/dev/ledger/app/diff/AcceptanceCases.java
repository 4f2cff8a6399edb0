package dev.ledger.app.diff;

import java.util.ArrayList;
import java.util.List;

/**
 * The cases of {@link SchemaDiffAcceptanceTest}: old DDL, new DDL, and the classes the changes must
 * have ({@code safe}, {@code locking}, {@code destructive}, joined with {@code +} in that sorted
 * order, empty for no change), plus, for a case the tool must refuse, the object named.
 */
final class AcceptanceCases {

  private AcceptanceCases() {}

  /**
   * One case.
   *
   * @param name unique, lowercase
   * @param oldDdl the base schema
   * @param newDdl the head schema
   * @param classes the expected classes, e.g. {@code destructive+safe}
   * @param refused for a refused case, text the refusal must name; else null
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

  static List<Case> all() {
    if (CASES.isEmpty()) {
      tables();
    }
    return List.copyOf(CASES);
  }

  private static final String T = "CREATE TABLE t (id bigint PRIMARY KEY, a integer, b text);\n";

  private static void tables() {
    exact("identical", T, T, "");
    exact("table added", T, T + "CREATE TABLE u (id int);", "safe");
    exact("table dropped", T + "CREATE TABLE u (id int);", T, "destructive");
    exact("column added", T, T + "ALTER TABLE t ADD COLUMN c int;", "safe");
    exact("column dropped", T, T + "ALTER TABLE t DROP COLUMN b;", "destructive");
    exact(
        "enum column added",
        T,
        "CREATE TYPE color AS ENUM ('red', 'green');\n"
            + T
            + "ALTER TABLE t ADD COLUMN c color DEFAULT 'red';",
        "safe");
    exact(
        "enum value added and used as default",
        "CREATE TYPE color AS ENUM ('red');\n" + T + "ALTER TABLE t ADD COLUMN c color;",
        "CREATE TYPE color AS ENUM ('red', 'green');\n"
            + T
            + "ALTER TABLE t ADD COLUMN c color DEFAULT 'green';",
        "safe");
    exact("view added", T, T + "CREATE VIEW v AS SELECT id, a FROM t;", "safe");
    exact(
        "view over dropped column",
        T + "CREATE VIEW v AS SELECT id, b FROM t;",
        T + "ALTER TABLE t DROP COLUMN b;",
        "destructive+safe");
    exact(
        "view kept around retyped column",
        T + "CREATE VIEW v AS SELECT id, a FROM t;",
        T + "ALTER TABLE t ALTER COLUMN a TYPE bigint;\nCREATE VIEW v AS SELECT id, a FROM t;",
        "locking+safe");
    exact(
        "function and trigger",
        T,
        T
            + """
        CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN NEW.a := 1; RETURN NEW; END $$;
        CREATE TRIGGER t_touch BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION touch();
        """,
        "safe");
    exact(
        "policy and rls",
        T,
        T
            + """
        ALTER TABLE t ENABLE ROW LEVEL SECURITY;
        CREATE POLICY p ON t FOR SELECT TO PUBLIC USING (a > 0);
        """,
        "safe");
    exact(
        "comment",
        T,
        T + "COMMENT ON TABLE t IS 'the t';\nCOMMENT ON COLUMN t.a IS 'an a';",
        "safe");
    exact("grant", T, T + "GRANT SELECT ON t TO PUBLIC;", "safe");
    exact(
        "identity options",
        T + "CREATE TABLE u (id int GENERATED ALWAYS AS IDENTITY);",
        T
            + "CREATE TABLE u (id int GENERATED ALWAYS AS IDENTITY (START WITH 100 INCREMENT BY 10));",
        "safe");
    exact(
        "identity options on create",
        T,
        T + "CREATE TABLE u (id int GENERATED ALWAYS AS IDENTITY (START WITH 100 CACHE 5 CYCLE));",
        "safe");
    exact("check valid", T, T + "ALTER TABLE t ADD CONSTRAINT c CHECK (a > 0);", "destructive");
    exact(
        "check not valid",
        T,
        T + "ALTER TABLE t ADD CONSTRAINT c CHECK (a > id) NOT VALID;",
        "safe");
    exact(
        "circular fks dropped",
        T
            + """
        CREATE TABLE a (id int PRIMARY KEY, b_id int);
        CREATE TABLE b (id int PRIMARY KEY, a_id int REFERENCES a);
        ALTER TABLE a ADD FOREIGN KEY (b_id) REFERENCES b;
        """,
        T,
        "destructive");
    exact(
        "owned by moves",
        T
            + "CREATE SEQUENCE s; CREATE TABLE o (id int DEFAULT nextval('s'));"
            + " ALTER SEQUENCE s OWNED BY o.id;",
        T
            + "CREATE SEQUENCE s; CREATE TABLE n (id int DEFAULT nextval('s'));"
            + " ALTER SEQUENCE s OWNED BY n.id;",
        "destructive+safe");
    exact(
        "partitioned table added",
        T,
        T
            + """
        CREATE TABLE m (id bigint, at date, PRIMARY KEY (id, at)) PARTITION BY RANGE (at);
        CREATE TABLE m_2025 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
        CREATE INDEX m_at ON m (at);
        """,
        "safe");
    refused(
        "partition key changed",
        T + "CREATE TABLE m (id bigint, at date) PARTITION BY RANGE (at);",
        T + "CREATE TABLE m (id bigint, at date) PARTITION BY RANGE (id);",
        "destructive",
        "table `m`");
    exact(
        "partitioned parent dropped",
        T
            + """
        CREATE TABLE m (id bigint, at date) PARTITION BY RANGE (at);
        CREATE TABLE m_2025 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
        """,
        T,
        "destructive");
    exact(
        "scratch name in collation",
        T,
        T
            + """
        CREATE COLLATION numeric (provider = icu, locale = 'en-u-kn-true');
        CREATE TABLE c (v text COLLATE numeric);
        """,
        "safe");
    exact(
        "schema from placeholder",
        T + "CREATE SCHEMA \"${flyway:defaultSchema}_audit\";",
        T
            + "CREATE SCHEMA \"${flyway:defaultSchema}_audit\";\n"
            + "CREATE TABLE \"${flyway:defaultSchema}_audit\".log (id int);",
        "safe");
    exact(
        "inheritance child keeps dropped parent column",
        """
        CREATE TABLE p (id int, x int);
        CREATE TABLE c () INHERITS (p);
        """,
        """
        CREATE TABLE p (id int);
        CREATE TABLE c (x int) INHERITS (p);
        """,
        "destructive+safe");
    exact(
        "inheritance child added",
        "CREATE TABLE p (id int);",
        "CREATE TABLE p (id int);\nCREATE TABLE c (y int) INHERITS (p);",
        "safe");
    exact(
        "matview with index",
        T,
        T
            + """
        CREATE MATERIALIZED VIEW mv AS SELECT a, count(*) AS n FROM t GROUP BY a;
        CREATE UNIQUE INDEX mv_a ON mv (a);
        """,
        "safe");
    exact(
        "domain and composite",
        T,
        T
            + """
        CREATE DOMAIN positive AS integer CHECK (VALUE > 0);
        CREATE TYPE pair AS (x integer, y integer);
        CREATE TABLE d (p positive, q pair);
        """,
        "safe");
  }
}

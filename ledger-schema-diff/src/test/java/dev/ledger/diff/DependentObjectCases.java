package dev.ledger.diff;

import static dev.ledger.diff.AcceptanceCases.T;
import static dev.ledger.diff.AcceptanceCases.TOUCH;
import static dev.ledger.diff.AcceptanceCases.exact;

/**
 * Acceptance cases of {@link SchemaDiffAcceptanceTest} ({@link AcceptanceCases}): views, triggers,
 * policies, comments, grants, table storage, rules and column privileges.
 */
final class DependentObjectCases {

  private DependentObjectCases() {}

  /** Adds the cases, in a stable order. */
  static void addAll() {
    views();
    triggersAndPolicies();
    commentsAndGrants();
    storage();
    rulesAndColumnPrivileges();
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
}

package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The independent check's catalog rows ({@link CatalogFingerprint}): two schemas built alike read
 * alike whatever they are called, and a change of one row in any one catalog is seen, named by its
 * catalog and object.
 */
class CatalogFingerprintTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final AtomicInteger SCHEMAS = new AtomicInteger();

  /** One of each kind the fingerprint reads. */
  private static final String SCHEMA =
      """
      CREATE TYPE color AS ENUM ('red', 'green');
      CREATE DOMAIN pos AS integer CHECK (VALUE > 0);
      CREATE TYPE pair AS (a integer, b text);
      CREATE SEQUENCE s;
      CREATE TABLE t (id bigint PRIMARY KEY, a integer, b text, c color);
      CREATE INDEX t_a ON t (a);
      CREATE TABLE r (id bigint PRIMARY KEY, t_id bigint REFERENCES t);
      CREATE TABLE m (id bigint, at date) PARTITION BY RANGE (at);
      CREATE TABLE m_2025 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
      CREATE INDEX m_at ON m (at);
      CREATE INDEX m_id ON ONLY m (id);
      CREATE INDEX m_2025_id ON m_2025 (id);
      CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$;
      CREATE TRIGGER t_touch BEFORE UPDATE ON t FOR EACH ROW EXECUTE FUNCTION touch();
      CREATE POLICY t_own ON t USING (a > 0);
      CREATE VIEW v AS SELECT id, a FROM t;
      """;

  private static CatalogFingerprint expected;

  @BeforeAll
  static void head() throws SQLException {
    expected = fingerprint(null);
  }

  /** Makes {@link #SCHEMA} in a new schema, runs a change there, reads it and drops the schema. */
  private static CatalogFingerprint fingerprint(String change) throws SQLException {
    String schema = "ledger_diff_print_" + SCHEMAS.incrementAndGet() + "a";
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA " + schema);
      s.execute("SET search_path = " + schema);
      s.execute(SCHEMA);
      if (change != null) {
        s.execute(change.replace("SCHEMA_NAME", schema));
      }
      try {
        return CatalogFingerprint.read(c, schema, List.of());
      } finally {
        s.execute("RESET search_path");
        s.execute("DROP SCHEMA " + schema + " CASCADE");
      }
    }
  }

  @Test
  void two_schemas_built_alike_read_alike_and_name_objects_without_the_schema()
      throws SQLException {
    CatalogFingerprint again = fingerprint(null);
    assertThat(again.differencesFrom(expected)).isEmpty();
    assertThat(expected.size()).isGreaterThan(100);
    Map<String, String> parent = expected.rows("pg_index").get("m_at");
    assertThat(parent).containsEntry("indisvalid", "t").containsEntry("table", "m");
    assertThat(expected.rows("pg_index").get("m_id")).containsEntry("indisvalid", "f");
    assertThat(expected.rows("pg_inherits")).containsKey("m_2025_at_idx of m_at");
    assertThat(expected.rows("pg_enum").get("color green")).containsEntry("position", "2");
    assertThat(expected.rows("pg_depend"))
        .containsKey("sequence s -> schema ${flyway:defaultSchema} (n)");
    assertThat(expected.rows("pg_class").keySet()).noneMatch(k -> k.contains("ledger_diff"));
  }

  static Stream<Arguments> oneRowChanged() {
    return Stream.of(
        Arguments.of("ALTER TABLE t SET (fillfactor = 70)", "`pg_class` row `t`"),
        Arguments.of("ALTER TABLE t ENABLE ROW LEVEL SECURITY", "`pg_class` row `t`"),
        Arguments.of("GRANT SELECT ON t TO PUBLIC", "`pg_class` row `t`"),
        Arguments.of("ALTER TABLE t REPLICA IDENTITY FULL", "`pg_class` row `t`"),
        Arguments.of("ALTER VIEW v SET (security_barrier = true)", "`pg_class` row `v`"),
        Arguments.of("ALTER TABLE t ALTER COLUMN a SET STATISTICS 500", "`pg_attribute` row `t.a`"),
        Arguments.of(
            "ALTER TABLE t ALTER COLUMN b SET STORAGE EXTERNAL", "`pg_attribute` row `t.b`"),
        Arguments.of(
            "ALTER TABLE t ALTER COLUMN a SET (n_distinct = 10)", "`pg_attribute` row `t.a`"),
        Arguments.of("GRANT SELECT (a) ON t TO PUBLIC", "`pg_attribute` row `t.a`"),
        Arguments.of("ALTER TABLE t ALTER COLUMN a SET DEFAULT 1", "`pg_attrdef` row `t.a`"),
        Arguments.of(
            "ALTER TABLE t ADD CONSTRAINT a_pos CHECK (a > 0) NOT VALID",
            "`pg_constraint` row `t a_pos`"),
        Arguments.of(
            "ALTER DOMAIN pos ADD CONSTRAINT pos_small CHECK (VALUE < 100)",
            "`pg_constraint` row `pos pos_small`"),
        Arguments.of(
            "ALTER TABLE r DROP CONSTRAINT r_t_id_fkey,"
                + " ADD CONSTRAINT r_t_id_fkey FOREIGN KEY (t_id) REFERENCES t ON DELETE CASCADE",
            "`pg_constraint` row `r r_t_id_fkey`"),
        Arguments.of("ALTER TABLE t CLUSTER ON t_a", "`pg_index` row `t_a`"),
        Arguments.of("CREATE INDEX t_b ON t (b)", "`pg_index` row `t_b`"),
        Arguments.of(
            "ALTER INDEX m_id ATTACH PARTITION m_2025_id", "`pg_inherits` row `m_2025_id of m_id`"),
        Arguments.of("ALTER TABLE m DETACH PARTITION m_2025", "`pg_inherits` row `m_2025 of m`"),
        Arguments.of("ALTER TABLE t DISABLE TRIGGER t_touch", "`pg_trigger` row `t t_touch`"),
        Arguments.of("ALTER POLICY t_own ON t USING (a > 1)", "`pg_policy` row `t t_own`"),
        Arguments.of("ALTER FUNCTION touch() COST 5", "`pg_proc` row `touch()`"),
        Arguments.of(
            "ALTER FUNCTION touch() SET search_path = pg_catalog", "`pg_proc` row `touch()`"),
        Arguments.of("ALTER DOMAIN pos SET DEFAULT 1", "`pg_type` row `pos`"),
        Arguments.of("ALTER TYPE color ADD VALUE 'blue'", "`pg_enum` row `color blue`"),
        Arguments.of("ALTER SEQUENCE s INCREMENT BY 5", "`pg_sequence` row `s`"),
        Arguments.of("COMMENT ON TABLE t IS 'the t'", "`pg_description` row `table t`"),
        Arguments.of(
            "ALTER SEQUENCE s OWNED BY t.a",
            "`pg_depend` row `sequence s -> table column t.a (a)`"),
        Arguments.of(
            "CREATE RULE t_keep AS ON DELETE TO t DO INSTEAD NOTHING",
            "`pg_rewrite` row `t t_keep`"),
        Arguments.of("CREATE STATISTICS t_ab ON a, b FROM t", "`pg_statistic_ext` row `t_ab`"),
        Arguments.of(
            "GRANT USAGE ON SCHEMA SCHEMA_NAME TO PUBLIC",
            "`pg_namespace` row `${flyway:defaultSchema}`"),
        Arguments.of(
            "ALTER DEFAULT PRIVILEGES IN SCHEMA SCHEMA_NAME GRANT SELECT ON TABLES TO PUBLIC",
            "`pg_default_acl` row `"),
        Arguments.of("ALTER TYPE pair ADD ATTRIBUTE c integer", "`pg_attribute` row `pair.c`"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("oneRowChanged")
  void a_change_in_one_catalog_row_is_seen_and_named(String change, String named)
      throws SQLException {
    List<String> differences = fingerprint(change).differencesFrom(expected);
    assertThat(differences).as(change).anyMatch(d -> d.startsWith(named));
    assertThat(differences).noneMatch(d -> d.contains("ledger_diff_print"));
  }

  @Test
  void the_differences_are_counted_past_the_named_ones() throws SQLException {
    StringBuilder many = new StringBuilder();
    for (int i = 0; i < CatalogFingerprint.MAX_NAMED + 5; i++) {
      many.append("COMMENT ON COLUMN t.a IS 'x';\nCREATE TABLE extra_").append(i).append(" ();\n");
    }
    List<String> differences = fingerprint(many.toString()).differencesFrom(expected);
    assertThat(differences).hasSize(CatalogFingerprint.MAX_NAMED + 1);
    assertThat(differences.get(CatalogFingerprint.MAX_NAMED)).matches("\\d+ more catalog rows");
  }
}

package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.testing.PostgresExtension;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Partitioned tables' indexes and keys, checked by both halves of the verdict's check (the model
 * and the catalog rows): a new index on a partitioned parent is built on every partition and
 * attached, so the parent's index is valid; a partition's own index is attached rather than dropped
 * and built again; the partitions' {@code NOT NULL} goes with the parent's key.
 */
class PartitionedTablesTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @TempDir Path temp;

  private static final String M =
      "CREATE TABLE m (id bigint, at date, PRIMARY KEY (id, at)) PARTITION BY RANGE (at);\n"
          + "CREATE TABLE m_2025 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');\n"
          + "CREATE TABLE m_2026 PARTITION OF m FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');\n";

  private int runs;

  private DiffReport diff(String baseDdl, String headDdl, boolean online) {
    runs++;
    Path base = Diffs.migrations(temp.resolve("base" + runs), "V1__schema.sql", baseDdl);
    Path head = Diffs.migrations(temp.resolve("head" + runs), "V1__schema.sql", headDdl);
    DiffReport report =
        SchemaDiff.run(Diffs.request(base, head, PG.jdbcUrl(), FailOn.NEVER, online));
    assertThat(report.verification().status())
        .as(report.verification().sentence())
        .isEqualTo(Verification.Status.EXACT);
    return report;
  }

  @Test
  void an_index_on_a_partitioned_parent_is_built_on_every_partition_and_attached() {
    DiffReport plain = diff(M, M + "CREATE INDEX m_at ON m (at);", false);
    assertThat(Diffs.changeLines(plain)).containsExactly("m index m_at added locking");
    assertThat(plain.diff().script())
        .containsExactly(
            "CREATE INDEX m_at ON ONLY m USING btree (at);",
            "CREATE INDEX m_2025_at_idx ON m_2025 USING btree (at);",
            "ALTER INDEX m_at ATTACH PARTITION m_2025_at_idx;",
            "CREATE INDEX m_2026_at_idx ON m_2026 USING btree (at);",
            "ALTER INDEX m_at ATTACH PARTITION m_2026_at_idx;");
    DiffReport online = diff(M, M + "CREATE INDEX m_at ON m (at);", true);
    assertThat(Diffs.changeLines(online)).containsExactly("m index m_at added safe");
    assertThat(online.diff().script())
        .containsExactly(
            "CREATE INDEX m_at ON ONLY m USING btree (at);",
            "CREATE INDEX CONCURRENTLY m_2025_at_idx ON m_2025 USING btree (at);",
            "ALTER INDEX m_at ATTACH PARTITION m_2025_at_idx;",
            "CREATE INDEX CONCURRENTLY m_2026_at_idx ON m_2026 USING btree (at);",
            "ALTER INDEX m_at ATTACH PARTITION m_2026_at_idx;");
  }

  @Test
  void a_partitions_own_index_is_attached_not_dropped() {
    String own = M + "CREATE INDEX m_2025_at ON m_2025 (at);\n";
    DiffReport report = diff(own, own + "CREATE INDEX m_at ON m (at);", false);
    assertThat(Diffs.changeLines(report)).containsExactly("m index m_at added locking");
    assertThat(report.diff().script())
        .containsExactly(
            "CREATE INDEX m_at ON ONLY m USING btree (at);",
            "ALTER INDEX m_at ATTACH PARTITION m_2025_at;",
            "CREATE INDEX m_2026_at_idx ON m_2026 USING btree (at);",
            "ALTER INDEX m_at ATTACH PARTITION m_2026_at_idx;");
  }

  @Test
  void a_changed_parent_index_is_made_again_on_every_partition() {
    DiffReport report =
        diff(M + "CREATE INDEX m_at ON m (at);", M + "CREATE INDEX m_at ON m (at DESC);", false);
    assertThat(report.diff().script())
        .containsExactly(
            "DROP INDEX m_at;",
            "CREATE INDEX m_at ON ONLY m USING btree (at DESC);",
            "CREATE INDEX m_2025_at_idx ON m_2025 USING btree (at DESC);",
            "ALTER INDEX m_at ATTACH PARTITION m_2025_at_idx;",
            "CREATE INDEX m_2026_at_idx ON m_2026 USING btree (at DESC);",
            "ALTER INDEX m_at ATTACH PARTITION m_2026_at_idx;");
  }

  @Test
  void sub_partitions_and_new_partitioned_tables_get_their_indexes() {
    String sub =
        "CREATE TABLE m (id bigint, at date) PARTITION BY RANGE (at);\n"
            + "CREATE TABLE m_2025 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')"
            + " PARTITION BY RANGE (id);\n"
            + "CREATE TABLE m_2025_a PARTITION OF m_2025 FOR VALUES FROM (0) TO (1000);\n";
    DiffReport added = diff(sub, sub + "CREATE UNIQUE INDEX m_key ON m (at, id);", true);
    assertThat(added.diff().script())
        .containsExactly(
            "CREATE UNIQUE INDEX m_key ON ONLY m USING btree (at, id);",
            "CREATE UNIQUE INDEX m_2025_at_id_idx ON ONLY m_2025 USING btree (at, id);",
            "CREATE UNIQUE INDEX CONCURRENTLY m_2025_a_at_id_idx ON m_2025_a USING btree (at, id);",
            "ALTER INDEX m_2025_at_id_idx ATTACH PARTITION m_2025_a_at_id_idx;",
            "ALTER INDEX m_key ATTACH PARTITION m_2025_at_id_idx;");
    DiffReport created = diff("", sub + "CREATE INDEX m_id ON m (id);", false);
    assertThat(created.diff().script())
        .contains(
            "CREATE INDEX m_id ON ONLY m USING btree (id);",
            "ALTER INDEX m_2025_id_idx ATTACH PARTITION m_2025_a_id_idx;",
            "ALTER INDEX m_id ATTACH PARTITION m_2025_id_idx;");
  }

  @Test
  void the_partitions_not_null_goes_with_the_parents_key() {
    DiffReport report = diff(M, M.replace(", PRIMARY KEY (id, at)", ""), false);
    assertThat(Diffs.changeLines(report))
        .containsExactly(
            "m column id changed safe",
            "m column at changed safe",
            "m constraint m_pkey dropped safe");
    assertThat(report.diff().script())
        .containsExactly(
            "ALTER TABLE m DROP CONSTRAINT m_pkey;",
            "ALTER TABLE m ALTER COLUMN id DROP NOT NULL;",
            "ALTER TABLE m ALTER COLUMN at DROP NOT NULL;");
  }

  @Test
  void a_detached_partition_reads_as_a_table_of_its_own() {
    String m =
        "CREATE TABLE m (id bigint, at date, PRIMARY KEY (id, at)) PARTITION BY RANGE (at);\n";
    DiffReport report =
        diff(
            m
                + "CREATE TABLE m_2025 PARTITION OF m"
                + " FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');",
            m
                + "CREATE TABLE m_2025 (id bigint NOT NULL, at date NOT NULL,"
                + " CONSTRAINT m_2025_pkey PRIMARY KEY (id, at));",
            false);
    assertThat(report.diff().script()).containsExactly("ALTER TABLE m DETACH PARTITION m_2025;");
  }
}

package dev.ledger.diff.against;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.diff.FailOn;
import dev.ledger.diff.SchemaDiff;
import dev.ledger.testing.PostgresExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --against} on a table made again because its partitioning changes: its size is read as a
 * rewrite under ACCESS EXCLUSIVE, and the base's partitions that the head drops count no lost rows
 * (their rows are copied into the new table).
 */
class RebuildCheckPlanTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @TempDir Path temp;

  @Test
  void a_rebuilt_table_is_sized_as_a_rewrite_and_its_dropped_partitions_lose_no_rows()
      throws IOException {
    Path base = Files.createDirectories(temp.resolve("base"));
    Path head = Files.createDirectories(temp.resolve("head"));
    Files.writeString(
        base.resolve("V1__schema.sql"),
        "CREATE TABLE m (id bigint NOT NULL, at date NOT NULL) PARTITION BY RANGE (at);\n"
            + "CREATE TABLE m_2025 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO"
            + " ('2026-01-01');\n");
    Files.writeString(
        head.resolve("V1__schema.sql"), "CREATE TABLE m (id bigint NOT NULL, at date NOT NULL);\n");
    SchemaDiff.Compared compared =
        SchemaDiff.compare(
            new SchemaDiff.Request(
                base.toString(),
                head.toString(),
                Map.of(),
                Map.of(),
                Map.of(),
                PG.jdbcUrl(),
                FailOn.NEVER,
                false));
    CheckPlan plan = CheckPlan.of(compared, 1000);
    assertThat(plan.counts()).isEmpty();
    assertThat(plan.sizes())
        .containsExactly(
            new TableSize(
                "m", "rewrites", "ACCESS EXCLUSIVE", "table `m` changed", null, null, null));
  }
}

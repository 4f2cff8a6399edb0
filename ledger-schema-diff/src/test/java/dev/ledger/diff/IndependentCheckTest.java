package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledger.testing.PostgresExtension;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The verdict's second check, through catalog rows rather than the differ's model: a difference the
 * differ does not model leaves the report unverified ({@code ledger-app schema-diff} exits with 3),
 * refused by the catalog row's name, never "checked".
 */
class IndependentCheckTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @TempDir Path temp;

  private DiffReport diff(String baseDdl, String headDdl) {
    Path base = Diffs.migrations(temp.resolve("base"), "V1__schema.sql", baseDdl);
    Path head = Diffs.migrations(temp.resolve("head"), "V1__schema.sql", headDdl);
    return SchemaDiff.run(Diffs.request(base, head, PG.jdbcUrl()));
  }

  @Test
  void a_difference_the_model_does_not_hold_is_refused_by_its_catalog_row() {
    String t = "CREATE TABLE t (id bigint PRIMARY KEY, a integer);\n";
    DiffReport result = diff(t, t + "ALTER TABLE t ALTER COLUMN a SET STATISTICS 500;");
    assertThat(result.diff().changes()).isEmpty();
    assertThat(result.verified()).isFalse();
    JsonNode check = Diffs.json(result).get("verification");
    assertThat(check.get("status").asText()).isEqualTo("refused");
    assertThat(check.get("refused").get(0).asText())
        // the default reads -1 on PostgreSQL 15 and null on 17
        .startsWith("`pg_attribute` row `t.a` (statistics: ")
        .endsWith(
            " after this SQL, `500` in the head), which the diff does not model"
                + " (independent catalog check)");
  }

  @Test
  void a_clustered_index_is_refused_while_the_rest_of_the_diff_is_migrated() {
    String t = "CREATE TABLE t (id bigint PRIMARY KEY, a integer);\nCREATE INDEX t_a ON t (a);\n";
    DiffReport result =
        diff(t, t + "ALTER TABLE t ADD COLUMN b text;\nALTER TABLE t CLUSTER ON t_a;");
    assertThat(Diffs.changeLines(result)).containsExactly("t column b added safe");
    assertThat(result.verified()).isFalse();
    assertThat(result.verification().refused())
        .containsExactly(
            "`pg_index` row `t_a` (indisclustered: `f` after this SQL, `t` in the head), which"
                + " the diff does not model (independent catalog check)");
  }

  @Test
  void equal_sets_stay_checked() {
    String t =
        "CREATE TABLE t (id bigint PRIMARY KEY, a integer REFERENCES t);\n"
            + "CREATE TABLE m (id bigint, at date) PARTITION BY RANGE (at);\n"
            + "CREATE TABLE m_1 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');\n";
    DiffReport result = diff(t, t);
    assertThat(result.verified()).isTrue();
    assertThat(result.verification().status()).isEqualTo(Verification.Status.EXACT);
  }
}

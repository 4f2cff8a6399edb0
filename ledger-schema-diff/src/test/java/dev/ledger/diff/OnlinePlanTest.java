package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledger.testing.PostgresExtension;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The online plan ({@code --online}): the plan printed is the online one, each change classified by
 * it, every statement's lock named, and the script still checked on a scratch schema (CONCURRENTLY
 * builds run outside a transaction block there).
 */
class OnlinePlanTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final String BASE =
      """
      CREATE TABLE parent (id bigint PRIMARY KEY);
      CREATE TABLE child (id bigint PRIMARY KEY, parent_id bigint, v int, w int DEFAULT 0);
      """;

  @TempDir Path temp;

  private DiffReport diff(String change, boolean online) {
    Path base = Diffs.migrations(temp.resolve("base"), "V1__schema.sql", BASE);
    Path head = Diffs.migrations(temp.resolve("head"), "V1__schema.sql", BASE + change);
    return SchemaDiff.run(Diffs.request(base, head, PG.jdbcUrl(), FailOn.NEVER, online));
  }

  private static List<String> sql(JsonNode change) {
    List<String> sql = new ArrayList<>();
    change.get("sql").forEach(s -> sql.add(s.asText()));
    return sql;
  }

  @Test
  void an_index_is_built_concurrently_and_is_safe() {
    DiffReport plain = diff("CREATE INDEX child_v ON child (v);", false);
    assertThat(Diffs.onlyChange(plain).get("class").asText()).isEqualTo("locking");
    assertThat(Diffs.onlyChange(plain).get("lock").asText()).isEqualTo("SHARE");
    assertThat(Diffs.onlyChange(plain).get("online").asText())
        .isEqualTo("CREATE INDEX CONCURRENTLY, outside a transaction (SHARE UPDATE EXCLUSIVE)");

    DiffReport online = diff("CREATE INDEX child_v ON child (v);", true);
    assertThat(online.verified()).isTrue();
    JsonNode change = Diffs.onlyChange(online);
    assertThat(change.get("class").asText()).isEqualTo("safe");
    assertThat(change.get("lock").asText()).isEqualTo("SHARE UPDATE EXCLUSIVE");
    assertThat(sql(change))
        .containsExactly("CREATE INDEX CONCURRENTLY child_v ON child USING btree (v);");
    assertThat(Diffs.json(online).get("verification").get("status").asText()).isEqualTo("exact");
  }

  @Test
  void a_foreign_key_is_added_not_valid_then_validated() {
    DiffReport online =
        diff(
            "ALTER TABLE child ADD CONSTRAINT child_parent FOREIGN KEY (parent_id)"
                + " REFERENCES parent;",
            true);
    assertThat(online.verified()).isTrue();
    JsonNode change = Diffs.onlyChange(online);
    assertThat(sql(change))
        .containsExactly(
            "ALTER TABLE child ADD CONSTRAINT child_parent FOREIGN KEY (parent_id) REFERENCES"
                + " parent(id) NOT VALID;",
            "ALTER TABLE child VALIDATE CONSTRAINT child_parent;");
    assertThat(change.get("class").asText()).isEqualTo("destructive");
    assertThat(change.get("reason").asText())
        .isEqualTo(
            "foreign key added to an existing table: fails when a row has no match; added NOT"
                + " VALID, then validated under SHARE UPDATE EXCLUSIVE, so reads and writes go on"
                + " while it checks");
    assertThat(change.get("lock").asText()).isEqualTo("SHARE ROW EXCLUSIVE");
    assertThat(Diffs.json(online).get("verification").get("status").asText()).isEqualTo("exact");
  }

  @Test
  void set_not_null_goes_through_a_validated_check() {
    DiffReport online = diff("ALTER TABLE child ALTER COLUMN w SET NOT NULL;", true);
    assertThat(online.verified()).isTrue();
    JsonNode change = Diffs.onlyChange(online);
    assertThat(sql(change))
        .containsExactly(
            "ALTER TABLE child ADD CONSTRAINT \"w_not_null\" CHECK (w IS NOT NULL) NOT VALID;",
            "ALTER TABLE child VALIDATE CONSTRAINT \"w_not_null\";",
            "ALTER TABLE child ALTER COLUMN w SET NOT NULL;",
            "ALTER TABLE child DROP CONSTRAINT \"w_not_null\";");
    assertThat(change.get("class").asText()).isEqualTo("safe");
    assertThat(change.get("lock").asText()).isEqualTo("ACCESS EXCLUSIVE");
    assertThat(Diffs.json(online).get("verification").get("status").asText()).isEqualTo("exact");
  }

  @Test
  void a_unique_key_is_added_using_a_concurrently_built_index() {
    DiffReport online = diff("ALTER TABLE child ADD CONSTRAINT child_v_key UNIQUE (v);", true);
    assertThat(online.verified()).isTrue();
    JsonNode change = Diffs.onlyChange(online);
    assertThat(sql(change))
        .containsExactly(
            "CREATE UNIQUE INDEX CONCURRENTLY child_v_key ON child USING btree (v);",
            "ALTER TABLE child ADD CONSTRAINT child_v_key UNIQUE USING INDEX child_v_key;");
    assertThat(change.get("class").asText()).isEqualTo("destructive");
    assertThat(Diffs.json(online).get("verification").get("status").asText()).isEqualTo("exact");
  }

  @Test
  void the_online_script_has_a_lock_timeout_header_and_names_each_lock() {
    DiffReport online =
        diff(
            "CREATE INDEX child_v ON child (v);\nALTER TABLE child ADD CONSTRAINT v_pos CHECK (v > 0);",
            true);
    assertThat(online.verified()).isTrue();
    assertThat(online.sql())
        .contains(
            """
            SET lock_timeout = '5s';
            SET statement_timeout = '0';
            """)
        .contains(
            """
            -- runs outside a transaction block
            -- lock: SHARE UPDATE EXCLUSIVE
            CREATE INDEX CONCURRENTLY child_v ON child USING btree (v);
            """)
        .contains(
            """
            -- lock: ACCESS EXCLUSIVE
            ALTER TABLE child ADD CONSTRAINT v_pos CHECK (v > 0) NOT VALID;
            -- lock: SHARE UPDATE EXCLUSIVE
            ALTER TABLE child VALIDATE CONSTRAINT v_pos;
            """);
  }

  @Test
  void the_markdown_shows_the_lock_and_the_online_alternative_of_every_locking_change() {
    DiffReport plain = diff("CREATE INDEX child_v ON child (v);", false);
    assertThat(plain.markdown())
        .contains(
            "| added | index `child_v` | `btree (v)` | **locking** | CREATE INDEX without"
                + " CONCURRENTLY on an existing table: blocks writes to `child` while it builds; use"
                + " CREATE INDEX CONCURRENTLY | SHARE | CREATE INDEX CONCURRENTLY, outside a"
                + " transaction (SHARE UPDATE EXCLUSIVE) (`--online`) |");
  }
}

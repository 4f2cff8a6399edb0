package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledger.testing.PostgresExtension;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a migration linter flags and a diff can produce, classed by the lock it takes, against a
 * real PostgreSQL: volatile defaults (decided by {@code pg_proc.provolatile} on the scratch
 * server), {@code DROP INDEX}, {@code DETACH PARTITION}, and the lock timeout of every script.
 */
class LinterParityTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final String ACCOUNTS =
      """
      CREATE TABLE accounts (id bigint PRIMARY KEY, email text NOT NULL);
      CREATE INDEX accounts_email ON accounts (email);
      CREATE FUNCTION pick() RETURNS integer LANGUAGE sql VOLATILE AS 'SELECT 7';
      CREATE FUNCTION fixed() RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT 7';
      CREATE TABLE m (id bigint, at date) PARTITION BY RANGE (at);
      CREATE TABLE m_2025 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
      """;

  @TempDir Path temp;

  private DiffReport diff(String headMigration, boolean online) {
    Path base = Diffs.migrations(temp.resolve("base"), "V1__accounts.sql", ACCOUNTS);
    Path head =
        Diffs.migrations(
            temp.resolve("head"), "V1__accounts.sql", ACCOUNTS, "V2__change.sql", headMigration);
    DiffReport report =
        SchemaDiff.run(Diffs.request(base, head, PG.jdbcUrl(), FailOn.NEVER, online));
    assertThat(report.verified()).as(report.verdict()).isTrue();
    return report;
  }

  @Test
  void a_volatile_builtin_default_is_a_rewrite_under_access_exclusive() {
    JsonNode change =
        Diffs.onlyChange(
            diff("ALTER TABLE accounts ADD COLUMN token uuid DEFAULT gen_random_uuid();", false));
    assertThat(change.get("class").asText()).isEqualTo("locking");
    assertThat(change.get("lock").asText()).isEqualTo("ACCESS EXCLUSIVE");
    assertThat(change.get("reason").asText())
        .isEqualTo(
            "column with a volatile default added (gen_random_uuid()): every row is filled,"
                + " rewriting the table under an ACCESS EXCLUSIVE lock; use --online");
    assertThat(change.get("online").asText())
        .isEqualTo(
            "ADD COLUMN without a default and SET DEFAULT (catalog only, new rows get it), then"
                + " backfill existing rows in batches");
    assertThat(change.get("sql").get(0).asText())
        .isEqualTo("ALTER TABLE accounts ADD COLUMN token uuid DEFAULT gen_random_uuid();");
  }

  @Test
  void volatility_comes_from_pg_proc_not_from_the_name() {
    assertThat(
            Diffs.onlyChange(
                    diff(
                        "ALTER TABLE accounts ADD COLUMN at timestamptz DEFAULT"
                            + " clock_timestamp();",
                        false))
                .get("class")
                .asText())
        .isEqualTo("locking");
    assertThat(
            Diffs.onlyChange(
                    diff("ALTER TABLE accounts ADD COLUMN n integer DEFAULT pick() + 1;", false))
                .get("class")
                .asText())
        .isEqualTo("locking");
    // now() is stable and fixed() immutable: catalog only.
    assertThat(
            Diffs.onlyChange(
                    diff("ALTER TABLE accounts ADD COLUMN f integer DEFAULT fixed();", false))
                .get("class")
                .asText())
        .isEqualTo("safe");
    assertThat(
            Diffs.onlyChange(
                    diff("ALTER TABLE accounts ADD COLUMN at timestamptz DEFAULT now();", false))
                .get("class")
                .asText())
        .isEqualTo("safe");
  }

  @Test
  void online_adds_a_volatile_default_after_the_column_and_leaves_a_backfill() {
    DiffReport online =
        diff("ALTER TABLE accounts ADD COLUMN token uuid DEFAULT gen_random_uuid();", true);
    JsonNode change = Diffs.onlyChange(online);
    assertThat(change.get("class").asText()).isEqualTo("safe");
    assertThat(online.diff().script())
        .containsExactly(
            "ALTER TABLE accounts ADD COLUMN token uuid;",
            "ALTER TABLE accounts ALTER COLUMN token SET DEFAULT gen_random_uuid();");
    assertThat(change.get("reason").asText())
        .isEqualTo(
            "column with a volatile default (gen_random_uuid()) added without it, then SET"
                + " DEFAULT: catalog only, no rewrite; existing rows hold NULL until backfilled in"
                + " batches");
  }

  @Test
  void a_volatile_default_on_a_not_null_column_names_the_alternative() {
    JsonNode change =
        Diffs.onlyChange(
            diff(
                "ALTER TABLE accounts ADD COLUMN token uuid NOT NULL DEFAULT gen_random_uuid();",
                true));
    assertThat(change.get("class").asText()).isEqualTo("locking");
    assertThat(change.get("reason").asText())
        .endsWith(
            "; instead: add it nullable without a default, SET DEFAULT, backfill in batches, then"
                + " SET NOT NULL");
  }

  @Test
  void drop_index_takes_access_exclusive_and_online_drops_it_concurrently() {
    DiffReport plain = diff("DROP INDEX accounts_email;", false);
    JsonNode change = Diffs.onlyChange(plain);
    assertThat(change.get("class").asText()).isEqualTo("locking");
    assertThat(change.get("lock").asText()).isEqualTo("ACCESS EXCLUSIVE");
    assertThat(change.get("online").asText())
        .isEqualTo("DROP INDEX CONCURRENTLY, outside a transaction (SHARE UPDATE EXCLUSIVE)");
    assertThat(plain.sql())
        .contains(
            """
            -- lock: ACCESS EXCLUSIVE
            DROP INDEX accounts_email;
            """);
    DiffReport online = diff("DROP INDEX accounts_email;", true);
    assertThat(Diffs.onlyChange(online).get("class").asText()).isEqualTo("safe");
    assertThat(Diffs.onlyChange(online).get("lock").asText()).isEqualTo("SHARE UPDATE EXCLUSIVE");
    assertThat(online.diff().script()).containsExactly("DROP INDEX CONCURRENTLY accounts_email;");
  }

  @Test
  void detach_partition_takes_access_exclusive_with_concurrently_as_the_alternative() {
    JsonNode change = Diffs.onlyChange(diff("ALTER TABLE m DETACH PARTITION m_2025;", false));
    assertThat(change.get("kind").asText()).isEqualTo("table");
    assertThat(change.get("class").asText()).isEqualTo("locking");
    assertThat(change.get("lock").asText()).isEqualTo("ACCESS EXCLUSIVE");
    assertThat(change.get("sql").get(0).asText())
        .isEqualTo("ALTER TABLE m DETACH PARTITION m_2025;");
    assertThat(change.get("reason").asText())
        .contains(
            "DETACH PARTITION takes an ACCESS EXCLUSIVE lock on the parent and the partition;"
                + " instead: DETACH PARTITION ... CONCURRENTLY");
  }

  @Test
  void every_printed_script_sets_a_lock_timeout() {
    String plain = diff("ALTER TABLE accounts ADD COLUMN note text;", false).sql();
    assertThat(plain)
        .contains(
            """
            -- a statement that cannot get its lock within 5 s fails instead of queueing every\
             query on its table behind it; run again
            SET lock_timeout = '5s';
            -- lock: ACCESS EXCLUSIVE
            ALTER TABLE accounts ADD COLUMN note text;
            """);
    assertThat(diff("ALTER TABLE accounts ADD COLUMN note text;", false).markdown())
        .contains("```sql\n-- a statement that cannot get its lock")
        .contains("SET lock_timeout = '5s';\n");
    assertThat(diff("ALTER TABLE accounts ADD COLUMN note text;", true).sql())
        .contains("SET lock_timeout = '5s';\nSET statement_timeout = '0';\n");
  }
}

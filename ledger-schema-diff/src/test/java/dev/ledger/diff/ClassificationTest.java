package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledger.testing.PostgresExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each kind of change a migration can make, classified as the issue asks, against a real
 * PostgreSQL. Every diff is also checked the other way round: the SQL it prints, run after the
 * base's migrations, makes exactly the head's catalog.
 */
class ClassificationTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final String ACCOUNTS =
      """
      CREATE TABLE accounts (
          id       bigint PRIMARY KEY,
          email    varchar(100) NOT NULL,
          nickname text,
          balance  integer NOT NULL DEFAULT 0
      );
      """;

  @TempDir Path temp;

  /**
   * The base: one table. The head: the base plus one migration. The diff never fails, and its SQL
   * is checked the other way round too ({@link #assertScriptMakesHead}).
   */
  private DiffReport diff(String headMigration) throws IOException {
    DiffReport report = diff(headMigration, FailOn.NEVER);
    assertScriptMakesHead(temp.resolve("base"), temp.resolve("head"), report);
    return report;
  }

  /** The base: one table. The head: the base plus one migration. */
  private DiffReport diff(String headMigration, FailOn failOn) {
    Path base = Diffs.migrations(temp.resolve("base"), "V1__accounts.sql", ACCOUNTS);
    Path head =
        Diffs.migrations(
            temp.resolve("head"), "V1__accounts.sql", ACCOUNTS, "V2__change.sql", headMigration);
    return SchemaDiff.run(Diffs.request(base, head, PG.jdbcUrl(), failOn, false));
  }

  /** Runs the diff's SQL as one more migration after the base's; the result must be the head. */
  private void assertScriptMakesHead(Path base, Path head, DiffReport report) throws IOException {
    Path replay = Files.createDirectories(temp.resolve("replay"));
    try (Stream<Path> files = Files.list(base)) {
      for (Path f : files.toList()) {
        Files.copy(f, replay.resolve(f.getFileName()));
      }
    }
    StringBuilder script = new StringBuilder();
    Diffs.json(report).get("sql").forEach(s -> script.append(s.asText()).append('\n'));
    Files.writeString(replay.resolve("V999999__schema_diff.sql"), script.toString());
    DiffReport check = SchemaDiff.run(Diffs.request(replay, head, PG.jdbcUrl()));
    assertThat(Diffs.json(check).get("changes")).as("base + printed SQL vs head").isEmpty();
  }

  @Test
  void identical_sets_give_an_empty_diff_that_passes() {
    Path base = Diffs.migrations(temp.resolve("base"), "V1__accounts.sql", ACCOUNTS);
    Path head = Diffs.migrations(temp.resolve("head"), "V1__accounts.sql", ACCOUNTS);
    DiffReport report = SchemaDiff.run(Diffs.request(base, head, PG.jdbcUrl(), FailOn.ANY, false));
    assertThat(report.failed()).isFalse();
    assertThat(report.verified()).isTrue();
    assertThat(report.markdown())
        .isEqualTo(
            "**Schema diff: no changes.**\n\nBase `"
                + base
                + "` → head `"
                + head
                + "`.\n\n"
                + DiffReport.MARKER
                + "\n");
  }

  @Test
  void nullable_column_is_safe_and_renders_as_markdown() throws IOException {
    DiffReport result = diff("ALTER TABLE accounts ADD COLUMN note text;", FailOn.DESTRUCTIVE);
    assertThat(result.failed()).isFalse();
    Path base = temp.resolve("base");
    Path head = temp.resolve("head");
    assertThat(result.markdown())
        .isEqualTo(
            """
            **Schema diff: 1 change (1 safe); checked: the base plus this SQL gives exactly the\
             head.**

            Base `%s` → head `%s`.
            `safe`: catalog only, or on a new object; `locking`: blocks reads or writes while it\
             runs; `destructive`: loses data, or fails on data that may be there.

            ### Table `accounts`

            | change | object | definition | class | reason | lock | online alternative |
            | --- | --- | --- | --- | --- | --- | --- |
            | added | column `note` | `text` | safe | nullable column without a default: catalog\
             only | ACCESS EXCLUSIVE |  |

            ### SQL from base to head

            ```sql
            -- a statement that cannot get its lock within 5 s fails instead of queueing every\
             query on its table behind it; run again
            SET lock_timeout = '5s';
            -- lock: ACCESS EXCLUSIVE
            ALTER TABLE accounts ADD COLUMN note text;
            ```

            %s
            """
                .formatted(base, head, DiffReport.MARKER)
                .replace(
                    "\n### SQL from base to head",
                    """

                    ### The pull request's statements, measured

                    The head appends 1 migration to the base's; its statement was run one at a\
                     time on top of the base and measured. Each ran in a transaction of its own;\
                     locks as `pg_locks` names them, on relations that existed before it.

                    | statement | locks | rewrites | scans | renames | findings |
                    | --- | --- | --- | --- | --- | --- |
                    | `V2__change.sql` line 1: `ALTER TABLE accounts ADD COLUMN note text` |\
                     `accounts` AccessExclusiveLock |  |  |  |  |

                    ### SQL from base to head"""));
  }

  @Test
  void column_with_a_default_is_safe() throws IOException {
    JsonNode change =
        Diffs.onlyChange(
            diff("ALTER TABLE accounts ADD COLUMN status text NOT NULL DEFAULT 'open';"));
    assertThat(change.get("kind").asText()).isEqualTo("column");
    assertThat(change.get("name").asText()).isEqualTo("status");
    assertThat(change.get("action").asText()).isEqualTo("added");
    assertThat(change.get("after").asText()).isEqualTo("text DEFAULT 'open'::text NOT NULL");
    assertThat(change.get("class").asText()).isEqualTo("safe");
    assertThat(change.get("reason").asText())
        .isEqualTo(
            "column with a non-volatile default: catalog only since PostgreSQL 11, no rewrite");
  }

  @Test
  void dropped_table_is_destructive() throws IOException {
    DiffReport result = diff("DROP TABLE accounts;");
    JsonNode change = Diffs.onlyChange(result);
    assertThat(change.get("kind").asText()).isEqualTo("table");
    assertThat(change.get("action").asText()).isEqualTo("dropped");
    assertThat(change.get("class").asText()).isEqualTo("destructive");
    assertThat(change.get("reason").asText()).isEqualTo("dropped table: its rows are lost");
    assertThat(Diffs.json(result).get("sql").get(0).asText()).isEqualTo("DROP TABLE accounts;");
  }

  @Test
  void dropped_column_is_destructive() throws IOException {
    JsonNode change = Diffs.onlyChange(diff("ALTER TABLE accounts DROP COLUMN nickname;"));
    assertThat(change.get("name").asText()).isEqualTo("nickname");
    assertThat(change.get("action").asText()).isEqualTo("dropped");
    assertThat(change.get("class").asText()).isEqualTo("destructive");
    assertThat(change.get("reason").asText()).isEqualTo("dropped column: its data is lost");
    assertThat(change.get("hint").isNull()).isTrue();
  }

  @Test
  void narrowed_type_is_destructive() throws IOException {
    JsonNode change =
        Diffs.onlyChange(diff("ALTER TABLE accounts ALTER COLUMN email TYPE varchar(20);"));
    assertThat(change.get("action").asText()).isEqualTo("changed");
    assertThat(change.get("before").asText()).isEqualTo("character varying(100) NOT NULL");
    assertThat(change.get("after").asText()).isEqualTo("character varying(20) NOT NULL");
    assertThat(change.get("class").asText()).isEqualTo("destructive");
    assertThat(change.get("reason").asText())
        .isEqualTo(
            "type narrowed from character varying(100) to character varying(20): longer values"
                + " fail the change");
  }

  @Test
  void widened_type_is_safe_or_locking_by_whether_it_rewrites() throws IOException {
    DiffReport result =
        diff(
            "ALTER TABLE accounts ALTER COLUMN email TYPE varchar(200);"
                + " ALTER TABLE accounts ALTER COLUMN balance TYPE bigint;");
    assertThat(Diffs.changeLines(result))
        .containsExactly(
            "accounts column email changed safe", "accounts column balance changed locking");
  }

  @Test
  void not_null_column_without_a_default_is_destructive() throws IOException {
    JsonNode change =
        Diffs.onlyChange(diff("ALTER TABLE accounts ADD COLUMN owner text NOT NULL;"));
    assertThat(change.get("class").asText()).isEqualTo("destructive");
    assertThat(change.get("reason").asText())
        .isEqualTo("NOT NULL added with no default: the change fails on a table that has rows");
  }

  @Test
  void not_null_set_on_a_column_without_a_default_is_destructive() throws IOException {
    JsonNode change =
        Diffs.onlyChange(diff("ALTER TABLE accounts ALTER COLUMN nickname SET NOT NULL;"));
    assertThat(change.get("before").asText()).isEqualTo("text");
    assertThat(change.get("after").asText()).isEqualTo("text NOT NULL");
    assertThat(change.get("class").asText()).isEqualTo("destructive");
    assertThat(change.get("reason").asText())
        .isEqualTo(
            "NOT NULL added with no default: fails when a row holds NULL, after scanning the table"
                + " under an ACCESS EXCLUSIVE lock");
  }

  @Test
  void unique_constraint_on_an_existing_table_is_destructive() throws IOException {
    JsonNode change =
        Diffs.onlyChange(
            diff("ALTER TABLE accounts ADD CONSTRAINT accounts_email_key UNIQUE (email);"));
    assertThat(change.get("kind").asText()).isEqualTo("constraint");
    assertThat(change.get("after").asText()).isEqualTo("UNIQUE (email)");
    assertThat(change.get("class").asText()).isEqualTo("destructive");
    assertThat(change.get("reason").asText())
        .isEqualTo(
            "unique key added on existing data: fails when rows hold duplicates, and builds its"
                + " index under a lock that blocks writes");
  }

  @Test
  void unique_index_on_an_existing_table_is_destructive() throws IOException {
    JsonNode change =
        Diffs.onlyChange(diff("CREATE UNIQUE INDEX accounts_nickname ON accounts (nickname);"));
    assertThat(change.get("kind").asText()).isEqualTo("index");
    assertThat(change.get("after").asText()).isEqualTo("UNIQUE btree (nickname)");
    assertThat(change.get("class").asText()).isEqualTo("destructive");
    assertThat(change.get("reason").asText())
        .isEqualTo(
            "unique key added on existing data: fails when rows hold duplicates, and blocks writes"
                + " to `accounts` while it builds");
  }

  @Test
  void unique_index_on_more_columns_than_an_existing_key_cannot_fail_and_is_locking()
      throws IOException {
    JsonNode change =
        Diffs.onlyChange(diff("CREATE UNIQUE INDEX accounts_id_email ON accounts (id, email);"));
    assertThat(change.get("class").asText()).isEqualTo("locking");
    assertThat(change.get("reason").asText())
        .isEqualTo(
            "unique key added on existing data, but the base's primary key `accounts_pkey` (id)"
                + " already keeps those rows unique, so it cannot fail; blocks writes to"
                + " `accounts` while it builds");
  }

  @Test
  void index_without_concurrently_on_an_existing_table_is_locking() throws IOException {
    JsonNode change = Diffs.onlyChange(diff("CREATE INDEX accounts_by_email ON accounts (email);"));
    assertThat(change.get("after").asText()).isEqualTo("btree (email)");
    assertThat(change.get("class").asText()).isEqualTo("locking");
    assertThat(change.get("reason").asText())
        .isEqualTo(
            "CREATE INDEX without CONCURRENTLY on an existing table: blocks writes to `accounts`"
                + " while it builds; use CREATE INDEX CONCURRENTLY");
    assertThat(change.get("sql").get(0).asText())
        .isEqualTo("CREATE INDEX accounts_by_email ON accounts USING btree (email);");
  }

  @Test
  void index_built_concurrently_is_safe() throws IOException {
    JsonNode change =
        Diffs.onlyChange(diff("CREATE INDEX CONCURRENTLY accounts_by_email ON accounts (email);"));
    assertThat(change.get("class").asText()).isEqualTo("safe");
    assertThat(change.get("reason").asText())
        .isEqualTo("built CONCURRENTLY: reads and writes go on while it builds");
    assertThat(change.get("sql").get(0).asText())
        .isEqualTo("CREATE INDEX CONCURRENTLY accounts_by_email ON accounts USING btree (email);");
  }

  @Test
  void renamed_column_is_a_rename_when_measured_and_a_drop_plus_add_with_a_hint_when_not()
      throws IOException {
    DiffReport measured = diff("ALTER TABLE accounts RENAME COLUMN nickname TO display_name;");
    assertThat(Diffs.changeLines(measured))
        .containsExactly("accounts column display_name renamed safe");
    // without the review of the migration's statements (or when the head rewrites the history)
    DiffReport result =
        SchemaDiff.run(
            Diffs.request(
                temp.resolve("base"), temp.resolve("head"), PG.jdbcUrl(), FailOn.NEVER, false),
            false);
    assertThat(Diffs.changeLines(result))
        .containsExactly(
            "accounts column display_name added safe",
            "accounts column nickname dropped destructive");
    JsonNode dropped = Diffs.json(result).get("changes").get(1);
    assertThat(dropped.get("reason").asText()).isEqualTo("dropped column: its data is lost");
    assertThat(dropped.get("hint").asText())
        .isEqualTo(
            "`display_name` was added with the same type: if this is a rename, `ALTER TABLE"
                + " accounts RENAME COLUMN nickname TO display_name` keeps the data (code that"
                + " reads `nickname` breaks either way)");
    assertThat(Diffs.json(result).get("changes").get(0).get("hint").asText())
        .isEqualTo("looks like `nickname` renamed: see its drop");
  }

  @Test
  void fail_on_destructive_fails_on_a_destructive_change_and_says_so() {
    DiffReport result = diff("DROP TABLE accounts;", FailOn.DESTRUCTIVE);
    assertThat(result.failed()).isTrue();
    assertThat(result.verified()).isTrue();
    assertThat(result.markdown())
        .startsWith(
            "**Schema diff: 1 change (1 destructive); checked: the base plus this SQL gives"
                + " exactly the head; fails --fail-on destructive; the pull request's 1 statement"
                + " measured: 1 warning.**\n");
  }

  @Test
  void fail_on_destructive_allows_locking_changes() {
    assertThat(
            diff("CREATE INDEX accounts_by_email ON accounts (email);", FailOn.DESTRUCTIVE)
                .failed())
        .isFalse();
  }

  @Test
  void fail_on_any_fails_on_a_safe_change() {
    assertThat(diff("ALTER TABLE accounts ADD COLUMN note text;", FailOn.ANY).failed()).isTrue();
  }

  @Test
  void fail_on_never_passes_a_destructive_change() {
    assertThat(diff("DROP TABLE accounts;", FailOn.NEVER).failed()).isFalse();
  }
}

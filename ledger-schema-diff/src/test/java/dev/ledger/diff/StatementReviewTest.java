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
 * The review of the pull request's own statements on a real PostgreSQL: each new statement run on
 * top of the base and measured (locks from {@code pg_locks}, rewrites by {@code relfilenode},
 * scans, renames by OID), renames shown as renames, and the history checks.
 */
class StatementReviewTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final String ORDERS =
      """
      CREATE TABLE customers (id bigint PRIMARY KEY);
      CREATE TABLE orders (id bigint PRIMARY KEY, customer bigint, note text);
      """;

  @TempDir Path temp;

  private DiffReport diff(String... headScripts) {
    Path base = Diffs.migrations(temp.resolve("base"), "V1__orders.sql", ORDERS);
    String[] head = new String[headScripts.length + 2];
    head[0] = "V1__orders.sql";
    head[1] = ORDERS;
    System.arraycopy(headScripts, 0, head, 2, headScripts.length);
    return SchemaDiff.run(
        Diffs.request(base, Diffs.migrations(temp.resolve("head"), head), PG.jdbcUrl()));
  }

  private static JsonNode onlyStatement(DiffReport report) {
    JsonNode statements = Diffs.json(report).get("statements");
    assertThat(statements).as(report.json()).hasSize(1);
    return statements.get(0);
  }

  private static List<String> locks(JsonNode statement) {
    List<String> out = new ArrayList<>();
    statement
        .get("locks")
        .forEach(l -> out.add(l.get("relation").asText() + " " + l.get("mode").asText()));
    return out;
  }

  private static List<String> rules(JsonNode findings) {
    List<String> out = new ArrayList<>();
    findings.forEach(f -> out.add(f.get("severity").asText() + " " + f.get("rule").asText()));
    return out;
  }

  @Test
  void a_renamed_column_is_a_rename_with_the_rolling_deploy_finding() {
    DiffReport report =
        diff(
            "V2__rename.sql",
            "-- the customer's id\nALTER TABLE orders RENAME COLUMN customer TO customer_id;\n");
    assertThat(report.verified()).as(report.verdict()).isTrue();
    assertThat(Diffs.changeLines(report)).containsExactly("orders column customer_id renamed safe");
    assertThat(report.diff().script())
        .containsExactly("ALTER TABLE orders RENAME COLUMN customer TO customer_id;");
    assertThat(report.verdict())
        .isEqualTo(
            "Schema diff: 1 change (1 safe); checked: the base plus this SQL gives exactly the"
                + " head; the pull request's 1 statement measured: 1 rename, 1 warning.");
    JsonNode s = onlyStatement(report);
    assertThat(s.get("migration").asText()).isEqualTo("V2__rename.sql");
    assertThat(s.get("line").asInt()).isEqualTo(2);
    assertThat(s.get("sql").asText())
        .isEqualTo("ALTER TABLE orders RENAME COLUMN customer TO customer_id");
    assertThat(locks(s)).containsExactly("orders AccessExclusiveLock");
    assertThat(s.get("rewrites")).isEmpty();
    assertThat(s.get("renames").toString())
        .isEqualTo(
            "[{\"kind\":\"column\",\"from\":\"orders.customer\",\"to\":\"orders.customer_id\"}]");
    assertThat(rules(s.get("findings"))).containsExactly("warning rename-column");
    assertThat(s.get("findings").get(0).get("message").asText())
        .isEqualTo(
            "renames `orders.customer` to `orders.customer_id`: the release still running during a"
                + " rolling deploy uses `orders.customer` and fails until it is gone");
    assertThat(s.get("findings").get(0).get("alternative").asText())
        .startsWith("expand and contract: add `orders.customer_id`");
    assertThat(rules(Diffs.json(report).get("findings"))).containsExactly("warning rename-column");
    assertThat(report.markdown())
        .contains(
            "| renamed | column `customer_id` | `orders.customer` → `orders.customer_id` |"
                .replace("`orders.customer` → `orders.customer_id`", "`customer` → `customer_id`"))
        .contains(
            "| `V2__rename.sql` line 2: `ALTER TABLE orders RENAME COLUMN customer TO customer_id` |"
                + " `orders` AccessExclusiveLock |  |  | column `orders.customer` →"
                + " `orders.customer_id` | **warning** `rename-column`: ");
  }

  @Test
  void a_volatile_default_rewrites_the_table_under_access_exclusive() {
    DiffReport report =
        diff(
            "V2__token.sql", "ALTER TABLE orders ADD COLUMN token uuid DEFAULT gen_random_uuid();");
    JsonNode s = onlyStatement(report);
    assertThat(s.get("transactional").asBoolean()).isTrue();
    assertThat(locks(s))
        .containsExactly("orders AccessExclusiveLock", "orders_pkey AccessExclusiveLock");
    assertThat(s.get("rewrites").toString()).isEqualTo("[\"orders\"]");
    assertThat(rules(s.get("findings"))).containsExactly("warning table-rewrite");
    assertThat(s.get("findings").get(0).get("message").asText())
        .isEqualTo(
            "rewrites `orders` (every row copied to a new file: its relfilenode changed) under"
                + " AccessExclusiveLock: reads and writes wait until it ends");
  }

  @Test
  void a_foreign_key_is_measured_with_its_locks_and_validation_scan() {
    DiffReport report =
        diff(
            "V2__fk.sql",
            "ALTER TABLE orders ADD CONSTRAINT orders_customer FOREIGN KEY (customer) REFERENCES customers (id);");
    JsonNode s = onlyStatement(report);
    assertThat(locks(s))
        .containsExactly(
            "customers ShareRowExclusiveLock",
            "customers_pkey AccessShareLock",
            "orders ShareRowExclusiveLock",
            "orders_pkey AccessShareLock");
    assertThat(s.get("scans").toString()).isEqualTo("[\"orders\"]");
    assertThat(rules(s.get("findings"))).containsExactly("warning validation-scan");
    assertThat(s.get("findings").get(0).get("alternative").asText())
        .startsWith("ADD CONSTRAINT ... NOT VALID, then VALIDATE CONSTRAINT");
  }

  @Test
  void create_index_concurrently_is_reported_as_not_transactional() {
    DiffReport report =
        diff(
            "V2__index.sql",
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS orders_note ON orders (note);");
    assertThat(report.verified()).as(report.verdict()).isTrue();
    JsonNode s = onlyStatement(report);
    assertThat(s.get("transactional").asBoolean()).isFalse();
    assertThat(s.get("locks")).isEmpty();
    assertThat(s.get("locksMeasured").asBoolean()).isFalse();
    assertThat(s.get("documentedLocks").toString())
        .isEqualTo("[{\"relation\":\"orders\",\"mode\":\"ShareUpdateExclusiveLock\"}]");
    assertThat(s.get("scans")).isEmpty();
    assertThat(s.get("findings")).isEmpty();
    assertThat(report.markdown())
        .contains(
            "| not measured: cannot run inside a transaction block, ran on its own; documented"
                + " for its kind: `orders` ShareUpdateExclusiveLock |");
  }

  @Test
  void drop_index_concurrently_reports_the_documented_locks_on_the_index_and_its_table() {
    DiffReport report =
        diff(
            "V2__index.sql",
            "CREATE INDEX orders_note ON orders (note);",
            "V3__drop.sql",
            "DROP INDEX CONCURRENTLY IF EXISTS \"orders_note\";");
    assertThat(report.verified()).as(report.verdict()).isTrue();
    JsonNode statements = Diffs.json(report).get("statements");
    assertThat(statements).hasSize(2);
    JsonNode measured = statements.get(0);
    assertThat(measured.get("locksMeasured").asBoolean()).isTrue();
    assertThat(measured.get("documentedLocks")).isEmpty();
    JsonNode drop = statements.get(1);
    assertThat(drop.get("transactional").asBoolean()).isFalse();
    assertThat(drop.get("locksMeasured").asBoolean()).isFalse();
    assertThat(locks(drop)).isEmpty();
    List<String> documented = new ArrayList<>();
    drop.get("documentedLocks")
        .forEach(l -> documented.add(l.get("relation").asText() + " " + l.get("mode").asText()));
    assertThat(documented)
        .containsExactly("orders ShareUpdateExclusiveLock", "orders_note ShareUpdateExclusiveLock");
  }

  @Test
  void a_dropped_column_breaks_the_running_release() {
    DiffReport report = diff("V2__drop.sql", "ALTER TABLE orders DROP COLUMN note;");
    JsonNode s = onlyStatement(report);
    assertThat(rules(s.get("findings"))).containsExactly("warning drop-column");
    assertThat(Diffs.changeLines(report)).containsExactly("orders column note dropped destructive");
  }

  @Test
  void an_edited_applied_migration_is_flagged_and_the_review_falls_back() {
    Path base = Diffs.migrations(temp.resolve("base"), "V1__orders.sql", ORDERS);
    Path head =
        Diffs.migrations(
            temp.resolve("head"),
            "V1__orders.sql",
            ORDERS.replace("note text", "note text, placed timestamptz"),
            "V2__more.sql",
            "ALTER TABLE orders RENAME COLUMN note TO remark;");
    DiffReport report = SchemaDiff.run(Diffs.request(base, head, PG.jdbcUrl()));
    JsonNode json = Diffs.json(report);
    assertThat(json.get("review").get("status").asText()).isEqualTo("history-rewritten");
    assertThat(json.get("review").get("message").asText())
        .isEqualTo(
            "the head rewrites the base's migration history, so its statements are not measured"
                + " one by one: the changes are the catalog diff of both sets");
    assertThat(json.get("statements")).isEmpty();
    assertThat(rules(json.get("findings"))).containsExactly("error edited-migration");
    assertThat(json.get("findings").get(0).get("message").asText())
        .startsWith("`V1__orders.sql`, which the base applied, is edited (Flyway's checksum ");
    // the catalog diff: the rename is not measured, so it is a drop and an add
    assertThat(Diffs.changeLines(report))
        .contains("orders column note dropped destructive", "orders column remark added safe");
    assertThat(report.verdict())
        .endsWith("; the head rewrites the migration history: statements not measured.");
    assertThat(report.markdown())
        .contains(
            "- **error** `edited-migration`: `V1__orders.sql`, which the base applied, is edited")
        .contains(
            "> The head rewrites the base's migration history, so its statements are not measured one by one");
  }

  @Test
  void an_edited_applied_migration_fails_every_rule_but_never_even_when_each_change_is_safe() {
    Path base = Diffs.migrations(temp.resolve("base"), "V1__orders.sql", ORDERS);
    Path head =
        Diffs.migrations(
            temp.resolve("head"),
            "V1__orders.sql",
            ORDERS.replace("note text", "note text, placed timestamptz"));
    for (FailOn rule : FailOn.values()) {
      DiffReport report = SchemaDiff.run(Diffs.request(base, head, PG.jdbcUrl(), rule, false));
      assertThat(Diffs.changeLines(report)).containsExactly("orders column placed added safe");
      assertThat(rules(Diffs.json(report).get("findings")))
          .containsExactly("error edited-migration");
      assertThat(report.failed()).as(rule.label()).isEqualTo(rule != FailOn.NEVER);
      if (rule == FailOn.DESTRUCTIVE) {
        assertThat(report.verdict()).contains("; fails --fail-on destructive (an error finding);");
      }
    }
  }

  @Test
  void a_version_below_the_base_latest_is_flagged() {
    Path base =
        Diffs.migrations(
            temp.resolve("base"),
            "V1__orders.sql",
            ORDERS,
            "V3__index.sql",
            "CREATE INDEX orders_note ON orders (note);");
    Path head =
        Diffs.migrations(
            temp.resolve("head"),
            "V1__orders.sql",
            ORDERS,
            "V2__late.sql",
            "ALTER TABLE orders ADD COLUMN late text;",
            "V3__index.sql",
            "CREATE INDEX orders_note ON orders (note);");
    DiffReport report = SchemaDiff.run(Diffs.request(base, head, PG.jdbcUrl()));
    JsonNode json = Diffs.json(report);
    assertThat(json.get("review").get("status").asText()).isEqualTo("history-rewritten");
    assertThat(rules(json.get("findings"))).containsExactly("error version-below-latest");
    assertThat(json.get("findings").get(0).get("message").asText())
        .isEqualTo(
            "`V2__late.sql` is new but below the base's latest version V3: a database at V3 refuses"
                + " it (Flyway's validation), or with outOfOrder runs it after V3, in an order no"
                + " test ran");
    assertThat(json.get("findings").get(0).get("alternative").asText())
        .isEqualTo("number it above V3");
  }

  @Test
  void the_json_shape_of_a_statement() {
    DiffReport report = diff("V2__note.sql", "ALTER TABLE orders ALTER COLUMN note SET NOT NULL;");
    JsonNode json = Diffs.json(report);
    List<String> top = new ArrayList<>();
    json.fieldNames().forEachRemaining(top::add);
    assertThat(top).contains("review", "statements", "findings");
    JsonNode s = onlyStatement(report);
    List<String> fields = new ArrayList<>();
    s.fieldNames().forEachRemaining(fields::add);
    assertThat(fields)
        .containsExactly(
            "migration",
            "line",
            "sql",
            "transactional",
            "locks",
            "locksMeasured",
            "documentedLocks",
            "rewrites",
            "scans",
            "renames",
            "findings");
    assertThat(s.get("findings").get(0).toString())
        .isEqualTo(
            "{\"rule\":\"validation-scan\",\"severity\":\"warning\",\"message\":\"reads all of"
                + " `orders` (a sequential scan, counted by PostgreSQL) while holding"
                + " AccessExclusiveLock: reads and writes wait until the scan ends\",\"alternative\":"
                + "\"ADD CONSTRAINT ... CHECK (column IS NOT NULL) NOT VALID, VALIDATE CONSTRAINT in a"
                + " later transaction, then SET NOT NULL (no scan) and drop the check\"}");
    assertThat(json.get("review").toString())
        .isEqualTo(
            "{\"status\":\"measured\",\"message\":\"the head appends 1 migration to the base's; its"
                + " statement was run one at a time on top of the base and measured\"}");
  }
}

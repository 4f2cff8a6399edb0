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
 * The advice rules ({@link Advice}) on a real PostgreSQL: each found with its rule id, silenced by
 * {@code -- ledger:allow RULE} in the new migration's statement, and shown in every format.
 */
class AdviceTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final String BASE =
      """
      CREATE TABLE owners (id bigint PRIMARY KEY, legacy varchar(10));
      CREATE INDEX owners_legacy ON owners (legacy);
      """;

  private static final String ORDERS =
      """
      CREATE TABLE orders (
          id       serial PRIMARY KEY,
          owner    integer,
          code     varchar(20),
          flag     char(1),
          placed   timestamp,
          note     text,
          at       timestamptz
      );
      """;

  @TempDir Path temp;

  private DiffReport diff(String headMigration) {
    Path base = Diffs.migrations(temp.resolve("base"), "V1__owners.sql", BASE);
    Path head =
        Diffs.migrations(
            temp.resolve("head"), "V1__owners.sql", BASE, "V2__change.sql", headMigration);
    DiffReport report = SchemaDiff.run(Diffs.request(base, head, PG.jdbcUrl()));
    assertThat(report.verified()).as(report.verdict()).isTrue();
    return report;
  }

  private static List<String> rules(DiffReport report) {
    List<String> rules = new ArrayList<>();
    report.findings().forEach(f -> rules.add(f.rule() + ": " + f.message()));
    return rules;
  }

  @Test
  void a_new_table_gets_one_finding_per_rule_and_column() {
    DiffReport report = diff(ORDERS);
    assertThat(rules(report))
        .containsExactly(
            "prefer-bigint: `orders.id` is integer in a key: it runs out at 2,147,483,647",
            "prefer-identity: `orders.id` takes its values from a sequence default (serial)",
            "prefer-text: `orders.code` is character varying(20): raising its limit later is a"
                + " migration of its own",
            "prefer-text: `orders.flag` is character(1): raising its limit later is a migration"
                + " of its own",
            "prefer-timestamptz: `orders.placed` is timestamp without time zone: its values"
                + " depend on each session's time zone");
    assertThat(report.findings()).allMatch(f -> f.severity().equals("advice"));
    assertThat(report.findings().get(0).alternative())
        .isEqualTo("bigint (8 bytes: a key that never runs out)");
    // advice never fails the diff
    assertThat(report.failed()).isFalse();
  }

  @Test
  void a_foreign_key_column_of_int_is_flagged_and_an_old_column_is_not() {
    DiffReport report =
        diff("ALTER TABLE owners ADD COLUMN parent integer REFERENCES owners (id);");
    assertThat(rules(report))
        .containsExactly(
            "prefer-bigint: `owners.parent` is integer in a key: it runs out at 2,147,483,647");
  }

  @Test
  void an_allow_comment_silences_its_rules_in_its_statement_only() {
    DiffReport report =
        diff(
            ORDERS.replace(
                    "code     varchar(20),",
                    "code     varchar(20), -- ledger:allow prefer-text, prefer-timestamptz")
                + "ALTER TABLE owners ADD COLUMN placed timestamp;\n");
    assertThat(rules(report))
        .containsExactly(
            "prefer-bigint: `orders.id` is integer in a key: it runs out at 2,147,483,647",
            "prefer-identity: `orders.id` takes its values from a sequence default (serial)",
            "prefer-timestamptz: `owners.placed` is timestamp without time zone: its values"
                + " depend on each session's time zone");
  }

  @Test
  void a_concurrent_index_statement_without_if_exists_is_flagged() {
    DiffReport report = diff("DROP INDEX CONCURRENTLY owners_legacy;");
    assertThat(report.findings()).hasSize(1);
    Finding f = report.findings().get(0);
    assertThat(f.rule()).isEqualTo("prefer-if-exists");
    assertThat(f.message())
        .isEqualTo(
            "`V2__change.sql`: `DROP INDEX CONCURRENTLY owners_legacy` runs outside a"
                + " transaction: when the script fails after it, running the script again fails"
                + " on it");
    assertThat(f.alternative()).isEqualTo("DROP INDEX CONCURRENTLY IF EXISTS");
    assertThat(diff("DROP INDEX CONCURRENTLY IF EXISTS owners_legacy;").findings()).isEmpty();
    assertThat(
            diff("-- ledger:allow prefer-if-exists\nDROP INDEX CONCURRENTLY owners_legacy;")
                .findings())
        .isEmpty();
  }

  @Test
  void findings_show_in_json_markdown_and_sql() {
    DiffReport report = diff("ALTER TABLE owners ADD COLUMN at timestamp;");
    JsonNode findings = Diffs.json(report).get("findings");
    assertThat(findings).hasSize(1);
    assertThat(findings.get(0).get("rule").asText()).isEqualTo("prefer-timestamptz");
    assertThat(findings.get(0).get("severity").asText()).isEqualTo("advice");
    assertThat(findings.get(0).get("message").asText())
        .isEqualTo(
            "`owners.at` is timestamp without time zone: its values depend on each session's"
                + " time zone");
    assertThat(findings.get(0).get("alternative").asText())
        .isEqualTo("timestamptz (an instant, the same whatever the time zone)");
    assertThat(report.markdown())
        .contains(
            """
            ### Advice (does not fail the diff)

            | rule | finding | instead |
            | --- | --- | --- |
            | `prefer-timestamptz` | `owners.at` is timestamp without time zone: its values\
             depend on each session's time zone | timestamptz (an instant, the same whatever the\
             time zone) |

            Silence a rule for one statement with `-- ledger:allow RULE` in it, or for the\
             project in `.ledger/schema-diff.json`.
            """);
    assertThat(report.sql())
        .contains(
            "-- advice prefer-timestamptz: `owners.at` is timestamp without time zone: its values"
                + " depend on each session's time zone; instead: timestamptz (an instant, the same"
                + " whatever the time zone)\n");
  }

  @Test
  void statements_split_outside_quotes_and_keep_their_trailing_comment() {
    assertThat(
            MigrationStatements.split(
                "CREATE TABLE a (x text DEFAULT ';'); -- ledger:allow prefer-text\n"
                    + "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; $$;\n"
                    + "/* ; */ SELECT \"a;b\";\n-- trailing"))
        .containsExactly(
            "CREATE TABLE a (x text DEFAULT ';') -- ledger:allow prefer-text",
            "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; $$",
            "/* ; */ SELECT \"a;b\"");
  }
}

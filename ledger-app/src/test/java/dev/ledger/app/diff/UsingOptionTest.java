package dev.ledger.app.diff;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledger.app.Cli;
import dev.ledger.testing.PostgresExtension;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --using TABLE.COLUMN=EXPR}: a type change with no cast, refused without it, is converted
 * with the author's expression and checked on a scratch schema holding rows; a column that is not
 * in the change set is a usage error naming the option.
 */
class UsingOptionTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @TempDir Path temp;

  private Path base;
  private Path head;

  @BeforeEach
  void sets() {
    base =
        DiffFixtures.migrations(
            temp.resolve("base"),
            "V1__events.sql",
            "CREATE TABLE events (id int PRIMARY KEY, ts bigint, note text);\n"
                + "INSERT INTO events VALUES (1, 0, 'a'), (2, 86400, NULL), (3, NULL, 'c');\n");
    head =
        DiffFixtures.migrations(
            temp.resolve("head"),
            "V1__events.sql",
            "CREATE TABLE events (id int PRIMARY KEY, ts timestamptz, note text);\n");
  }

  private Cli.Result diff(String... using) {
    String[] args = new String[10 + using.length * 2];
    String[] fixed = {
      "schema-diff",
      "--base",
      base.toString(),
      "--head",
      head.toString(),
      "--url",
      PG.jdbcUrl(),
      "--format",
      "json",
      "--fail-on=never"
    };
    System.arraycopy(fixed, 0, args, 0, fixed.length);
    for (int i = 0; i < using.length; i++) {
      args[fixed.length + 2 * i] = "--using";
      args[fixed.length + 2 * i + 1] = using[i];
    }
    return Cli.run(args);
  }

  @Test
  void without_it_a_type_change_with_no_cast_is_refused_and_names_the_option() {
    Cli.Result r = diff();
    assertThat(r.exit()).isEqualTo(3);
    JsonNode check = DiffFixtures.json(r.out()).get("verification");
    assertThat(check.get("status").asText()).isEqualTo("refused");
    assertThat(check.get("refused").get(0).asText())
        .isEqualTo(
            "column `ts` on `events` (no cast from bigint to timestamp with time zone: give the"
                + " conversion with --using events.ts=EXPR, an expression over the old value)");
  }

  @Test
  void with_it_the_column_is_converted_with_the_expression_and_checked() {
    Cli.Result r = diff("events.ts=to_timestamp(ts)");
    assertThat(r.err()).isEmpty();
    assertThat(r.exit()).isZero();
    JsonNode doc = DiffFixtures.json(r.out());
    assertThat(doc.get("verification").get("status").asText()).isEqualTo("exact");
    JsonNode change = doc.get("changes").get(0);
    assertThat(change.get("name").asText()).isEqualTo("ts");
    assertThat(change.get("class").asText()).isEqualTo("destructive");
    assertThat(change.get("reason").asText())
        .isEqualTo(
            "converted with the author's expression (--using events.ts); type changed from bigint"
                + " to timestamp with time zone: values that do not convert fail the change, and"
                + " the table is rewritten");
    assertThat(change.get("sql").get(0).asText())
        .isEqualTo(
            "ALTER TABLE events ALTER COLUMN ts TYPE timestamp with time zone USING"
                + " to_timestamp(ts);");
    assertThat(doc.get("changes")).hasSize(1);
  }

  @Test
  void a_column_outside_the_change_set_is_a_usage_error_naming_the_option() {
    Cli.Result table = diff("evnets.ts=to_timestamp(ts)");
    assertThat(table.exit()).isEqualTo(2);
    assertThat(table.err())
        .isEqualTo(
            "schema-diff: --using: evnets.ts: no table 'evnets' in the base or the head (tables"
                + " are named as the report names them: 'orders', 'audit.log')\n");
    Cli.Result column = diff("events.tss=to_timestamp(tss)");
    assertThat(column.exit()).isEqualTo(2);
    assertThat(column.err())
        .isEqualTo(
            "schema-diff: --using: events.tss: table 'events' has no column 'tss' in the base or"
                + " the head\n");
    Cli.Result unchanged = diff("events.note=upper(note)");
    assertThat(unchanged.exit()).isEqualTo(2);
    assertThat(unchanged.err())
        .isEqualTo(
            "schema-diff: --using: events.note: its type does not change (text in both): --using"
                + " is for a column whose type changes\n");
    Cli.Result malformed = diff("ts=to_timestamp(ts)");
    assertThat(malformed.exit()).isEqualTo(2);
    assertThat(malformed.err())
        .isEqualTo("schema-diff: --using: expected TABLE.COLUMN=EXPR, got 'ts=to_timestamp(ts)'\n");
    Cli.Result twice = diff("events.ts=to_timestamp(ts)", "events.ts=now()");
    assertThat(twice.exit()).isEqualTo(2);
    assertThat(twice.err())
        .isEqualTo("schema-diff: --using: events.ts given twice; give each column once\n");
  }
}

package dev.ledger.app.diff;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledger.app.Cli;
import dev.ledger.testing.PostgresExtension;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@code --json} like every other command, and a {@code --placeholder} key given twice. */
class DiffOptionsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @TempDir Path temp;

  @Test
  void json_is_the_json_format_and_errors_print_a_document_too() {
    Path base = DiffFixtures.migrations(temp.resolve("base"));
    Path head =
        DiffFixtures.migrations(
            temp.resolve("head"), "V1__t.sql", "CREATE TABLE things (id int);\n");
    Cli.Result ok =
        Cli.run(
            "schema-diff",
            "--base",
            base.toString(),
            "--head",
            head.toString(),
            "--url",
            PG.jdbcUrl(),
            "--json");
    assertThat(ok.exit()).isZero();
    assertThat(ok.err()).isEmpty();
    assertThat(DiffFixtures.changeLines(ok.out()))
        .containsExactly("things table things added safe", "things column id added safe");

    Path missing = temp.resolve("nowhere");
    Cli.Result broken =
        Cli.run("schema-diff", "--base", missing.toString(), "--head", head.toString(), "--json");
    assertThat(broken.exit()).isEqualTo(2);
    String line = "--base: " + missing + " is neither a migrations directory nor a jar";
    assertThat(broken.err()).isEqualTo("schema-diff: " + line + "\n");
    JsonNode doc = DiffFixtures.json(broken.out());
    assertThat(doc.get("command").asText()).isEqualTo("ledger-app schema-diff");
    assertThat(doc.get("exitCode").asInt()).isEqualTo(2);
    assertThat(doc.get("ok").asBoolean()).isFalse();
    assertThat(doc.get("error").asText()).isEqualTo(line);
  }

  @Test
  void a_placeholder_key_given_twice_is_a_usage_error_not_a_silent_last_wins() {
    Path set =
        DiffFixtures.migrations(temp.resolve("set"), "V1__t.sql", "CREATE TABLE ${t} (id int);\n");
    Cli.Result r =
        Cli.run(
            "schema-diff",
            "--base",
            set.toString(),
            "--head",
            set.toString(),
            "--placeholder",
            "t=a",
            "--placeholder",
            "t=b");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.out()).isEmpty();
    assertThat(r.err())
        .isEqualTo("schema-diff: --placeholder: key 't' given twice; give each key once\n");
    Cli.Result noEquals =
        Cli.run(
            "schema-diff",
            "--base",
            set.toString(),
            "--head",
            set.toString(),
            "--placeholder",
            "t");
    assertThat(noEquals.err())
        .isEqualTo("schema-diff: --placeholder: expected KEY=VALUE, got 't'\n");
  }
}

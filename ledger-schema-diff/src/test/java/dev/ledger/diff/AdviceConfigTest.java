package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.testing.PostgresExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A project's advice settings ({@link AdviceConfig}): rules silenced for the whole project, and
 * every mistake in the file named by file, line and key.
 */
class AdviceConfigTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @TempDir Path temp;

  private Path file(String json) throws IOException {
    Path f = temp.resolve("schema-diff.json");
    Files.writeString(f, json);
    return f;
  }

  @Test
  void the_rules_it_allows_are_silenced_for_the_project_and_the_others_stay() throws Exception {
    Path base = Diffs.migrations(temp.resolve("base"), "V1__t.sql", "CREATE TABLE t (id bigint);");
    Path head =
        Diffs.migrations(
            temp.resolve("head"),
            "V1__t.sql",
            "CREATE TABLE t (id bigint);",
            "V2__u.sql",
            "CREATE TABLE u (code varchar(20), placed timestamp);");
    DiffReport report = SchemaDiff.run(Diffs.request(base, head, PG.jdbcUrl()));
    assertThat(report.findings())
        .extracting(Finding::rule)
        .containsExactly("prefer-text", "prefer-timestamptz");

    AdviceConfig config =
        AdviceConfig.read("--config", file("{\n  \"allow\": [\"prefer-text\"]\n}\n"), true);
    DiffReport silenced = config.apply(report);

    assertThat(silenced.findings()).extracting(Finding::rule).containsExactly("prefer-timestamptz");
    assertThat(silenced.markdown()).doesNotContain("prefer-text").contains("prefer-timestamptz");
    assertThat(silenced.verdict()).isEqualTo(report.verdict());
  }

  @Test
  void an_unknown_rule_is_an_error_naming_the_file_and_the_line() throws Exception {
    Path f = file("{\n  \"allow\": [\n    \"prefer-text\",\n    \"prefer-txt\"\n  ]\n}\n");
    assertThatThrownBy(() -> AdviceConfig.read("--config", f, true))
        .isInstanceOf(SchemaDiffException.class)
        .hasMessage(
            "--config "
                + f
                + " line 4: unknown rule 'prefer-txt' in 'allow'; known rules: prefer-bigint,"
                + " prefer-identity, prefer-text, prefer-timestamptz, prefer-if-exists");
  }

  @Test
  void an_unknown_key_a_wrong_shape_and_broken_json_name_the_line() throws Exception {
    Path key = file("{\"allow\": [],\n \"deny\": [\"prefer-text\"]}");
    assertThatThrownBy(() -> AdviceConfig.read("--config", key, true))
        .hasMessage("--config " + key + " line 2: unknown key 'deny'; the one key is 'allow'");
    Path shape = file("{\n\"allow\": \"prefer-text\"}");
    assertThatThrownBy(() -> AdviceConfig.read("--config", shape, true))
        .hasMessage("--config " + shape + " line 2: 'allow' must be a list of rule ids");
    Path broken = file("{\n\"allow\": [\"prefer-text\"\n");
    assertThatThrownBy(() -> AdviceConfig.read("--config", broken, true))
        .hasMessageStartingWith("--config " + broken + " line 3: not JSON: ");
  }

  @Test
  void a_missing_default_file_means_nothing_silenced_and_a_missing_given_file_is_an_error() {
    Path none = temp.resolve("none.json");
    assertThat(AdviceConfig.read("--config", none, false)).isEqualTo(AdviceConfig.NONE);
    assertThatThrownBy(() -> AdviceConfig.read("--config", none, true))
        .hasMessage("--config " + none + ": no such file");
  }
}

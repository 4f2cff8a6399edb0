package dev.ledger.app.diff;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.diff.DiffReport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The CI recipes of docs/schema-diff.md parse as YAML and hold what each CI needs to post the
 * comment and update it in place by the Markdown's hidden marker.
 */
class CiRecipesTest {

  private static final Path PAGE = Path.of("..", "docs", "schema-diff.md");

  private static List<String> yamlBlocks() throws Exception {
    List<String> blocks = new ArrayList<>();
    Matcher m = Pattern.compile("(?ms)^```yaml\\n(.*?)^```\\n").matcher(Files.readString(PAGE));
    while (m.find()) {
      blocks.add(m.group(1));
    }
    return blocks;
  }

  private static String recipe(String firstLine) throws Exception {
    return yamlBlocks().stream()
        .filter(b -> b.startsWith(firstLine))
        .findFirst()
        .orElseThrow(() -> new AssertionError("docs/schema-diff.md: no block " + firstLine));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o) {
    assertThat(o).isInstanceOf(Map.class);
    return (Map<String, Object>) o;
  }

  @SuppressWarnings("unchecked")
  private static List<Object> list(Object o) {
    assertThat(o).isInstanceOf(List.class);
    return (List<Object>) o;
  }

  @Test
  void the_github_actions_recipe_posts_and_updates_the_comment_by_the_marker() throws Exception {
    String text = recipe("# .github/workflows/schema-diff.yml");
    Map<String, Object> workflow = map(new Yaml().load(text));

    // YAML 1.1 reads the key `on` as true; GitHub reads it as "on".
    Object on = workflow.containsKey("on") ? workflow.get("on") : workflow.get(true);
    assertThat(on).isEqualTo("pull_request");
    assertThat(map(workflow.get("permissions"))).containsEntry("pull-requests", "write");
    Map<String, Object> job = map(map(workflow.get("jobs")).get("schema-diff"));
    assertThat(job.get("runs-on")).isEqualTo("ubuntu-latest");
    List<Object> steps = list(job.get("steps"));
    assertThat(steps).hasSize(7);
    for (Object step : steps) {
      assertThat(map(step).containsKey("uses") || map(step).containsKey("run"))
          .as("a step runs or uses something: " + step)
          .isTrue();
    }
    String diff =
        steps.stream()
            .map(CiRecipesTest::map)
            .filter(s -> "diff".equals(s.get("id")))
            .map(s -> (String) s.get("run"))
            .findFirst()
            .orElseThrow();
    assertThat(diff).contains("schema-diff \\").contains("--against").contains(DiffReport.MARKER);
    Map<String, Object> post =
        steps.stream()
            .map(CiRecipesTest::map)
            .filter(s -> "actions/github-script@v7".equals(s.get("uses")))
            .findFirst()
            .orElseThrow();
    String script = (String) map(post.get("with")).get("script");
    assertThat(script)
        .contains("'" + DiffReport.MARKER + "'")
        .contains("github.rest.issues.updateComment")
        .contains("github.rest.issues.createComment");
  }

  @Test
  void the_gitlab_recipe_posts_and_updates_the_note_by_the_marker() throws Exception {
    Map<String, Object> pipeline = map(new Yaml().load(recipe("# .gitlab-ci.yml")));
    Map<String, Object> job = map(pipeline.get("schema-diff"));
    assertThat(job).containsKeys("image", "stage", "rules", "services", "script");
    assertThat(map(list(job.get("rules")).get(0)).get("if"))
        .isEqualTo("$CI_PIPELINE_SOURCE == \"merge_request_event\"");
    List<Object> script = list(job.get("script"));
    assertThat(script).allMatch(s -> s instanceof String);
    String all = String.join("\n", script.stream().map(String.class::cast).toList());
    assertThat(all)
        .contains("git worktree add base \"$CI_MERGE_REQUEST_DIFF_BASE_SHA\"")
        .contains("--url 'jdbc:postgresql://postgres:5432/postgres?user=postgres'")
        .contains("contains(\"" + DiffReport.MARKER + "\")")
        .contains("curl -sf -X PUT")
        .contains("curl -sf -X POST")
        .endsWith("exit $status\n");
  }
}

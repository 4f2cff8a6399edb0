package dev.ledger.app;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.Claimer;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import java.util.ArrayList;
import java.util.List;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every command's invalid-value path names the option the user typed, never the library's field
 * ({@code maxClaimed}, {@code batchSize}, {@code retention}, {@code lease: lease:}), with durations
 * as the user writes them ({@code 100ms}, never {@code PT0.1S}); in text (one line on stderr) and
 * with {@code --json} (one error document on stdout), exit 2 both ways.
 */
class OptionErrorsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final ObjectMapper JSON = new ObjectMapper();

  private static String token;

  @BeforeAll
  static void aDomainWithALease() {
    Ledger ledger = Ledger.open(PG.dataSource());
    ledger.fileAndAdmit(TaskSpec.builder("known", "t").build());
    token = ledger.claimNext("known", Claimer.of("w")).orElseThrow().token();
  }

  /** The command line, and the start of its error after {@code error: }. */
  private record Case(String error, String... args) {}

  @Test
  void every_invalid_value_names_the_option_in_text_and_json() throws Exception {
    String[] limit = {"domain", "limit", "known"};
    String[] add = {"schedule", "add", "n", "--domain", "known", "--title", "t"};
    String[] feed = {"feed", "--domain", "known", "--consumer", "c"};
    String[] work = {"work", "--domain", "known", "--command", "true"};
    String[] claim = {"task", "claim", "--domain", "known", "--holder", "w"};
    List<Case> cases =
        List.of(
            c("--concurrency: must be 1 to 1000000, was 0", limit, "--concurrency", "0"),
            c("--rate: must be 100ms to 24h, was 10ms", limit, "--rate", "10/10ms"),
            c("--rate: must be 1 to 1000000, was 0", limit, "--rate", "0/1s"),
            c("--rate: N must be a whole number, was ten/1s", limit, "--rate", "ten/1s"),
            c("--concurrency/--rate: give --concurrency N", limit),
            c("--clear: clears both limits", limit, "--clear", "--concurrency", "2"),
            c("--every: must be a whole number of seconds", add, "--every", "1500ms"),
            c("--cron: does not parse", add, "--cron", "61 * * * *"),
            c("--catch-up: must be 1", add, "--every", "1m", "--catch-up", "0"),
            c("--cron/--every: give --cron or --every", add),
            c(
                "NAME: must be letters",
                new String[] {"schedule", "add", "a b", "--domain", "known"},
                "--title",
                "t",
                "--every",
                "1m"),
            c(
                "--keep: must be a whole number of seconds",
                new String[] {"retention", "set", "--domain", "known"},
                "--keep",
                "1500ms"),
            c("--batch: must be 1 to 10000", feed, "--batch", "0"),
            c("--lease: must be 1s to 1h", feed, "--lease", "100ms"),
            c("--poll: must be 10ms to 1h", feed, "--follow", "--poll", "1ms"),
            c("--poll: only with --follow", feed, "--poll", "1ms"),
            c("--lease: must be at least 300ms, was 100ms", work, "--lease", "100ms"),
            c("--backoff: must be more than zero", work, "--backoff", "0s"),
            c("--max-attempts: must be 1 to 1000, was 0", work, "--max-attempts", "0"),
            c(
                "--title: must not be empty",
                new String[] {"task", "file", "--domain", "known"},
                "--title",
                ""),
            c("--lease: must be longer than zero", claim, "--lease", "0s"),
            c(
                "--extend: must be longer than zero",
                new String[] {"task", "heartbeat", "--lease", token},
                "--extend",
                "0s"));
    SoftAssertions soft = new SoftAssertions();
    for (Case c : cases) {
      String line = String.join(" ", c.args());
      Cli.Result text = run(c.args(), false);
      soft.assertThat(text.exit()).as(line).isEqualTo(ExitCodes.USAGE);
      soft.assertThat(text.err()).as(line).startsWith("error: " + c.error()).doesNotContain("PT");
      soft.assertThat(text.err().lines().count()).as(line).isEqualTo(1);
      Cli.Result json = run(c.args(), true);
      soft.assertThat(json.exit()).as(line + " --json").isEqualTo(ExitCodes.USAGE);
      JsonNode doc = JSON.readTree(json.out());
      soft.assertThat(doc.get("exitCode").asInt()).as(line + " --json").isEqualTo(2);
      soft.assertThat(doc.get("error").asText()).as(line + " --json").startsWith(c.error());
    }
    soft.assertAll();
  }

  private static Case c(String error, String[] base, String... more) {
    List<String> all = new ArrayList<>(List.of(base));
    all.addAll(List.of(more));
    return new Case(error, all.toArray(String[]::new));
  }

  private static Cli.Result run(String[] args, boolean json) {
    List<String> all = new ArrayList<>(List.of(args));
    if (json) {
      all.add("--json");
    }
    all.add("--url");
    all.add(PG.jdbcUrl());
    return Cli.run(all.toArray(String[]::new));
  }
}

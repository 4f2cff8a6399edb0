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
    List<Case> cases =
        List.of(
            new Case(
                "--concurrency: must be 1 to 1000000, was 0",
                "domain",
                "limit",
                "known",
                "--concurrency",
                "0"),
            new Case(
                "--rate: must be 100ms to 24h, was 10ms",
                "domain",
                "limit",
                "known",
                "--rate",
                "10/10ms"),
            new Case(
                "--rate: must be 1 to 1000000, was 0",
                "domain",
                "limit",
                "known",
                "--rate",
                "0/1s"),
            new Case(
                "--rate: N must be a whole number, was ten/1s",
                "domain",
                "limit",
                "known",
                "--rate",
                "ten/1s"),
            new Case("--concurrency/--rate: give --concurrency N", "domain", "limit", "known"),
            new Case(
                "--clear: clears both limits",
                "domain",
                "limit",
                "known",
                "--clear",
                "--concurrency",
                "2"),
            new Case(
                "--every: must be a whole number of seconds",
                "schedule",
                "add",
                "n",
                "--domain",
                "known",
                "--title",
                "t",
                "--every",
                "1500ms"),
            new Case(
                "--cron: does not parse",
                "schedule",
                "add",
                "n",
                "--domain",
                "known",
                "--title",
                "t",
                "--cron",
                "61 * * * *"),
            new Case(
                "--catch-up: must be 1",
                "schedule",
                "add",
                "n",
                "--domain",
                "known",
                "--title",
                "t",
                "--every",
                "1m",
                "--catch-up",
                "0"),
            new Case(
                "--cron/--every: give --cron or --every",
                "schedule",
                "add",
                "n",
                "--domain",
                "known",
                "--title",
                "t"),
            new Case(
                "NAME: must be letters",
                "schedule",
                "add",
                "a b",
                "--domain",
                "known",
                "--title",
                "t",
                "--every",
                "1m"),
            new Case(
                "--keep: must be a whole number of seconds",
                "retention",
                "set",
                "--domain",
                "known",
                "--keep",
                "1500ms"),
            new Case(
                "--batch: must be 1 to 10000",
                "feed",
                "--domain",
                "known",
                "--consumer",
                "c",
                "--batch",
                "0"),
            new Case(
                "--lease: must be 1s to 1h",
                "feed",
                "--domain",
                "known",
                "--consumer",
                "c",
                "--lease",
                "100ms"),
            new Case(
                "--poll: must be 10ms to 1h",
                "feed",
                "--domain",
                "known",
                "--consumer",
                "c",
                "--follow",
                "--poll",
                "1ms"),
            new Case(
                "--poll: only with --follow",
                "feed",
                "--domain",
                "known",
                "--consumer",
                "c",
                "--poll",
                "1ms"),
            new Case(
                "--lease: must be at least 300ms, was 100ms",
                "work",
                "--domain",
                "known",
                "--command",
                "true",
                "--lease",
                "100ms"),
            new Case(
                "--backoff: must be more than zero",
                "work",
                "--domain",
                "known",
                "--command",
                "true",
                "--backoff",
                "0s"),
            new Case(
                "--max-attempts: must be 1 to 1000, was 0",
                "work",
                "--domain",
                "known",
                "--command",
                "true",
                "--max-attempts",
                "0"),
            new Case(
                "--title: must not be empty", "task", "file", "--domain", "known", "--title", ""),
            new Case(
                "--lease: must be longer than zero",
                "task",
                "claim",
                "--domain",
                "known",
                "--holder",
                "w",
                "--lease",
                "0s"),
            new Case(
                "--extend: must be longer than zero",
                "task",
                "heartbeat",
                "--lease",
                token,
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

package dev.ledger.app.task;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledger.app.ExitCodes;
import dev.ledger.app.Main;
import dev.ledger.app.task.TaskCommandsTest.Run;
import dev.ledger.testing.PostgresExtension;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import picocli.CommandLine;

/**
 * {@code domain pause|resume|limit} against real PostgreSQL: text and JSON, {@code task claim}
 * saying why it found nothing, {@code domains} showing the controls, and typed errors naming the
 * field (as JSON with {@code --json}).
 */
class ControlCommandsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static Run run(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.add("--url");
    all.add(PG.jdbcUrl());
    CommandLine cli = Main.commandLine();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cli.setOut(new PrintWriter(out));
    cli.setErr(new PrintWriter(err));
    int exit = cli.execute(all.toArray(String[]::new));
    return new Run(exit, out.toString(), err.toString());
  }

  private static void fileAdmitted(String domain, String title) throws Exception {
    Run filed = run("task", "file", "--domain", domain, "--title", title, "--json");
    assertThat(filed.exit()).isZero();
    assertThat(run("task", "admit", filed.json().get("id").asText()).exit()).isZero();
  }

  @Test
  void pause_says_why_a_claim_finds_nothing_and_resume_claims_again() throws Exception {
    fileAdmitted("ctl", "t");

    Run paused = run("domain", "pause", "ctl");
    assertThat(paused.exit()).isZero();
    assertThat(paused.out()).isEqualTo("ctl: paused\n");

    Run claim = run("task", "claim", "--domain", "ctl", "--holder", "w", "--json");
    assertThat(claim.exit()).isEqualTo(ExitCodes.NOTHING);
    JsonNode doc = claim.json();
    // the claimable task is held back by the pause, not "became claimable since (try again)"
    assertThat(doc.get("reason").asText())
        .isEqualTo(
            "nothing to claim in ctl: the domain is paused (ledger-app domain resume ctl); 1"
                + " claimable, held back by the control");
    assertThat(doc.get("heldBack").asText()).isEqualTo("paused");
    assertThat(doc.get("retryAfterMs").asLong()).isEqualTo(1000);
    assertThat(doc.get("controls").get("paused").asBoolean()).isTrue();

    Run domains = run("domains");
    assertThat(domains.out()).contains("  controls: paused\n");

    Run resumed = run("domain", "resume", "ctl", "--json");
    assertThat(resumed.exit()).isZero();
    JsonNode c = resumed.json().get("controls");
    assertThat(c.get("paused").asBoolean()).isFalse();
    assertThat(c.get("maxClaimed").isNull()).isTrue();
    assertThat(run("task", "claim", "--domain", "ctl", "--holder", "w").exit()).isZero();
  }

  @Test
  void limit_sets_shows_and_clears_the_limits() throws Exception {
    fileAdmitted("lim", "a");
    fileAdmitted("lim", "b");

    Run set = run("domain", "limit", "lim", "--concurrency", "1", "--rate", "10/1s", "--json");
    assertThat(set.exit()).isZero();
    JsonNode c = set.json().get("controls");
    assertThat(c.get("maxClaimed").asInt()).isEqualTo(1);
    assertThat(c.get("rate").asText()).isEqualTo("10/1s");
    assertThat(c.get("rateClaims").asInt()).isEqualTo(10);
    assertThat(c.get("ratePeriodMs").asLong()).isEqualTo(1000);
    assertThat(c.get("claimedNow").asLong()).isZero();

    assertThat(run("task", "claim", "--domain", "lim", "--holder", "w").exit()).isZero();
    Run second = run("task", "claim", "--domain", "lim", "--holder", "w");
    assertThat(second.exit()).isEqualTo(ExitCodes.NOTHING);
    assertThat(second.out())
        .startsWith(
            "nothing to claim in lim: the domain's concurrency limit is reached (1 of at most 1"
                + " claimed); 1 is leased (the first lease ends ")
        .endsWith("); 1 claimable, held back by the control\n");
    assertThat(
            run("task", "claim", "--domain", "lim", "--holder", "w", "--json")
                .json()
                .get("heldBack")
                .asText())
        .isEqualTo("concurrency_limit");

    Run domains = run("domains", "--json");
    JsonNode lim = null;
    for (JsonNode d : domains.json().get("domains")) {
      if (d.get("domain").asText().equals("lim")) {
        lim = d;
      }
    }
    assertThat(lim.get("controls").get("claimedNow").asLong()).isEqualTo(1);
    assertThat(run("domains").out())
        .contains("  controls: at most 1 claimed (1 now); at most 10/1s claims\n");

    Run cleared = run("domain", "limit", "lim", "--clear");
    assertThat(cleared.out()).isEqualTo("lim: no controls (1 claimed now)\n");
    assertThat(run("task", "claim", "--domain", "lim", "--holder", "w").exit()).isZero();
  }

  @Test
  void bad_limits_are_usage_errors_naming_the_option_in_text_and_json() throws Exception {
    assertThat(run("task", "file", "--domain", "badlim", "--title", "a").exit()).isZero();
    String[][] cases = {
      {"--concurrency", "0"},
      {"--rate", "ten/1s"},
      {"--rate", "10"},
      {"--rate", "10/soon"},
      {"--rate", "10/10ms"},
      {},
      {"--clear", "--concurrency", "2"}
    };
    String[] fields = {
      "--concurrency: must be 1 to 1000000, was 0",
      "--rate: N must be a whole number",
      "--rate: must be N/PERIOD",
      "--rate: PERIOD must be a duration",
      "--rate: must be 100ms to 24h, was 10ms",
      "--concurrency/--rate: give",
      "--clear: clears both limits"
    };
    for (int i = 0; i < cases.length; i++) {
      String[] args = new String[4 + cases[i].length];
      args[0] = "domain";
      args[1] = "limit";
      args[2] = "badlim";
      System.arraycopy(cases[i], 0, args, 3, cases[i].length);
      args[args.length - 1] = "--json";
      Run r = run(args);
      assertThat(r.exit()).as(String.join(" ", args)).isEqualTo(ExitCodes.USAGE);
      assertThat(r.json().get("error").asText()).as(String.join(" ", args)).startsWith(fields[i]);
    }
    Run text = run("domain", "limit", "badlim", "--concurrency", "0");
    assertThat(text.err()).startsWith("error: --concurrency: must be 1 to 1000000, was 0");
    assertThat(run("domains").out()).doesNotContain("controls:");
  }
}

package dev.ledger.app.task;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.Label;
import dev.ledger.Ledger;
import dev.ledger.app.Cli;
import dev.ledger.app.ExitCodes;
import dev.ledger.testing.PostgresExtension;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code task claim} finding nothing says why (every reason the claim has), {@code task list} lists
 * every status by default, {@code --status} ignores case, and a failing task command with {@code
 * --json} prints an error document on stdout.
 */
class ClaimExplainedTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final ObjectMapper JSON = new ObjectMapper();
  static String proposed;
  static String leasedUntil;
  static List<String> ids = new ArrayList<>();

  static Cli.Result run(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.add("--url");
    all.add(PG.jdbcUrl());
    return Cli.run(all.toArray(String[]::new));
  }

  static String file(String... extra) {
    List<String> args = new ArrayList<>(List.of("task", "file", "--domain", "explain"));
    args.addAll(List.of(extra));
    Cli.Result r = run(args.toArray(String[]::new));
    assertThat(r.exit()).as(r.err()).isZero();
    String id = r.out().strip();
    ids.add(id);
    return id;
  }

  static void admit(String id) {
    assertThat(run("task", "admit", id).exit()).isZero();
  }

  @BeforeAll
  static void tasks() throws Exception {
    proposed = file("--title", "not admitted yet");
    admit(file("--title", "needs docker", "--requires", "docker"));
    admit(file("--title", "needs gpu and docker", "--requires", "gpu", "--requires", "docker"));
    admit(file("--title", "confidential", "--label", "confidential"));
    admit(file("--title", "waits on the first", "--depends-on", proposed));
    String continued = file("--title", "continued elsewhere");
    admit(continued);
    file("--title", "the continuation", "--origin", "continues:" + continued);
    admit(file("--title", "claimed by busy"));
    Cli.Result busy =
        run("task", "claim", "--domain", "explain", "--holder", "busy", "--lease", "1h", "--json");
    assertThat(busy.exit()).as(busy.err()).isZero();
    leasedUntil = JSON.readTree(busy.out()).get("until").asText();
  }

  @Test
  void nothing_to_claim_names_every_reason_with_its_count() throws Exception {
    Cli.Result r = run("task", "claim", "--domain", "explain", "--holder", "w");
    assertThat(r.exit()).isEqualTo(ExitCodes.NOTHING);
    assertThat(r.err()).isEmpty();
    String expected =
        "nothing to claim in explain: 2 need --can docker; 1 needs --can gpu; 1 labelled"
            + " confidential, above --handling public; 1 waits on a dependency; 1 waits on a"
            + " continuation; 1 is leased (the first lease ends "
            + leasedUntil
            + "); 2 are not admitted (task admit ID)";
    assertThat(r.out()).isEqualTo(expected + "\n");

    Cli.Result json = run("task", "claim", "--domain", "explain", "--holder", "w", "--json");
    assertThat(json.exit()).isEqualTo(ExitCodes.NOTHING);
    JsonNode doc = JSON.readTree(json.out());
    assertThat(doc.get("id").isNull()).isTrue();
    assertThat(doc.get("lease").isNull()).isTrue();
    JsonNode n = doc.get("nothingClaimable");
    assertThat(n.get("domainKnown").asBoolean()).isTrue();
    assertThat(n.get("notAdmitted").asInt()).isEqualTo(2);
    assertThat(n.get("needsCan").toString()).isEqualTo("{\"docker\":2,\"gpu\":1}");
    assertThat(n.get("labelAboveHandling").toString()).isEqualTo("{\"confidential\":1}");
    assertThat(n.get("waitingOnDependency").asInt()).isEqualTo(1);
    assertThat(n.get("waitingOnContinuation").asInt()).isEqualTo(1);
    assertThat(n.get("leased").asInt()).isEqualTo(1);
    assertThat(n.get("firstLeaseEnds").asText()).isEqualTo(leasedUntil);
    assertThat(n.get("claimableNow").asInt()).isZero();
    assertThat(doc.get("reason").asText()).isEqualTo(expected);
  }

  @Test
  void an_unknown_domain_and_a_task_that_became_claimable_are_said_so() {
    Cli.Result r = run("task", "claim", "--domain", "nowhere", "--holder", "w");
    assertThat(r.exit()).isEqualTo(ExitCodes.NOTHING);
    assertThat(r.out())
        .isEqualTo("nothing to claim in nowhere: no such domain (no task was ever filed in it)\n");
    // listing it says the same, where an empty list of a real domain says nothing more
    Cli.Result listed = run("task", "list", "--domain", "nowhere");
    assertThat(listed.exit()).isEqualTo(ExitCodes.OK);
    assertThat(listed.out())
        .endsWith("\n0 task(s) in nowhere: no such domain (no task was ever filed in it)\n");
    Cli.Result emptyList = run("task", "list", "--domain", "explain", "--status", "invalidated");
    assertThat(emptyList.out()).endsWith("\n0 invalidated task(s) in explain\n");

    Ledger ledger = Ledger.open(PG.dataSource());
    NothingToClaim none =
        NothingToClaim.explain(ledger, "explain", List.of(), Label.RESTRICTED, Instant.now());
    // restricted handling admits the confidential task: claimable now, as after a race
    assertThat(none.claimable()).isEqualTo(1);
    assertThat(none.line(Label.RESTRICTED)).endsWith("; 1 became claimable since (try again)");
  }

  @Test
  void task_list_shows_every_status_by_default_and_status_ignores_case() throws Exception {
    Cli.Result all = run("task", "list", "--domain", "explain", "--json");
    JsonNode doc = JSON.readTree(all.out());
    assertThat(doc.get("status").asText()).isEqualTo("all");
    List<String> listed = new ArrayList<>();
    doc.get("tasks").forEach(t -> listed.add(t.get("id").asText()));
    assertThat(listed).containsExactlyInAnyOrderElementsOf(ids);

    Cli.Result text = run("task", "list", "--domain", "explain");
    assertThat(text.out().lines().findFirst().orElseThrow()).startsWith("ID").contains("STATUS");
    assertThat(text.out()).endsWith("\n" + ids.size() + " task(s) in explain\n");

    Cli.Result claimed =
        run("task", "list", "--domain", "explain", "--status", "CLAIMED", "--json");
    assertThat(claimed.exit()).isZero();
    JsonNode c = JSON.readTree(claimed.out());
    assertThat(c.get("status").asText()).isEqualTo("claimed");
    assertThat(c.get("tasks")).hasSize(1);
    assertThat(c.get("tasks").get(0).get("title").asText()).isEqualTo("claimed by busy");
  }

  @Test
  void a_failing_task_command_with_json_prints_an_error_document_on_stdout() throws Exception {
    Cli.Result r = run("task", "admit", "t-none", "--json");
    assertThat(r.exit()).isEqualTo(ExitCodes.FAILED);
    assertThat(r.err()).isEqualTo("error: no task with id 't-none'\n");
    JsonNode doc = JSON.readTree(r.out());
    assertThat(doc.get("command").asText()).isEqualTo("ledger-app task admit");
    assertThat(doc.get("exitCode").asInt()).isEqualTo(ExitCodes.FAILED);
    assertThat(doc.get("ok").asBoolean()).isFalse();
    assertThat(doc.get("error").asText()).isEqualTo("no task with id 't-none'");

    Cli.Result whitespace = run("task", "file", "--domain", "explain", "--title", "   ", "--json");
    assertThat(whitespace.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(JSON.readTree(whitespace.out()).get("error").asText())
        .isEqualTo(
            "--title: must not be only whitespace or invisible characters (see 'ledger-app task"
                + " file --help')");
  }
}

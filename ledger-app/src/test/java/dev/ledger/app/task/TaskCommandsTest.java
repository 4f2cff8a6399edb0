package dev.ledger.app.task;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.DomainInfo;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.Task;
import dev.ledger.TaskSpec;
import dev.ledger.app.ExitCodes;
import dev.ledger.app.Main;
import dev.ledger.migrate.Dsn;
import dev.ledger.testing.PostgresExtension;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Every task command against real PostgreSQL: output, JSON and exit codes. */
class TaskCommandsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final ObjectMapper JSON = new ObjectMapper();

  record Run(int exit, String out, String err) {
    JsonNode json() throws Exception {
      return JSON.readTree(out);
    }
  }

  static Run run(String... args) {
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

  @Test
  void file_claim_heartbeat_complete_round_trip_with_json() throws Exception {
    Run filed =
        run(
            "task",
            "file",
            "--domain",
            "cli",
            "--title",
            "Reconcile batch 42",
            "--priority",
            "5",
            "--requires",
            "sql",
            "--label",
            "internal",
            "--origin",
            "tracker:ops",
            "--upstream-event",
            "evt-42",
            "--json");
    assertThat(filed.exit()).isZero();
    String id = filed.json().get("id").asText();
    assertThat(id).startsWith("t");

    Run again =
        run(
            "task",
            "file",
            "--domain",
            "cli",
            "--title",
            "Reconcile batch 42",
            "--origin",
            "tracker:ops",
            "--upstream-event",
            "evt-42");
    assertThat(again.out().trim()).isEqualTo(id);

    assertThat(run("task", "admit", id).out().trim()).isEqualTo(id + " admitted");

    Run none = run("task", "claim", "--domain", "cli", "--holder", "w1", "--json");
    assertThat(none.exit()).isEqualTo(ExitCodes.NOTHING);
    assertThat(none.json().get("id").isNull()).isTrue();

    Run claimed =
        run(
            "task",
            "claim",
            "--domain",
            "cli",
            "--holder",
            "w1",
            "--lease",
            "30s",
            "--can",
            "sql",
            "--handling",
            "internal",
            "--json");
    assertThat(claimed.exit()).isZero();
    assertThat(claimed.json().get("id").asText()).isEqualTo(id);
    String token = claimed.json().get("lease").asText();
    assertThat(claimed.json().get("task").get("status").asText()).isEqualTo("claimed");

    Run beat = run("task", "heartbeat", "--lease", token, "--extend", "2m", "--json");
    assertThat(beat.exit()).isZero();
    assertThat(beat.json().get("attempt").asInt()).isEqualTo(1);

    assertThat(run("task", "handoff", "--lease", token, "--text", "half").exit()).isZero();
    assertThat(run("task", "complete", "--lease", token, "--handoff", "merged").exit()).isZero();

    Run stale = run("task", "complete", "--lease", token);
    assertThat(stale.exit()).isEqualTo(ExitCodes.FAILED);
    assertThat(stale.err().trim())
        .startsWith("error: cannot complete task '" + id + "'")
        .doesNotContain("\tat ")
        .doesNotContain("password");

    Run shown = run("task", "show", id, "--json");
    assertThat(shown.json().get("id").asText()).isEqualTo(id);
    assertThat(shown.json().get("status").asText()).isEqualTo("completed");
    assertThat(shown.json().get("events"))
        .extracting(e -> e.get("kind").asText())
        .containsExactly(
            "created", "admitted", "claimed", "heartbeat", "handoff_left", "completed");

    Run text = run("task", "show", id);
    assertThat(text.out()).contains("status    completed").contains("handoff   merged");
    assertThat(text.out().lines()).allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(80));
  }

  @Test
  void file_takes_a_time_not_before_and_its_own_max_attempts() throws Exception {
    java.time.Instant before = java.time.Instant.now();
    Run later =
        run(
            "task",
            "file",
            "--domain",
            "cli-later",
            "--title",
            "in an hour",
            "--not-before",
            "1h",
            "--max-attempts",
            "3",
            "--json");
    assertThat(later.exit()).as(later.err()).isZero();
    dev.ledger.Ledger ledger = dev.ledger.Ledger.open(PG.dataSource());
    dev.ledger.Task t = ledger.get(later.json().get("id").asText());
    assertThat(t.spec().maxAttempts()).isEqualTo(3);
    assertThat(t.spec().notBefore())
        .isBetween(before.plusSeconds(3600), java.time.Instant.now().plusSeconds(3600));
    assertThat(t.status()).isEqualTo(dev.ledger.Status.PROPOSED);
    JsonNode shown = run("task", "show", t.id(), "--json").json();
    assertThat(shown.get("not_before").asText())
        .isEqualTo(dev.ledger.codegen.convert.Rfc3339.format(t.spec().notBefore()));

    Run at =
        run(
            "task",
            "file",
            "--domain",
            "cli-later",
            "--title",
            "at a time",
            "--not-before",
            "2030-01-02T03:04:05Z",
            "--json");
    assertThat(at.exit()).as(at.err()).isZero();
    assertThat(ledger.get(at.json().get("id").asText()).spec().notBefore())
        .isEqualTo(java.time.Instant.parse("2030-01-02T03:04:05Z"));

    Run bad = run("task", "file", "--domain", "cli-later", "--title", "x", "--not-before", "soon");
    assertThat(bad.exit()).isEqualTo(dev.ledger.app.ExitCodes.USAGE);
    assertThat(bad.err())
        .contains("--not-before")
        .contains("'soon' is neither an RFC 3339 time (2026-12-03T15:00:00Z) nor a duration");
    Run badTime =
        run(
            "task",
            "file",
            "--domain",
            "cli-later",
            "--title",
            "x",
            "--not-before",
            "2030-13-01T00:00:00Z");
    assertThat(badTime.exit()).isEqualTo(dev.ledger.app.ExitCodes.USAGE);
    assertThat(badTime.err()).contains("is not an RFC 3339 time");
    Run tooMany =
        run("task", "file", "--domain", "cli-later", "--title", "x", "--max-attempts", "5000");
    assertThat(tooMany.exit()).isEqualTo(dev.ledger.app.ExitCodes.USAGE);
    assertThat(tooMany.err()).contains("--max-attempts: must be 1 to 1000");
  }

  @Test
  void a_task_another_transaction_holds_is_task_busy_with_exit_6_after_the_lock_bound()
      throws Exception {
    String id = run("task", "file", "--domain", "held", "--title", "t").out().trim();
    try (java.sql.Connection other = PostgresExtension.connect(PG.databaseName());
        java.sql.Statement s = other.createStatement()) {
      other.setAutoCommit(false);
      s.execute(
          "SELECT 1 FROM "
              + dev.ledger.schema.DomainSchemas.quotedSchemaName("held")
              + ".tasks WHERE id = '"
              + id
              + "' FOR UPDATE");
      long start = System.nanoTime();
      Run busy = run("task", "invalidate", id, "--reason", "gone", "--json");
      long ms = (System.nanoTime() - start) / 1_000_000;
      assertThat(busy.exit()).isEqualTo(ExitCodes.LOCKED);
      assertThat(busy.json().get("error").asText())
          .isEqualTo(
              "invalidate: task busy: waited longer than the lock bound (5 s) for a lock another"
                  + " transaction holds on the task or its domain (SQLState 55P03); retry later");
      assertThat(ms).isBetween(4_500L, 30_000L);
      other.rollback();
    }
    assertThat(run("task", "invalidate", id, "--reason", "gone").exit()).isZero();
  }

  @Test
  void a_server_that_accepts_but_never_answers_is_exit_4_within_the_connect_bound()
      throws Exception {
    try (dev.ledger.testing.BlackholeProxy proxy =
        dev.ledger.testing.BlackholeProxy.to(PG.jdbcUrl())) {
      proxy.blackhole();
      String url = proxy.jdbcUrl(PG.jdbcUrl());
      CommandLine cli = Main.commandLine();
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      cli.setOut(new PrintWriter(out));
      cli.setErr(new PrintWriter(err));
      long start = System.nanoTime();
      int exit = cli.execute("task", "show", "t1", "--url", url);
      long ms = (System.nanoTime() - start) / 1_000_000;
      assertThat(exit).isEqualTo(ExitCodes.DATABASE);
      assertThat(err.toString()).startsWith("error: cannot connect to ");
      assertThat(ms).isBetween(9_000L, 20_000L);
    }
  }

  @Test
  void invalidate_rescore_post_list_and_domains() throws Exception {
    String a = run("task", "file", "--domain", "ops", "--title", "a").out().trim();
    String b =
        run("task", "file", "--domain", "ops", "--title", "b", "--priority", "1").out().trim();
    run("task", "admit", a);
    run("task", "admit", b);
    assertThat(run("task", "rescore", a, "--priority", "9", "--why", "urgent").exit()).isZero();
    Run listed = run("task", "list", "--domain", "ops", "--status", "admitted", "--json");
    assertThat(listed.json().get("tasks"))
        .extracting(t -> t.get("id").asText())
        .containsExactly(a, b);
    assertThat(run("task", "invalidate", b, "--reason", "duplicate", "--superseded-by", a).exit())
        .isZero();
    Run post = run("task", "post", a, "--to", "tracker:ops");
    assertThat(post.exit()).isEqualTo(ExitCodes.FAILED);
    assertThat(post.err()).contains("only a completed task");

    Run domains = run("domains", "--json");
    JsonNode ops = null;
    for (JsonNode d : domains.json().get("domains")) {
      if (d.get("domain").asText().equals("ops")) {
        ops = d;
      }
    }
    assertThat(ops).isNotNull();
    assertThat(ops.get("version").asText())
        .isEqualTo(dev.ledger.schema.LedgerMigrations.DOMAIN_VERSION);
    assertThat(ops.get("tasks").get("admitted").asLong()).isEqualTo(1);
    assertThat(ops.get("tasks").get("invalidated").asLong()).isEqualTo(1);
    Run text = run("domains");
    assertThat(text.out()).contains("ops").contains("schema ledger_ops_");
    // --json before the subcommand is the subcommand's own
    assertThat(run("--json", "domains").out()).isEqualTo(domains.out());
    assertThat(run("task", "--json", "list", "--domain", "ops").out())
        .isEqualTo(run("task", "list", "--domain", "ops", "--json").out())
        .startsWith("{\"domain\":\"ops\",\"status\":\"all\",\"tasks\":[{");
  }

  @Test
  void promote_promotions_scrub_and_replay() throws Exception {
    String[] promote = {
      "promote", "--domain", "docs", "--entry", "runbook/oncall", "--tier", "reviewed", "--by",
      "dan", "--author", "erin", "--why", "SECRET-WHY", "--digest", "d1", "--json"
    };
    assertThat(run(promote).json().get("recorded").asBoolean()).isTrue();
    assertThat(run(promote).json().get("recorded").asBoolean()).isFalse();
    String t =
        run("task", "file", "--domain", "docs", "--title", "SECRET-TITLE", "--origin", "entry:x")
            .out()
            .trim();
    Run scrub =
        run(
            "scrub",
            "--domain",
            "docs",
            "--entry",
            "runbook/oncall",
            "--origin",
            "entry:x",
            "--json");
    assertThat(scrub.json().get("promotions").asInt()).isEqualTo(1);
    assertThat(scrub.json().get("tasks").asInt()).isEqualTo(1);
    Run promos = run("promotions", "--domain", "docs", "--entry", "runbook/oncall", "--json");
    assertThat(promos.json().get("promotions").get(0).get("why_erased").asBoolean()).isTrue();
    assertThat(promos.out()).doesNotContain("SECRET-WHY");
    assertThat(run("task", "show", t).out()).doesNotContain("SECRET-TITLE");
    Run replay = run("replay", "--json");
    assertThat(replay.exit()).isZero();
    assertThat(replay.json().get("events").asLong()).isPositive();
  }

  @Test
  void dead_letters_lists_each_with_attempts_and_last_error_and_refile_files_it_again_once()
      throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    String id = ledger.file(TaskSpec.builder("mail", "Send the report").maxAttempts(2).build());
    ledger.admit(id);
    Lease first =
        ledger
            .claimNext("mail", "w1", Duration.ofMinutes(1), List.of(), Label.PUBLIC)
            .orElseThrow();
    String retry = ledger.fail(first, "exit 3: smtp refused", 2, Duration.ZERO).retryId();
    assertThat(ledger.admitDue("mail", 10)).containsExactly(retry);
    Lease second =
        ledger
            .claimNext("mail", "w1", Duration.ofMinutes(1), List.of(), Label.PUBLIC)
            .orElseThrow();
    assertThat(second.taskId()).isEqualTo(retry);
    String error = "exit 3: smtp refused by mx1.example.org\nafter three tries";
    assertThat(ledger.fail(second, error, 2, Duration.ZERO).deadLetter()).isTrue();

    Run text = run("task", "dead-letters", "--domain", "mail");
    assertThat(text.exit()).isZero();
    assertThat(text.out())
        .isEqualTo(
            String.format("%-26s %-5s %-20s %s%n", "ID", "ATT", "TITLE", "LAST ERROR")
                + String.format(
                    "%-26s %-5s %-20s %s%n",
                    retry, "2/2", "Send the report", "exit 3: smtp refused by m…")
                + "1 dead letter(s) in mail"
                + System.lineSeparator());
    assertThat(text.out().lines()).allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(80));

    Run json = run("task", "dead-letters", "--domain", "mail", "--json");
    assertThat(json.exit()).isZero();
    assertThat(json.out().strip()).doesNotContain("\n");
    assertThat(json.json().get("domain").asText()).isEqualTo("mail");
    assertThat(json.json().get("dead_letters")).hasSize(1);
    JsonNode dead = json.json().get("dead_letters").get(0);
    assertThat(dead.get("id").asText()).isEqualTo(retry);
    assertThat(dead.get("status").asText()).isEqualTo("invalidated");
    assertThat(dead.get("title").asText()).isEqualTo("Send the report");
    assertThat(dead.get("attempt").asInt()).isEqualTo(2);
    assertThat(dead.get("max_attempts").asInt()).isEqualTo(2);
    assertThat(dead.get("last_error").asText()).isEqualTo(error);
    assertThat(dead.get("reason").asText())
        .startsWith("dead letter: attempt 2 of 2 failed at ")
        .endsWith(": " + error);

    Run none = run("task", "dead-letters", "--domain", "nowhere", "--json");
    assertThat(none.exit()).isZero();
    assertThat(none.out())
        .isEqualTo("{\"domain\":\"nowhere\",\"dead_letters\":[]}" + System.lineSeparator());

    Run refiled = run("task", "refile", retry);
    assertThat(refiled.exit()).as(refiled.err()).isZero();
    String again = refiled.out().strip();
    assertThat(again).startsWith("t").isNotEqualTo(retry).isNotEqualTo(id);
    assertThat(refiled.out()).isEqualTo(again + System.lineSeparator());
    Task refiledTask = ledger.get(again);
    assertThat(refiledTask.status()).isEqualTo(dev.ledger.Status.ADMITTED);
    assertThat(refiledTask.spec().title()).isEqualTo("Send the report");
    assertThat(refiledTask.spec().upstreamEvent()).isEqualTo("refiled:" + retry);

    Run twice = run("task", "refile", retry, "--json");
    assertThat(twice.exit()).isZero();
    assertThat(twice.out())
        .isEqualTo(
            "{\"id\":\"" + again + "\",\"refiled\":\"" + retry + "\"}" + System.lineSeparator());
    assertThat(ledger.list("mail", dev.ledger.Status.ADMITTED))
        .extracting(Task::id)
        .containsExactly(again);
    // a re-filed dead letter leaves the list (its successor is admitted, not dead)
    assertThat(run("task", "dead-letters", "--domain", "mail").out())
        .endsWith("0 dead letter(s) in mail" + System.lineSeparator());

    Run notDead = run("task", "refile", again, "--json");
    assertThat(notDead.exit()).isEqualTo(ExitCodes.FAILED);
    assertThat(notDead.err()).hasLineCount(1).contains("only a dead letter can be re-filed");
    assertThat(notDead.json().get("exitCode").asInt()).isEqualTo(ExitCodes.FAILED);
    assertThat(notDead.json().get("command").asText()).isEqualTo("ledger-app task refile");
    Run unknown = run("task", "refile", "t-none");
    assertThat(unknown.exit()).isEqualTo(ExitCodes.FAILED);
    assertThat(unknown.err()).isEqualTo("error: no task with id 't-none'" + System.lineSeparator());
  }

  @Test
  void show_of_a_claimed_task_puts_holder_and_lease_end_on_lines_of_their_own_uncut()
      throws Exception {
    String id = run("task", "file", "--domain", "show", "--title", "t").out().strip();
    run("task", "admit", id);
    String holder = "worker-on-ip-10-0-0-17.eu-west-1.compute.internal-pid-4242-a1b2c3";
    Run claimed = run("task", "claim", "--domain", "show", "--holder", holder, "--json");
    String until = claimed.json().get("until").asText();
    Run shown = run("task", "show", id);
    assertThat(shown.exit()).isZero();
    assertThat(shown.out().lines())
        .containsSubsequence(
            "status    claimed (attempt 1)", "holder    " + holder, "until     " + until);
    assertThat(shown.out()).doesNotContain("…");
    assertThat(shown.out().lines()).allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(80));
  }

  @Test
  void domains_pads_names_by_display_width_so_cjk_and_emoji_names_line_up() {
    for (String domain : List.of("支払い", "📧mail", "wide-ops")) {
      assertThat(run("task", "file", "--domain", domain, "--title", "t").exit()).isZero();
    }
    String v = dev.ledger.schema.LedgerMigrations.DOMAIN_VERSION;
    String counts = String.format(" %-3s %6d %6d %6d %6d %6d", v, 1, 0, 0, 0, 0);
    Run text = run("domains");
    assertThat(text.out().lines())
        .contains(
            "支払い" + " ".repeat(22 - 6) + counts,
            "📧mail" + " ".repeat(22 - 6) + counts,
            "wide-ops" + " ".repeat(22 - 8) + counts);
    assertThat(dev.ledger.app.Output.width("支払い📧mail")).isEqualTo(12);
    assertThat(dev.ledger.app.Output.fit("支払い支払い支払い支払い", 9)).isEqualTo("支払い支…");
  }

  @Test
  void work_names_the_option_whose_value_the_pool_refuses() {
    Run poll = run("work", "--domain", "w", "--command", "true", "--poll", "0s");
    assertThat(poll.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(poll.err())
        .isEqualTo(
            "error: --poll: must be 10ms to 1 hour (see 'ledger-app work --help')"
                + System.lineSeparator());
    Run lease = run("work", "--domain", "w", "--command", "true", "--lease", "100ms");
    assertThat(lease.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(lease.err())
        .isEqualTo(
            "error: --lease: must be at least 300ms, was 100ms (see 'ledger-app work --help')"
                + System.lineSeparator());
  }

  @Test
  void bad_input_is_one_line_with_a_usage_exit_code() {
    Run empty = run("task", "file", "--domain", "x", "--title", "");
    assertThat(empty.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(empty.err().trim())
        .isEqualTo("error: --title: must not be empty (see 'ledger-app task file --help')");
    Run lease = run("task", "claim", "--domain", "x", "--holder", "w", "--lease", "0s");
    assertThat(lease.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(lease.err().trim())
        .isEqualTo("error: --lease: must be longer than zero (see 'ledger-app task claim --help')");
    Run badDuration = run("task", "claim", "--domain", "x", "--holder", "w", "--lease", "soon");
    assertThat(badDuration.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(badDuration.err()).contains("use e.g. 500ms, 30s, 5m");
    Run token = run("task", "complete", "--lease", "not-a-token");
    assertThat(token.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(token.err())
        .isEqualTo(
            "error: Invalid value for option '--lease': not a lease token (use the token a claim"
                + " printed or returned) (see 'ledger-app task complete --help')\n");
    // the README's claim, piped into a variable, leaves it empty when nothing was claimed
    Run noToken = run("task", "complete", "--lease", "");
    assertThat(noToken.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(noToken.err())
        .isEqualTo(
            "error: Invalid value for option '--lease': is empty (use the token a claim printed;"
                + " did the claim print one?) (see 'ledger-app task complete --help')\n");
    Run unknown = run("task", "admit", "t-none");
    assertThat(unknown.exit()).isEqualTo(ExitCodes.FAILED);
    assertThat(unknown.err().trim()).isEqualTo("error: no task with id 't-none'");
    Run verbose = run("task", "admit", "t-none", "--verbose");
    assertThat(verbose.err()).contains("TaskNotFoundException").contains("\tat ");
  }

  @Test
  void every_command_has_help_with_an_example() {
    for (String[] cmd :
        List.of(
            new String[] {"task", "file"},
            new String[] {"task", "claim"},
            new String[] {"task", "complete"},
            new String[] {"task", "show"},
            new String[] {"task", "dead-letters"},
            new String[] {"task", "refile"},
            new String[] {"domains"},
            new String[] {"promote"},
            new String[] {"scrub"},
            new String[] {"replay"},
            new String[] {"demo"})) {
      CommandLine cli = Main.commandLine();
      StringWriter out = new StringWriter();
      cli.setOut(new PrintWriter(out));
      List<String> args = new ArrayList<>(List.of(cmd));
      args.add("--help");
      assertThat(cli.execute(args.toArray(String[]::new))).isZero();
      assertThat(out.toString()).contains("Example:");
      assertThat(out.toString().lines())
          .allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(80));
    }
  }

  // slow (an embedded server of its own): run on purpose, -Dledger.test.groups=slow
  @Tag("slow")
  @Test
  void demo_honours_ledger_url_like_every_command(@TempDir Path home) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb =
        new ProcessBuilder(
                java,
                "-Djava.io.tmpdir=" + home, // where a scratch embedded server would go
                "-Dlogback.configurationFile="
                    + Path.of("src/main/resources/logback.xml").toAbsolutePath(),
                "-cp",
                System.getProperty("java.class.path"),
                "dev.ledger.app.Main",
                "demo")
            .redirectErrorStream(true);
    pb.environment().put("LEDGER_URL", PG.jdbcUrl());
    pb.environment().put("LEDGER_HOME", home.toString());
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    Matcher suffix =
        Pattern.compile(
                "(?m)^==> running in new domains \\(suffix (-[0-9a-f]{6})\\) of "
                    + Pattern.quote(Dsn.parse(PG.jdbcUrl()).describe())
                    + "$")
            .matcher(out);
    assertThat(suffix.find()).as(out).isTrue();
    assertThat(out).doesNotContain("embedded PostgreSQL").contains("projection identical");
    List<String> domains =
        Ledger.open(PG.dataSource()).describeDomains().stream().map(DomainInfo::domain).toList();
    assertThat(domains)
        .contains("payments" + suffix.group(1), "docs" + suffix.group(1), "ops" + suffix.group(1));
    try (var files = Files.list(home)) {
      assertThat(files.toList()).as("no embedded server was started").isEmpty();
    }
  }

  @Test
  void demo_runs_end_to_end_on_a_server() {
    CommandLine cli = Main.commandLine();
    StringWriter out = new StringWriter();
    cli.setOut(new PrintWriter(out));
    assertThat(cli.execute("demo", "--url", PG.jdbcUrl())).isZero();
    assertThat(out.toString())
        .contains("filed and admitted 36 tasks")
        .contains("completed 12, still admitted 0")
        .contains("projection identical to the live one")
        .endsWith(
            "==> done; the tour in docs/cli.md runs the same steps one command at a time"
                + System.lineSeparator());
  }

  @Test
  void demo_with_json_prints_one_document_with_its_lines() throws Exception {
    Run demo = run("demo", "--json");
    assertThat(demo.exit()).isZero();
    assertThat(demo.out().lines()).hasSize(1);
    JsonNode doc = demo.json();
    assertThat(doc.get("ok").asBoolean()).isTrue();
    assertThat(doc.get("exitCode").asInt()).isZero();
    List<String> lines = new ArrayList<>();
    doc.get("lines").forEach(l -> lines.add(l.asText()));
    assertThat(lines.get(0)).startsWith("==> running in new domains (suffix -");
    assertThat(lines).contains("  filed and admitted 36 tasks");
    assertThat(lines.get(lines.size() - 1))
        .isEqualTo("==> done; the tour in docs/cli.md runs the same steps one command at a time");
  }
}

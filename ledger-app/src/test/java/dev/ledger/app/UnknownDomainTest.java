package dev.ledger.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A misspelt domain never makes a domain, a schedule, a retention or a feed checkpoint by accident:
 * {@code domain pause|resume|limit}, {@code schedule add}, {@code retention set} refuse an unknown
 * domain unless {@code --create} is given; {@code feed} and {@code retention show|clear|run} refuse
 * it outright. Exit 2, one line naming what the user typed, one JSON document with {@code --json},
 * nothing written.
 */
class UnknownDomainTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final ObjectMapper JSON = new ObjectMapper();

  private static Ledger ledger;

  @BeforeAll
  static void aKnownDomain() {
    ledger = Ledger.open(PG.dataSource());
    ledger.fileAndAdmit(TaskSpec.builder("payments", "t").build());
  }

  private static Cli.Result run(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.add("--url");
    all.add(PG.jdbcUrl());
    return Cli.run(all.toArray(String[]::new));
  }

  private static void refused(String option, String domain, String remedy, String... args)
      throws Exception {
    String line = String.join(" ", args);
    Cli.Result text = run(args);
    assertThat(text.exit()).as(line + ": " + text.all()).isEqualTo(ExitCodes.USAGE);
    assertThat(text.out()).as(line).isEmpty();
    String error =
        option
            + ": unknown domain '"
            + domain
            + "': no task was ever filed there and no schema provisioned. Check the spelling, or "
            + remedy;
    assertThat(text.err()).as(line).startsWith("error: " + error + " (see 'ledger-app ");
    List<String> withJson = new ArrayList<>(List.of(args));
    withJson.add("--json");
    Cli.Result json = run(withJson.toArray(String[]::new));
    assertThat(json.exit()).as(line + " --json").isEqualTo(ExitCodes.USAGE);
    JsonNode doc = JSON.readTree(json.out());
    assertThat(doc.get("ok").asBoolean()).isFalse();
    assertThat(doc.get("error").asText()).startsWith(error);
  }

  @Test
  void domain_controls_refuse_an_unknown_domain_unless_create_is_given() throws Exception {
    String create = "give --create to make it";
    refused("DOMAIN", "paymnets", create, "domain", "pause", "paymnets");
    refused("DOMAIN", "paymnets", create, "domain", "resume", "paymnets");
    refused("DOMAIN", "paymnets", create, "domain", "limit", "paymnets", "--concurrency", "2");
    assertThat(ledger.domains()).doesNotContain("paymnets");

    assertThat(run("domain", "pause", "payments").out()).isEqualTo("payments: paused\n");
    Cli.Result made = run("domain", "pause", "refunds", "--create");
    assertThat(made.exit()).as(made.all()).isZero();
    assertThat(made.out()).isEqualTo("refunds: paused\n");
    assertThat(ledger.domains()).contains("refunds").doesNotContain("paymnets");
    assertThat(run("domain", "resume", "payments").exit()).isZero();
  }

  @Test
  void schedule_add_and_retention_set_refuse_an_unknown_domain_unless_create_is_given()
      throws Exception {
    String create = "give --create to make it";
    refused(
        "--domain",
        "paymnets",
        create,
        "schedule",
        "add",
        "nightly",
        "--domain",
        "paymnets",
        "--title",
        "t",
        "--every",
        "1h");
    assertThat(ledger.schedules().list()).isEmpty();
    refused(
        "--domain", "paymnets", create, "retention", "set", "--domain", "paymnets", "--keep", "7d");
    assertThat(ledger.retention().get("paymnets")).isEmpty();

    Cli.Result schedule =
        run(
            "schedule",
            "add",
            "later",
            "--domain",
            "later",
            "--title",
            "t",
            "--every",
            "1h",
            "--create");
    assertThat(schedule.exit()).as(schedule.all()).isZero();
    assertThat(ledger.schedules().get("later")).isPresent();
    ledger.schedules().remove("later");

    Cli.Result keep = run("retention", "set", "--domain", "later", "--keep", "7d", "--create");
    assertThat(keep.exit()).as(keep.all()).isZero();
    assertThat(keep.out()).isEqualTo("domain later keeps terminal tasks for 7d\n");
    // a domain with a retention but no task yet is known to the retention commands
    assertThat(run("retention", "show", "--domain", "later").exit()).isZero();
    assertThat(run("retention", "set", "--domain", "later", "--keep", "1d").exit()).isZero();
    assertThat(run("retention", "clear", "--domain", "later").out()).isEqualTo("cleared\n");
  }

  @Test
  void retention_show_clear_and_run_refuse_an_unknown_domain() throws Exception {
    String provision = "provision it first: ledger-app migrate --provision nowhere";
    refused("--domain", "nowhere", provision, "retention", "show", "--domain", "nowhere");
    refused("--domain", "nowhere", provision, "retention", "clear", "--domain", "nowhere");
    refused("--domain", "nowhere", provision, "retention", "run", "--domain", "nowhere");
    assertThat(ledger.retention().get("nowhere")).isEmpty();
    Cli.Result known = run("retention", "show", "--domain", "payments");
    assertThat(known.exit()).isZero();
    assertThat(known.out()).endsWith("0 domain(s)\n");
  }

  @Test
  void feed_refuses_an_unknown_domain_and_writes_no_checkpoint() throws Exception {
    String provision = "provision it first: ledger-app migrate --provision paymnets";
    refused("--domain", "paymnets", provision, "feed", "--domain", "paymnets", "--consumer", "c");
    refused(
        "--domain",
        "paymnets",
        provision,
        "feed",
        "--domain",
        "payments",
        "--domain",
        "paymnets",
        "--consumer",
        "c",
        "--from-start");
    assertThat(consumers()).isZero();

    Cli.Result known = run("feed", "--domain", "payments", "--consumer", "c", "--from-start");
    assertThat(known.exit()).as(known.all()).isZero();
    assertThat(known.out()).contains("\tcreated\t").contains("\tadmitted\t");
    assertThat(consumers()).isEqualTo(1);
  }

  @Test
  void scrub_refuses_an_unknown_domain_rather_than_report_an_erasure_it_did_not_make()
      throws Exception {
    String provision = "provision it first: ledger-app migrate --provision paymnets";
    refused(
        "--domain",
        "paymnets",
        provision,
        "scrub",
        "--domain",
        "paymnets",
        "--entry",
        "runbook",
        "--origin",
        "entry:runbook");
    Cli.Result known =
        run("scrub", "--domain", "payments", "--entry", "runbook", "--origin", "entry:runbook");
    assertThat(known.exit()).as(known.all()).isZero();
    assertThat(known.out()).isEqualTo("scrubbed 0 promotion(s) and 0 task(s)\n");
  }

  private static long consumers() throws Exception {
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM ledger_feed_consumers")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}

package dev.ledger.app.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.Ledger;
import dev.ledger.app.Cli;
import dev.ledger.app.ExitCodes;
import dev.ledger.schedule.Schedules;
import dev.ledger.testing.PostgresExtension;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code ledger-app schedule add|list|pause|resume|remove|file-due}, text and JSON, errors too. */
class ScheduleCommandsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final ObjectMapper JSON = new ObjectMapper();

  private static Cli.Result run(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.add("--url");
    all.add(PG.jdbcUrl());
    return Cli.run(all.toArray(String[]::new));
  }

  private static JsonNode json(Cli.Result r) throws Exception {
    return JSON.readTree(r.out());
  }

  @BeforeEach
  void noSchedules() {
    var schedules = Ledger.open(PG.dataSource()).schedules();
    schedules.list().forEach(s -> schedules.remove(s.name()));
  }

  @Test
  void add_list_pause_resume_remove_round_trip() throws Exception {
    Cli.Result added =
        run(
            "schedule",
            "add",
            "nightly",
            "--domain",
            "reports",
            "--cron",
            "30 2 * * *",
            "--zone",
            "America/New_York",
            "--title",
            "Build the report",
            "--requires",
            "sql",
            "--label",
            "internal",
            "--priority",
            "4",
            "--max-attempts",
            "3",
            "--catch-up",
            "5",
            "--create",
            "--json");
    assertThat(added.exit()).as(added.all()).isEqualTo(ExitCodes.OK);
    JsonNode doc = json(added);
    assertThat(doc.get("name").asText()).isEqualTo("nightly");
    assertThat(doc.get("domain").asText()).isEqualTo("reports");
    assertThat(doc.get("cron").asText()).isEqualTo("30 2 * * *");
    assertThat(doc.get("zone").asText()).isEqualTo("America/New_York");
    assertThat(doc.get("interval_seconds").isNull()).isTrue();
    assertThat(doc.get("requirements").toString()).isEqualTo("[\"sql\"]");
    assertThat(doc.get("label").asText()).isEqualTo("internal");
    assertThat(doc.get("priority").asLong()).isEqualTo(4);
    assertThat(doc.get("max_attempts").asInt()).isEqualTo(3);
    assertThat(doc.get("catch_up").asInt()).isEqualTo(5);
    assertThat(doc.get("paused").asBoolean()).isFalse();
    assertThat(doc.get("state").asText()).isEqualTo("running");
    assertThat(doc.get("origin").asText()).isEqualTo("schedule:nightly");
    assertThat(doc.get("last_tick").isNull()).isTrue();
    Instant next = Instant.parse(doc.get("next_tick").asText());
    assertThat(next).isAfter(Instant.now()).isBefore(Instant.now().plus(Duration.ofHours(26)));

    Cli.Result hourly =
        run(
            "schedule",
            "add",
            "hourly",
            "--domain",
            "ops",
            "--every",
            "1h",
            "--title",
            "Check",
            "--create");
    assertThat(hourly.exit()).as(hourly.all()).isEqualTo(ExitCodes.OK);
    assertThat(hourly.out())
        .startsWith("added schedule hourly (every 1h, domain ops); next tick 20");

    Cli.Result list = run("schedule", "list");
    assertThat(list.exit()).isEqualTo(ExitCodes.OK);
    List<String> lines = list.out().lines().toList();
    assertThat(lines.get(0)).startsWith("NAME").contains("STATE", "NEXT", "LAST", "DOMAIN");
    assertThat(lines.get(1)).startsWith("hourly ").contains(" running ").endsWith(" ops");
    assertThat(lines.get(2)).isEqualTo("  every 1h");
    assertThat(lines.get(3))
        .startsWith("nightly ")
        .contains(Schedules.upstreamEvent(next))
        .contains(" - ") // no last tick yet
        .endsWith(" reports");
    assertThat(lines.get(4)).isEqualTo("  cron '30 2 * * *' in America/New_York");
    assertThat(lines.get(5)).isEqualTo("2 schedule(s)");

    Cli.Result paused = run("schedule", "pause", "nightly", "--json");
    assertThat(json(paused).get("paused").asBoolean()).isTrue();
    // text and JSON agree: a paused schedule has no next tick (resuming starts after the resume)
    assertThat(json(paused).get("state").asText()).isEqualTo("paused");
    assertThat(json(paused).get("next_tick").isNull()).isTrue();
    JsonNode pausedInList = json(run("schedule", "list", "--json")).get("schedules").get(1);
    assertThat(pausedInList.get("state").asText()).isEqualTo("paused");
    assertThat(pausedInList.get("next_tick").isNull()).isTrue();
    List<String> pausedLines = run("schedule", "list").out().lines().toList();
    assertThat(pausedLines.get(3)).matches("nightly +paused +paused +- +reports");
    Cli.Result resumed = run("schedule", "resume", "nightly");
    assertThat(resumed.out())
        .startsWith("resumed schedule nightly (cron '30 2 * * *' in America/New_York");
    JsonNode all = json(run("schedule", "list", "--json")).get("schedules");
    assertThat(all).hasSize(2);
    assertThat(all.get(1).get("paused").asBoolean()).isFalse();

    Cli.Result removed = run("schedule", "remove", "nightly", "--json");
    assertThat(json(removed).get("removed").asText()).isEqualTo("nightly");
    assertThat(run("schedule", "remove", "hourly").out()).isEqualTo("removed schedule hourly\n");
    assertThat(run("schedule", "list").out()).endsWith("0 schedule(s)\n");
  }

  private static void assertError(int exit, String error, String... args) throws Exception {
    List<String> withJson = new ArrayList<>(List.of(args));
    withJson.add("--json");
    Cli.Result r = run(withJson.toArray(String[]::new));
    assertThat(r.exit()).as(r.all()).isEqualTo(exit);
    JsonNode doc = json(r);
    assertThat(doc.get("exitCode").asInt()).isEqualTo(exit);
    assertThat(doc.get("error").asText()).startsWith(error);
    Cli.Result text = run(args);
    assertThat(text.exit()).isEqualTo(exit);
    assertThat(text.err()).startsWith("error: " + error);
  }

  @Test
  void bad_input_is_a_usage_error_naming_the_field_and_an_unknown_name_a_failure()
      throws Exception {
    String[] base = {"schedule", "add", "bad", "--domain", "d", "--title", "t", "--create"};
    assertError(ExitCodes.USAGE, "--cron: ", with(base, "--cron", "61 * * * *"));
    assertError(ExitCodes.USAGE, "--cron: has 3 fields", with(base, "--cron", "* * *"));
    assertError(
        ExitCodes.USAGE,
        "--zone: unknown time zone",
        with(base, "--cron", "* * * * *", "--zone", "Mars/Base"));
    assertError(
        ExitCodes.USAGE,
        "--every: must be a whole number of seconds",
        with(base, "--every", "1500ms"));
    assertError(ExitCodes.USAGE, "--cron/--every: give --cron or --every", base);
    assertError(
        ExitCodes.USAGE,
        "--cron/--every: give --cron or --every",
        with(base, "--every", "1m", "--cron", "* * * * *"));
    assertError(
        ExitCodes.USAGE, "--catch-up: must be 1", with(base, "--every", "1m", "--catch-up", "0"));
    assertError(
        ExitCodes.USAGE,
        "--zone: only with --cron",
        with(base, "--every", "1m", "--zone", "Europe/Berlin"));
    assertError(
        ExitCodes.USAGE,
        "--zone: '+02:00' is a fixed offset, which ignores daylight saving time; give a region id",
        with(base, "--cron", "0 9 * * *", "--zone", "+02:00"));
    assertError(
        ExitCodes.USAGE,
        "--zone: 'UTC+2' is a fixed offset",
        with(base, "--cron", "0 9 * * *", "--zone", "UTC+2"));
    assertError(
        ExitCodes.USAGE,
        "--cron: '0 0 30 2 *' never matches: no time after now fits it",
        with(base, "--cron", "0 0 30 2 *"));
    assertThat(run("schedule", "list", "--json").out()).isEqualTo("{\"schedules\":[]}\n");
    assertError(
        ExitCodes.USAGE,
        "NAME: must be letters",
        "schedule",
        "add",
        "a b",
        "--domain",
        "d",
        "--title",
        "t",
        "--every",
        "1m",
        "--create");
    assertThat(run(with(base, "--every", "1m")).exit()).isEqualTo(ExitCodes.OK);
    assertError(
        ExitCodes.USAGE,
        "NAME: a schedule named 'bad' exists already",
        with(base, "--every", "1m"));
    assertError(ExitCodes.FAILED, "no schedule named 'none'", "schedule", "pause", "none");
    assertError(ExitCodes.FAILED, "no schedule named 'none'", "schedule", "resume", "none");
    assertError(ExitCodes.FAILED, "no schedule named 'none'", "schedule", "remove", "none");
    assertThat(run("schedule", "remove", "bad").exit()).isEqualTo(ExitCodes.OK);
  }

  @Test
  void a_region_zone_utc_and_a_fixed_offset_region_are_accepted() throws Exception {
    for (String zone : List.of("Europe/Berlin", "UTC", "Etc/GMT-2")) {
      Cli.Result r =
          run(
              "schedule",
              "add",
              "z",
              "--domain",
              "zones",
              "--create",
              "--title",
              "t",
              "--cron",
              "0 9 * * *",
              "--zone",
              zone,
              "--json");
      assertThat(r.exit()).as(zone + ": " + r.all()).isEqualTo(ExitCodes.OK);
      assertThat(json(r).get("zone").asText()).isEqualTo(zone);
      assertThat(run("schedule", "remove", "z").exit()).isZero();
    }
  }

  private static String[] with(String[] base, String... more) {
    List<String> all = new ArrayList<>(List.of(base));
    all.addAll(List.of(more));
    return all.toArray(String[]::new);
  }

  @Test
  void file_due_files_the_due_ticks_once() throws Exception {
    assertThat(
            run(
                    "schedule",
                    "add",
                    "tick",
                    "--domain",
                    "ticks",
                    "--every",
                    "1s",
                    "--title",
                    "T",
                    "--catch-up",
                    "1000",
                    "--create")
                .exit())
        .isEqualTo(ExitCodes.OK);
    Thread.sleep(2100); // at least two ticks are due
    JsonNode filed = json(run("schedule", "file-due", "--json"));
    assertThat(filed.get("filed").asInt()).isGreaterThanOrEqualTo(2);
    Ledger ledger = Ledger.open(PG.dataSource());
    var tasks = ledger.withOrigin("ticks", "schedule:tick");
    assertThat(tasks).hasSize(filed.get("filed").asInt());
    JsonNode listed = json(run("schedule", "list", "--json")).get("schedules").get(0);
    String last =
        tasks.stream().map(t -> t.spec().upstreamEvent()).max(String::compareTo).orElseThrow();
    assertThat(Schedules.upstreamEvent(Instant.parse(listed.get("last_tick").asText())))
        .isEqualTo(last);
    assertThat(run("schedule", "file-due").out()).matches("filed [0-9]+ tick\\(s\\)\n");
  }
}

package dev.ledger.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.Label;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import dev.ledger.schedule.Schedule;
import dev.ledger.schedule.ScheduleSpec;
import dev.ledger.schedule.Timing;
import dev.ledger.testing.PostgresExtension;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Queue controls, retention and schedules in the console, on real PostgreSQL: domain {@code
 * payments} paused with a concurrency limit of 3, a rate limit of 10 claims per second, 30 days of
 * retention and one task claimed; domain {@code cards} with nothing set; a running cron schedule
 * and a paused interval schedule.
 */
class ConsoleSettingsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final String PASSWORD = "correct horse battery";
  static final ObjectMapper JSON = new ObjectMapper();

  static Ledger ledger;
  static ConsoleServer server;
  static ConsoleServer readOnlyServer;
  static Schedule nightly;
  static Schedule hourly;

  @BeforeAll
  static void start() {
    ledger = Ledger.open(PG.dataSource());
    String claimed = ledger.fileAndAdmit(TaskSpec.builder("payments", "Reconcile").build());
    ledger.fileAndAdmit(TaskSpec.builder("payments", "Refund").build());
    ledger.fileAndAdmit(TaskSpec.builder("cards", "Charge").build());
    ledger.claim(claimed, "worker-1", Duration.ofMinutes(10), List.of(), Label.INTERNAL);
    ledger.pause("payments");
    ledger.setLimits("payments", 3, 10, Duration.ofSeconds(1));
    ledger.retention().set("payments", Duration.ofDays(30));
    ledger
        .schedules()
        .add(
            ScheduleSpec.builder(
                    "nightly-close",
                    "payments",
                    Timing.cron("30 2 * * *", "Europe/Berlin"),
                    "Close the day")
                .build());
    ledger
        .schedules()
        .add(
            ScheduleSpec.builder(
                    "card-sweep", "cards", Timing.every(Duration.ofHours(1)), "Sweep cards")
                .build());
    ledger.schedules().pause("card-sweep");
    ledger.fileAndAdmit(TaskSpec.builder("ops", "Rotate keys").build());
    ledger
        .schedules()
        .add(
            ScheduleSpec.builder("ops-tick", "ops", Timing.every(Duration.ofHours(2)), "Tick")
                .build());
    // a schedule whose domain has no task yet (a fresh user's first schedule)
    ledger
        .schedules()
        .add(
            ScheduleSpec.builder("first-tick", "fresh", Timing.every(Duration.ofHours(3)), "First")
                .build());
    nightly = ledger.schedules().get("nightly-close").orElseThrow();
    hourly = ledger.schedules().get("card-sweep").orElseThrow();
    server =
        ConsoleServer.start(
            Console.builder(ledger, PG.dataSource()).password(PASSWORD.toCharArray()).build(),
            new InetSocketAddress("127.0.0.1", 0));
    readOnlyServer =
        ConsoleServer.start(
            Console.builder(ledger, PG.dataSource())
                .password(PASSWORD.toCharArray())
                .readOnly(true)
                .build(),
            new InetSocketAddress("127.0.0.1", 0));
  }

  @AfterAll
  static void stop() {
    server.close();
    readOnlyServer.close();
  }

  static Http http() {
    return new Http("http://127.0.0.1:" + server.address().getPort());
  }

  static JsonNode api(String path) throws Exception {
    HttpResponse<String> r = http().getBasic(path, "admin", PASSWORD);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }

  static JsonNode domain(JsonNode domains, String name) {
    for (JsonNode d : domains) {
      if (d.get("domain").asText().equals(name)) {
        return d;
      }
    }
    throw new AssertionError("no domain " + name + " in " + domains);
  }

  @Test
  void the_domains_api_gives_each_domains_controls_and_retention() throws Exception {
    JsonNode domains = api("/api/domains");
    JsonNode payments = domain(domains, "payments");
    JsonNode c = payments.get("controls");
    assertThat(c.get("paused").asBoolean()).isTrue();
    assertThat(c.get("maxClaimed").asInt()).isEqualTo(3);
    assertThat(c.get("rateClaims").asInt()).isEqualTo(10);
    assertThat(c.get("ratePeriodMillis").asLong()).isEqualTo(1000);
    assertThat(c.get("rate").asText()).isEqualTo("10/1s");
    assertThat(c.get("claimedNow").asLong()).isEqualTo(1);
    JsonNode r = payments.get("retention");
    assertThat(r.get("keepSeconds").asLong()).isEqualTo(30L * 86_400);
    assertThat(r.get("keep").asText()).isEqualTo("30d");
    assertThat(r.get("tasksRemoved").asLong()).isZero();
    assertThat(r.get("eventsRemoved").asLong()).isZero();
    assertThat(r.get("lastPurgeAt").isNull()).isTrue();

    JsonNode cards = domain(domains, "cards");
    assertThat(cards.get("controls").get("paused").asBoolean()).isFalse();
    assertThat(cards.get("controls").get("maxClaimed").isNull()).isTrue();
    assertThat(cards.get("controls").get("rate").isNull()).isTrue();
    assertThat(cards.get("controls").get("claimedNow").asLong()).isZero();
    assertThat(cards.get("retention").isNull()).isTrue();
  }

  @Test
  void the_overview_badges_a_paused_limited_retained_domain_only() {
    Http http = http();
    http.login(PASSWORD);
    String body = http.get("/").body();
    String payments = rowOf(body, "payments");
    assertThat(payments)
        .contains("<span class=\"badge ctl paused\">paused</span>")
        .contains("<span class=\"badge ctl limit\">max 3 claimed</span>")
        .contains("<span class=\"badge ctl limit\">rate 10/1s</span>")
        .contains("<span class=\"badge ctl retention\">keep 30d</span>");
    assertThat(rowOf(body, "cards")).doesNotContain("badge ctl");
    assertThat(body).contains("id=\"nav-schedules\" href=\"/schedules\"");
  }

  @Test
  void a_domain_page_shows_its_controls_and_retention() {
    Http http = http();
    http.login(PASSWORD);
    for (String tab : List.of("", "/dead", "/delayed", "/running")) {
      String body = http.get("/domains/payments" + tab).body();
      assertThat(body)
          .as(tab)
          .contains("<td id=\"set-claims\">paused: claims return nothing</td>")
          .contains("<td id=\"set-max\">3 claimed at once</td>")
          .contains("<td id=\"set-rate\">10 claims per 1s (10/1s)</td>")
          .contains("<td id=\"set-claimed\">1</td>")
          .contains(
              "<td id=\"set-retention\">completed and invalidated tasks kept 30d after they"
                  + " end</td>")
          .contains("<td id=\"set-purged\">0 tasks, 0 events; last purge never</td>");
    }
    String cards = http.get("/domains/cards").body();
    assertThat(cards)
        .contains("<td id=\"set-claims\">running</td>")
        .contains("<td id=\"set-max\">none</td>")
        .contains("<td id=\"set-rate\">none</td>")
        .contains("<td id=\"set-retention\">none (nothing of the domain is purged)</td>");
  }

  @Test
  void the_schedules_api_lists_every_schedule_with_timing_state_and_ticks() throws Exception {
    JsonNode s = api("/api/schedules");
    assertThat(s).hasSize(4); // by name: card-sweep, first-tick, nightly-close, ops-tick
    JsonNode sweep = s.get(0);
    assertThat(sweep.get("name").asText()).isEqualTo("card-sweep");
    assertThat(sweep.get("domain").asText()).isEqualTo("cards");
    assertThat(sweep.get("cron").isNull()).isTrue();
    assertThat(sweep.get("intervalMillis").asLong()).isEqualTo(3_600_000);
    assertThat(sweep.get("timing").asText()).isEqualTo("every 1h");
    assertThat(sweep.get("paused").asBoolean()).isTrue();
    // paused: no tick is next (as `schedule list --json` says), though the row keeps its position
    assertThat(hourly.nextTick()).isNotNull();
    assertThat(sweep.get("nextTick").isNull()).isTrue();
    assertThat(sweep.get("origin").asText()).isEqualTo("schedule:card-sweep");
    JsonNode close = s.get(2);
    assertThat(close.get("name").asText()).isEqualTo("nightly-close");
    assertThat(close.get("domain").asText()).isEqualTo("payments");
    assertThat(close.get("cron").asText()).isEqualTo("30 2 * * *");
    assertThat(close.get("zone").asText()).isEqualTo("Europe/Berlin");
    assertThat(close.get("intervalMillis").isNull()).isTrue();
    assertThat(close.get("timing").asText()).isEqualTo("cron 30 2 * * * (Europe/Berlin)");
    assertThat(close.get("paused").asBoolean()).isFalse();
    assertThat(close.get("nextTick").asText()).isEqualTo(nightly.nextTick().toString());
    assertThat(close.get("lastTick").isNull()).isTrue();
    // 02:30 in Berlin is 00:30 or 01:30 UTC
    assertThat(close.get("nextTick").asText()).matches(".*T0[01]:30:00Z");
  }

  @Test
  void a_schedules_domain_without_a_task_is_not_a_link_and_every_domain_link_answers() {
    Http http = http();
    http.login(PASSWORD);
    String body = http.get("/schedules").body();
    assertThat(body)
        .contains(
            "<td class=\"name\">first-tick</td><td class=\"domain\">fresh <span"
                + " class=\"none\">(no task filed yet)</span></td>")
        .doesNotContain("href=\"/domains/fresh\"");
    java.util.regex.Matcher links =
        java.util.regex.Pattern.compile("href=\"(/domains/[^\"]*)\"").matcher(body);
    List<String> domains = new java.util.ArrayList<>();
    while (links.find()) {
      domains.add(links.group(1));
    }
    assertThat(domains)
        .containsExactlyInAnyOrder("/domains/payments", "/domains/cards", "/domains/ops");
    for (String link : domains) {
      assertThat(http.get(link).statusCode()).as(link).isEqualTo(200);
    }
  }

  @Test
  void the_schedules_page_shows_each_schedule() {
    Http http = http();
    http.login(PASSWORD);
    String body = http.get("/schedules").body();
    assertThat(body)
        .contains(
            "<tr class=\"paused\"><td class=\"name\">card-sweep</td><td class=\"domain\"><a"
                + " href=\"/domains/cards\">cards</a></td><td class=\"timing\">every 1h</td><td"
                + " class=\"state\"><span class=\"badge ctl paused\">paused</span></td><td"
                + " class=\"next\"><time>(paused)</time></td><td class=\"last\"><time>"
                + (hourly.lastTick() == null ? "never" : Format.time(hourly.lastTick()))
                + "</time></td><td><a class=\"action\" id=\"action-resume-card-sweep\""
                + " href=\"/schedules/card-sweep/confirm?action=resume\">Resume…</a></td></tr>")
        .contains(
            "<tr><td class=\"name\">nightly-close</td><td class=\"domain\"><a"
                + " href=\"/domains/payments\">payments</a></td><td class=\"timing\">cron 30 2 * *"
                + " * (Europe/Berlin)</td><td class=\"state\">running</td><td"
                + " class=\"next\"><time>"
                + Format.time(nightly.nextTick())
                + "</time></td><td class=\"last\"><time>never</time></td><td><a"
                + " class=\"action\" id=\"action-pause-nightly-close\""
                + " href=\"/schedules/nightly-close/confirm?action=pause\">Pause…</a></td></tr>");
  }

  @Test
  void a_domain_and_a_schedule_are_paused_and_resumed_through_confirmed_actions() {
    Http h = http();
    String csrf = h.login(PASSWORD);
    assertThat(h.get("/domains/ops").body())
        .contains("href=\"/domains/ops/confirm?action=pause\">Pause claims…</a>");
    HttpResponse<String> confirm = h.get("/domains/ops/confirm?action=pause");
    assertThat(confirm.statusCode()).isEqualTo(200);
    assertThat(confirm.body())
        .contains("<h1>Pause claims of ops?</h1>")
        .contains("action=\"/domains/ops/pause\"");
    assertThat(h.post("/domains/ops/pause", Map.of()).statusCode()).isEqualTo(403);
    assertThat(ledger.controls("ops").paused()).isFalse();
    HttpResponse<String> paused = h.post("/domains/ops/pause", Map.of("csrf", csrf));
    assertThat(paused.statusCode()).as(paused.body()).isEqualTo(200);
    assertThat(paused.body())
        .contains("<h1>Done: pause ops</h1>")
        .contains("<b>domain</b> <span class=\"value\">ops</span>")
        .contains("<b>paused</b> <span class=\"value\">true</span>");
    assertThat(ledger.controls("ops").paused()).isTrue();
    HttpResponse<String> resumed = h.post("/domains/ops/resume", Map.of("csrf", csrf));
    assertThat(resumed.body()).contains("<b>paused</b> <span class=\"value\">false</span>");
    assertThat(ledger.controls("ops").paused()).isFalse();

    assertThat(h.get("/schedules/ops-tick/confirm?action=pause").body())
        .contains("<h1>Pause schedule ops-tick?</h1>")
        .contains("action=\"/schedules/ops-tick/pause\"");
    HttpResponse<String> s = h.post("/schedules/ops-tick/pause", Map.of("csrf", csrf));
    assertThat(s.statusCode()).as(s.body()).isEqualTo(200);
    assertThat(s.body())
        .contains("<h1>Done: pause schedule ops-tick</h1>")
        .contains("<b>schedule</b> <span class=\"value\">ops-tick</span>")
        .contains("<b>paused</b> <span class=\"value\">true</span>");
    assertThat(ledger.schedules().get("ops-tick").orElseThrow().paused()).isTrue();
    HttpResponse<String> r = h.post("/schedules/ops-tick/resume", Map.of("csrf", csrf));
    Schedule after = ledger.schedules().get("ops-tick").orElseThrow();
    assertThat(after.paused()).isFalse();
    assertThat(r.body())
        .contains("<b>paused</b> <span class=\"value\">false</span>")
        .contains(
            "<b>next tick</b> <span class=\"value\">" + Format.time(after.nextTick()) + "</span>");
    assertThat(h.post("/schedules/no-such/pause", Map.of("csrf", csrf)).statusCode())
        .isEqualTo(404);
    assertThat(h.get("/domains/ops/confirm?action=drop").statusCode()).isEqualTo(400);
  }

  @Test
  void a_read_only_console_offers_and_takes_no_pause() {
    Http h = new Http("http://127.0.0.1:" + readOnlyServer.address().getPort());
    String csrf = h.login(PASSWORD);
    assertThat(h.get("/domains/payments").body()).doesNotContain("confirm?action=");
    assertThat(h.get("/schedules").body()).doesNotContain("confirm?action=");
    assertThat(h.get("/domains/cards/confirm?action=pause").statusCode()).isEqualTo(403);
    assertThat(h.get("/schedules/card-sweep/confirm?action=resume").statusCode()).isEqualTo(403);
    HttpResponse<String> r = h.post("/domains/cards/pause", Map.of("csrf", csrf));
    assertThat(r.statusCode()).isEqualTo(403);
    assertThat(r.body()).contains("read-only");
    assertThat(h.post("/schedules/card-sweep/resume", Map.of("csrf", csrf)).statusCode())
        .isEqualTo(403);
    assertThat(ledger.controls("cards").paused()).isFalse();
    assertThat(ledger.schedules().get("card-sweep").orElseThrow().paused()).isTrue();
  }

  /** The overview table row of a domain. */
  static String rowOf(String body, String domain) {
    int at = body.indexOf(">" + domain + "</a>");
    assertThat(at).as(domain).isPositive();
    return body.substring(body.lastIndexOf("<tr>", at), body.indexOf("</tr>", at));
  }
}

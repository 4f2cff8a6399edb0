package dev.ledger.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import java.net.InetSocketAddress;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The overview and {@code /api/domains} read every domain's figures in one cached statement per
 * domain, and a second past the cap: a domain above the count cap next to one below it keeps its
 * own caps and markers; above the cap a count shows the planner's estimate (≈) or, with none that
 * exceeds the cap, {@code >1000}; a domain busier than the event window shows its rate over the
 * hour (≈).
 */
class ConsoleOverviewTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final String PASSWORD = "correct horse battery";
  static final ObjectMapper JSON = new ObjectMapper();

  static Ledger ledger;
  static ConsoleServer server;
  static Instant busyNow;

  @BeforeAll
  static void start() throws Exception {
    ledger = Ledger.open(PG.dataSource());
    String deep = ledger.fileAndAdmit(TaskSpec.builder("deep", "Deep").build());
    ledger.fileAndAdmit(TaskSpec.builder("shallow", "Shallow").build());
    String stale = ledger.fileAndAdmit(TaskSpec.builder("stale", "Stale").build());
    // 1,001 more admitted tasks in "deep" (copies of its first, filed in 2000): past the cap;
    // then ANALYZE: the planner knows 1,002 admitted tasks
    copies("deep", deep, 1_001);
    execute("ANALYZE " + table("deep", "tasks"));
    // "stale": analyzed at 1 task, never again (autovacuum off), then 1,001 more: its estimate
    // (1) does not exceed the cap, so the count shows the cap only
    execute("ALTER TABLE " + table("stale", "tasks") + " SET (autovacuum_enabled = false)");
    execute("ANALYZE " + table("stale", "tasks"));
    copies("stale", stale, 1_001);
    // "busy": 2,000 events (the window) in the last 30 minutes, 500 of them completions
    ledger.fileAndAdmit(TaskSpec.builder("busy", "Busy").build());
    busyNow = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
    try (Connection c = PG.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "INSERT INTO "
                    + table("busy", "events")
                    + " (task_id, kind, at, payload) SELECT 'x', CASE WHEN g % 4 = 0 THEN"
                    + " 'completed' ELSE 'heartbeat' END, ?, '{}' FROM generate_series(1, ?) g")) {
      s.setString(1, busyNow.minusSeconds(1800).toString());
      s.setInt(2, OverviewReads.EVENT_WINDOW);
      assertThat(s.executeUpdate()).isEqualTo(OverviewReads.EVENT_WINDOW);
    }
    server =
        ConsoleServer.start(
            Console.builder(ledger, PG.dataSource()).password(PASSWORD.toCharArray()).build(),
            new InetSocketAddress("127.0.0.1", 0));
  }

  static String table(String domain, String table) {
    String schema =
        new ReadModel(PG.dataSource(), "public", Clock.systemUTC(), 10).domain(domain).schema();
    return "\"" + schema.replace("\"", "\"\"") + "\"." + table;
  }

  static void execute(String sql) throws Exception {
    try (Connection c = PG.dataSource().getConnection();
        PreparedStatement s = c.prepareStatement(sql)) {
      s.execute();
    }
  }

  /** {@code n} copies of a task, admitted, filed in 2000 (no events). */
  static void copies(String domain, String id, int n) throws Exception {
    String tasks = table(domain, "tasks");
    try (Connection c = PG.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "INSERT INTO "
                    + tasks
                    + " SELECT (jsonb_populate_record(t, jsonb_build_object('id', t.id || '-' || g,"
                    + " 'created', '2000-01-01T00:00:00Z'))).* FROM "
                    + tasks
                    + " t, generate_series(1, ?) g WHERE t.id = ?")) {
      s.setInt(1, n);
      s.setString(2, id);
      assertThat(s.executeUpdate()).isEqualTo(n);
    }
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  static Http http() {
    return new Http("http://127.0.0.1:" + server.address().getPort());
  }

  private static final Pattern CELL = Pattern.compile("<td class=\"n\">(.*?)</td>");

  /**
   * A domain's overview cells: the five counts, oldest admitted, dead letters, last hour
   * (completed, events).
   */
  static List<String> cells(String body, String domain) {
    String row = ConsoleSettingsTest.rowOf(body, domain);
    List<String> out = new ArrayList<>();
    Matcher m = CELL.matcher(row);
    while (m.find()) {
      out.add(m.group(1).replaceAll("<[^>]*>", ""));
    }
    return out;
  }

  @Test
  void a_capped_domain_and_an_uncapped_one_on_one_page_keep_their_own_figures() {
    Http http = http();
    http.login(PASSWORD);
    String body = http.get("/").body();
    List<String> deep = cells(body, "deep");
    assertThat(deep).hasSize(9);
    assertThat(deep.subList(0, 5)).containsExactly("0", "≈1002", "0", "0", "0");
    assertThat(deep.get(5)).startsWith("≥").contains("d "); // filed in 2000: days old
    assertThat(deep.subList(6, 9)).containsExactly("0", "0", "2");
    List<String> shallow = cells(body, "shallow");
    assertThat(shallow.subList(0, 5)).containsExactly("0", "1", "0", "0", "0");
    assertThat(shallow.get(5)).isNotEmpty().doesNotStartWith("≥").doesNotContain("d ");
    assertThat(shallow.subList(6, 9)).containsExactly("0", "0", "2");
    List<String> stale = cells(body, "stale");
    assertThat(stale.subList(0, 5)).containsExactly("0", "&gt;1000", "0", "0", "0");
    assertThat(stale.get(5)).startsWith("≥");
  }

  @Test
  void the_domains_api_caps_each_domain_on_its_own() throws Exception {
    // past the driver's prepare threshold (5 runs on a connection), where results come back in
    // binary and an array's text in the driver's rendering ({"1.0"}): the same figures each time
    for (int i = 0; i < 20; i++) {
      JsonNode again = JSON.readTree(http().getBasic("/api/domains", "admin", PASSWORD).body());
      assertThat(again.get(1).get("countsEstimated").toString())
          .as("request %d", i)
          .isEqualTo("{\"admitted\":1002}");
    }
    JsonNode domains = JSON.readTree(http().getBasic("/api/domains", "admin", PASSWORD).body());
    assertThat(domains).hasSize(4);
    assertThat(domains.get(0).get("domain").asText()).isEqualTo("busy");
    JsonNode deep = domains.get(1);
    assertThat(deep.get("domain").asText()).isEqualTo("deep");
    assertThat(deep.get("counts").get("admitted").asLong()).isEqualTo(1_000);
    assertThat(deep.get("countsCapped").toString()).isEqualTo("[\"admitted\"]");
    assertThat(deep.get("countsEstimated").toString()).isEqualTo("{\"admitted\":1002}");
    assertThat(deep.get("countCap").asInt()).isEqualTo(1_000);
    assertThat(deep.get("estimatedTasks").asLong()).isEqualTo(1_002);
    assertThat(deep.get("deadLetters").asInt()).isZero();
    assertThat(deep.get("deadLettersCapped").asBoolean()).isFalse();
    JsonNode shallow = domains.get(2);
    assertThat(shallow.get("domain").asText()).isEqualTo("shallow");
    assertThat(shallow.get("counts").get("admitted").asLong()).isEqualTo(1);
    assertThat(shallow.get("countsCapped").toString()).isEqualTo("[]");
    assertThat(shallow.get("countsEstimated").toString()).isEqualTo("{}");
    JsonNode stale = domains.get(3);
    assertThat(stale.get("countsCapped").toString()).isEqualTo("[\"admitted\"]");
    assertThat(stale.get("countsEstimated").toString()).isEqualTo("{}");
  }

  @Test
  void a_domain_busier_than_the_event_window_shows_its_rate_over_the_hour() throws Exception {
    Instant now = busyNow;
    ReadModel reads = new ReadModel(PG.dataSource(), "public", Clock.systemUTC(), 10);
    OverviewReads overview =
        new OverviewReads(PG.dataSource(), reads, Clock.fixed(now, ZoneOffset.UTC));
    OverviewReads.Throughput t =
        overview
            .summaries(List.of(reads.domain("busy"), reads.domain("shallow")))
            .get(0)
            .lastHour();
    assertThat(t).isEqualTo(new OverviewReads.Throughput(1_000, 4_000, true));
    // a window that reaches an hour back: exact (the shallow domain's 2 events)
    OverviewReads.Throughput quiet =
        overview.summaries(List.of(reads.domain("shallow"))).get(0).lastHour();
    assertThat(quiet).isEqualTo(new OverviewReads.Throughput(0, 2, false));
  }
}

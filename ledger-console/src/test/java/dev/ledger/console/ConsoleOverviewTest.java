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
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The overview and {@code /api/domains} read every domain's figures in one statement per domain: a
 * domain above the count cap next to one below it keeps its own caps and markers.
 */
class ConsoleOverviewTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final String PASSWORD = "correct horse battery";
  static final ObjectMapper JSON = new ObjectMapper();

  static Ledger ledger;
  static ConsoleServer server;

  @BeforeAll
  static void start() throws Exception {
    ledger = Ledger.open(PG.dataSource());
    String deep = ledger.fileAndAdmit(TaskSpec.builder("deep", "Deep").build());
    ledger.fileAndAdmit(TaskSpec.builder("shallow", "Shallow").build());
    String schema =
        new ReadModel(PG.dataSource(), "public", Clock.systemUTC(), 10).domain("deep").schema();
    String tasks = "\"" + schema.replace("\"", "\"\"") + "\".tasks";
    // 10,001 more admitted tasks in "deep" (copies of its first, filed in 2000): past the cap
    try (Connection c = PG.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "INSERT INTO "
                    + tasks
                    + " SELECT (jsonb_populate_record(t, jsonb_build_object('id', t.id || '-' || g,"
                    + " 'created', '2000-01-01T00:00:00Z'))).* FROM "
                    + tasks
                    + " t, generate_series(1, 10001) g WHERE t.id = ?")) {
      s.setString(1, deep);
      assertThat(s.executeUpdate()).isEqualTo(10_001);
    }
    server =
        ConsoleServer.start(
            Console.builder(ledger, PG.dataSource()).password(PASSWORD.toCharArray()).build(),
            new InetSocketAddress("127.0.0.1", 0));
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
    assertThat(deep.subList(0, 5)).containsExactly("0", "&gt;10000", "0", "0", "0");
    assertThat(deep.get(5)).startsWith("≥").contains("d "); // filed in 2000: days old
    assertThat(deep.subList(6, 9)).containsExactly("0", "0", "2");
    List<String> shallow = cells(body, "shallow");
    assertThat(shallow.subList(0, 5)).containsExactly("0", "1", "0", "0", "0");
    assertThat(shallow.get(5)).isNotEmpty().doesNotStartWith("≥").doesNotContain("d ");
    assertThat(shallow.subList(6, 9)).containsExactly("0", "0", "2");
  }

  @Test
  void the_domains_api_caps_each_domain_on_its_own() throws Exception {
    JsonNode domains = JSON.readTree(http().getBasic("/api/domains", "admin", PASSWORD).body());
    assertThat(domains).hasSize(2);
    JsonNode deep = domains.get(0);
    assertThat(deep.get("domain").asText()).isEqualTo("deep");
    assertThat(deep.get("counts").get("admitted").asLong()).isEqualTo(10_000);
    assertThat(deep.get("countsCapped").toString()).isEqualTo("[\"admitted\"]");
    assertThat(deep.get("deadLetters").asInt()).isZero();
    assertThat(deep.get("deadLettersCapped").asBoolean()).isFalse();
    JsonNode shallow = domains.get(1);
    assertThat(shallow.get("domain").asText()).isEqualTo("shallow");
    assertThat(shallow.get("counts").get("admitted").asLong()).isEqualTo(1);
    assertThat(shallow.get("countsCapped").toString()).isEqualTo("[]");
  }
}

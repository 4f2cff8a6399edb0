package dev.ledger.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.LoggedEvent;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Dead letters read a page at a time (keyset, bounded counts, grouped by error) and a release
 * fenced by the lease the confirm page showed, on real PostgreSQL.
 */
class ConsoleDeadLetterTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final String PASSWORD = "correct horse battery";
  static final String DOMAIN = "mail";
  static final ObjectMapper JSON = new ObjectMapper();

  static Ledger ledger;
  static ConsoleServer server;
  static List<String> timeouts = new ArrayList<>();
  static List<String> bounces = new ArrayList<>();

  @BeforeAll
  static void start() {
    ledger = Ledger.open(PG.dataSource());
    for (int i = 0; i < 3; i++) {
      timeouts.add(dead("Send " + i, "smtp timeout", i));
    }
    for (int i = 0; i < 2; i++) {
      bounces.add(dead("Bounce " + i, "mailbox full", 10 + i));
    }
    // an invalidated task that is no dead letter, and an open one: neither is counted
    String plain = ledger.fileAndAdmit(TaskSpec.builder(DOMAIN, "Plain").build());
    ledger.invalidate(plain, "not needed", null);
    ledger.fileAndAdmit(TaskSpec.builder(DOMAIN, "Open").build());
    server =
        ConsoleServer.start(
            Console.builder(ledger, PG.dataSource()).password(PASSWORD.toCharArray()).build(),
            new InetSocketAddress("127.0.0.1", 0));
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  static String dead(String title, String error, long priority) {
    String id = ledger.fileAndAdmit(TaskSpec.builder(DOMAIN, title).priority(priority).build());
    Lease lease = ledger.claim(id, "worker-1", Duration.ofMinutes(1), List.of(), Label.INTERNAL);
    ledger.fail(lease, error, 1, Duration.ZERO);
    return id;
  }

  static DeadLetterReads reads(int cap) {
    return new DeadLetterReads(
        new ReadModel(PG.dataSource(), "public", Clock.systemUTC(), 10), cap);
  }

  static ReadModel.Domain domain() {
    return new ReadModel(PG.dataSource(), "public", Clock.systemUTC(), 10).domain(DOMAIN);
  }

  @Test
  void keyset_pages_list_the_ledger_dead_letters_once_each_in_claim_order() {
    DeadLetterReads r = reads(DeadLetterReads.CAP);
    List<String> seen = new ArrayList<>();
    ReadModel.Cursor after = null;
    int pages = 0;
    while (true) {
      List<DeadLetterReads.Dead> page = r.page(domain(), after, 2);
      page.forEach(d -> seen.add(d.id()));
      pages++;
      if (page.size() < 2) {
        break;
      }
      after = page.get(page.size() - 1).cursor();
    }
    assertThat(pages).isEqualTo(3);
    // claim order: priority descending
    List<String> expected = new ArrayList<>(List.of(bounces.get(1), bounces.get(0)));
    expected.addAll(List.of(timeouts.get(2), timeouts.get(1), timeouts.get(0)));
    assertThat(seen).containsExactlyElementsOf(expected);
    Set<String> api = new HashSet<>();
    ledger.deadLetters(DOMAIN).forEach(t -> api.add(t.id()));
    assertThat(new HashSet<>(seen)).isEqualTo(api);
    assertThat(r.count(domain())).isEqualTo(5);
  }

  @Test
  void counts_and_groups_stop_at_the_cap() {
    DeadLetterReads r = reads(3);
    assertThat(r.count(domain())).isEqualTo(4); // cap + 1: "more than 3"
    DeadLetterReads.Groups g = r.groups(domain(), Label.INTERNAL);
    assertThat(g.capped()).isTrue();
    // the first 3 in claim order: both bounces, then the highest-priority timeout
    assertThat(g.groups())
        .extracting(DeadLetterReads.Group::error)
        .containsExactly("mailbox full", "smtp timeout");
    assertThat(g.groups()).extracting(DeadLetterReads.Group::count).containsExactly(2, 1);

    DeadLetterReads.Groups all = reads(DeadLetterReads.CAP).groups(domain(), Label.INTERNAL);
    assertThat(all.capped()).isFalse();
    assertThat(all.groups())
        .extracting(DeadLetterReads.Group::error)
        .containsExactly("smtp timeout", "mailbox full");
    assertThat(all.groups()).extracting(DeadLetterReads.Group::count).containsExactly(3, 2);
    assertThat(all.groups().get(0).samples())
        .extracting(DeadLetterReads.Dead::id)
        .containsExactly(timeouts.get(2), timeouts.get(1), timeouts.get(0));
  }

  @Test
  void the_api_gives_the_groups_and_the_domain_count() throws Exception {
    Http http = new Http("http://127.0.0.1:" + server.address().getPort());
    HttpResponse<String> r = http.getBasic("/api/domains/" + DOMAIN + "/dead", "admin", PASSWORD);
    assertThat(r.statusCode()).isEqualTo(200);
    JsonNode groups = JSON.readTree(r.body()).get("groups");
    assertThat(groups.get(0).get("error").asText()).isEqualTo("smtp timeout");
    assertThat(groups.get(0).get("count").asInt()).isEqualTo(3);
    assertThat(groups.get(1).get("error").asText()).isEqualTo("mailbox full");
    assertThat(groups.get(1).get("count").asInt()).isEqualTo(2);
    JsonNode domains = JSON.readTree(http.getBasic("/api/domains", "admin", PASSWORD).body());
    JsonNode mail = null;
    for (JsonNode d : domains) {
      if (d.get("domain").asText().equals(DOMAIN)) {
        mail = d;
      }
    }
    assertThat(mail).isNotNull();
    assertThat(mail.get("deadLetters").asInt()).isEqualTo(5);
    assertThat(mail.get("deadLettersCapped").asBoolean()).isFalse();
  }

  private static final Pattern HIDDEN =
      Pattern.compile("<input type=\"hidden\" name=\"(holder|attempt)\" value=\"([^\"]*)\">");

  @Test
  void a_release_names_the_lease_the_confirm_page_showed_and_a_newer_claim_is_refused() {
    String id = ledger.fileAndAdmit(TaskSpec.builder("jobs", "Long job").build());
    ledger.claim(id, "worker-a", Duration.ofMillis(1), List.of(), Label.INTERNAL);
    Http http = new Http("http://127.0.0.1:" + server.address().getPort());
    String csrf = http.login(PASSWORD);
    HttpResponse<String> confirm = http.get("/tasks/" + id + "/confirm?action=release");
    assertThat(confirm.statusCode()).isEqualTo(200);
    Map<String, String> form = new LinkedHashMap<>();
    Matcher m = HIDDEN.matcher(confirm.body());
    while (m.find()) {
      form.put(m.group(1), m.group(2));
    }
    assertThat(form).containsEntry("holder", "worker-a").containsEntry("attempt", "1");
    form.put("csrf", csrf);

    // the lease expires and another worker claims the task before the operator confirms
    Task before = ledger.get(id);
    waitUntilExpired(before);
    ledger.claim(id, "worker-b", Duration.ofMinutes(10), List.of(), Label.INTERNAL);
    List<LoggedEvent> history = ledger.history(id);
    HttpResponse<String> refused = http.post("/tasks/" + id + "/release", form);
    assertThat(refused.statusCode()).isEqualTo(409);
    assertThat(ledger.get(id).holder()).isEqualTo("worker-b");
    assertThat(ledger.get(id).status()).isEqualTo(Status.CLAIMED);
    assertThat(ledger.history(id)).hasSameSizeAs(history);

    // the lease the page shows now is released
    form.put("holder", "worker-b");
    form.put("attempt", "2");
    HttpResponse<String> released = http.post("/tasks/" + id + "/release", form);
    assertThat(released.statusCode()).isEqualTo(200);
    assertThat(released.body()).contains("<b class=\"kind\">released</b>");
    assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
  }

  private static void waitUntilExpired(Task t) {
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (java.time.Instant.now().isBefore(t.leaseUntil().plusMillis(5))
        && System.nanoTime() < deadline) {
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}

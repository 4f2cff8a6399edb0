package dev.ledger.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.Label;
import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The console's routes over plain HTTP, on real PostgreSQL, against the JDK-served console. */
class ConsoleHttpTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final String PASSWORD = "correct horse battery";
  static final ObjectMapper JSON = new ObjectMapper();

  static Ledger ledger;
  static ConsoleFixture fx;
  static ConsoleServer server;
  static ConsoleServer readOnlyServer;

  @BeforeAll
  static void start() {
    ledger = Ledger.open(PG.dataSource());
    fx = new ConsoleFixture(ledger);
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

  @Test
  void pages_need_a_login_and_the_api_asks_for_basic() {
    Http h = http();
    HttpResponse<String> page = h.get("/");
    assertThat(page.statusCode()).isEqualTo(303);
    assertThat(page.headers().firstValue("Location")).hasValue("/login");
    HttpResponse<String> api = h.get("/api/domains");
    assertThat(api.statusCode()).isEqualTo(401);
    assertThat(api.headers().firstValue("WWW-Authenticate"))
        .hasValueSatisfying(v -> assertThat(v).startsWith("Basic"));
    assertThat(h.getBasic("/api/domains", "admin", "wrong password").statusCode()).isEqualTo(401);
  }

  @Test
  void login_sets_an_http_only_strict_session_cookie() {
    Http h = http();
    String csrf = Http.csrf(h.get("/login").body());
    HttpResponse<String> wrong =
        h.post("/login", Map.of("csrf", csrf, "user", "admin", "password", "not it at all"));
    assertThat(wrong.statusCode()).isEqualTo(401);
    assertThat(wrong.body()).contains("wrong user or password");
    HttpResponse<String> ok =
        h.post("/login", Map.of("csrf", csrf, "user", "admin", "password", PASSWORD));
    assertThat(ok.statusCode()).isEqualTo(303);
    String cookie =
        ok.headers().allValues("Set-Cookie").stream()
            .filter(c -> c.startsWith(Console.SESSION_COOKIE + "="))
            .findFirst()
            .orElseThrow();
    assertThat(cookie).contains("HttpOnly").contains("SameSite=Strict").contains("Path=/");
    HttpResponse<String> overview = h.get("/");
    assertThat(overview.statusCode()).isEqualTo(200);
    assertThat(overview.body()).contains(">payments</a>").contains(">cards</a>");
  }

  @Test
  void login_without_its_csrf_token_is_refused() {
    Http h = http();
    h.get("/login");
    HttpResponse<String> r = h.post("/login", Map.of("user", "admin", "password", PASSWORD));
    assertThat(r.statusCode()).isEqualTo(403);
  }

  @Test
  void a_post_without_the_csrf_token_is_refused_with_403_and_writes_nothing() {
    Http h = http();
    h.login(PASSWORD);
    String id = ledger.file(TaskSpec.builder("payments", "To admit").build());
    HttpResponse<String> r = h.post("/tasks/" + id + "/admit", Map.of());
    assertThat(r.statusCode()).isEqualTo(403);
    assertThat(r.body()).contains("CSRF");
    HttpResponse<String> forged = h.post("/tasks/" + id + "/admit", Map.of("csrf", "forged"));
    assertThat(forged.statusCode()).isEqualTo(403);
    assertThat(ledger.get(id).status()).isEqualTo(Status.PROPOSED);
  }

  @Test
  void admit_through_the_console_shows_the_event_it_wrote() {
    Http h = http();
    String csrf = h.login(PASSWORD);
    String id = ledger.file(TaskSpec.builder("payments", "Admit me").build());
    HttpResponse<String> confirm = h.get("/tasks/" + id + "/confirm?action=admit");
    assertThat(confirm.statusCode()).isEqualTo(200);
    assertThat(confirm.body()).contains("Really admit task " + id);
    HttpResponse<String> done = h.post("/tasks/" + id + "/admit", Map.of("csrf", csrf));
    assertThat(done.statusCode()).isEqualTo(200);
    long seq = ledger.history(id).get(1).seq();
    assertThat(ledger.history(id).get(1).kind()).isEqualTo("admitted");
    assertThat(done.body()).contains("#" + seq).contains("<b class=\"kind\">admitted</b>");
    assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
  }

  @Test
  void invalidate_needs_a_reason_and_records_it() {
    Http h = http();
    String csrf = h.login(PASSWORD);
    String id = ledger.fileAndAdmit(TaskSpec.builder("payments", "Obsolete").build());
    HttpResponse<String> none = h.post("/tasks/" + id + "/invalidate", Map.of("csrf", csrf));
    assertThat(none.statusCode()).isEqualTo(400);
    assertThat(none.body()).contains("reason: must not be empty");
    assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
    HttpResponse<String> done =
        h.post(
            "/tasks/" + id + "/invalidate", Map.of("csrf", csrf, "reason", "superseded by hand"));
    assertThat(done.statusCode()).isEqualTo(200);
    assertThat(ledger.get(id).reason()).isEqualTo("superseded by hand");
    assertThat(done.body()).contains("invalidated").contains("superseded by hand");
  }

  @Test
  void rescore_and_release_go_through_the_ledger() {
    Http h = http();
    String csrf = h.login(PASSWORD);
    String id = ledger.fileAndAdmit(TaskSpec.builder("payments", "Rescore me").priority(2).build());
    assertThat(
            h.post(
                    "/tasks/" + id + "/rescore",
                    Map.of("csrf", csrf, "priority", "40", "reason", "customer escalated"))
                .statusCode())
        .isEqualTo(200);
    assertThat(ledger.get(id).spec().priority()).isEqualTo(40);
    ledger.claim(id, "worker-9", java.time.Duration.ofMinutes(5), List.of(), Label.INTERNAL);
    HttpResponse<String> released = h.post("/tasks/" + id + "/release", Map.of("csrf", csrf));
    assertThat(released.statusCode()).isEqualTo(200);
    assertThat(released.body()).contains("<b class=\"kind\">released</b>");
    assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
  }

  @Test
  void bad_input_is_a_400_naming_the_parameter_the_page_was_given() throws Exception {
    Http h = http();
    String csrf = h.login(PASSWORD);
    String id = ledger.fileAndAdmit(TaskSpec.builder("payments", "Bad input").priority(2).build());
    // a NUL character: refused before it reaches PostgreSQL (whose refusal read as an outage)
    for (String path :
        List.of(
            "/api/tasks/abc%00def",
            "/tasks/abc%00def",
            "/api/domains/payments/queue?text=%00",
            "/api/domains/payments/queue?origin=a%00b",
            "/api/domains/a%00b/queue")) {
      HttpResponse<String> r = h.getBasic(path, "admin", PASSWORD);
      assertThat(r.statusCode()).as(path).isEqualTo(400);
      assertThat(r.body()).as(path).contains("must not hold a NUL character");
    }
    HttpResponse<String> status =
        h.getBasic("/api/domains/payments/queue?status=bogus", "admin", PASSWORD);
    assertThat(status.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(status.body()).get("error").asText())
        .startsWith("status: unknown status 'bogus'");
    HttpResponse<String> label =
        h.getBasic("/api/domains/payments/queue?label=secret", "admin", PASSWORD);
    assertThat(label.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(label.body()).get("error").asText()).startsWith("label: ");
    // "all" in any case, as the statuses are
    assertThat(h.getBasic("/api/domains/payments/queue?status=ALL", "admin", PASSWORD).statusCode())
        .isEqualTo(200);
    HttpResponse<String> as = h.get("/tasks/" + id + "?as=bogus");
    assertThat(as.statusCode()).isEqualTo(400);
    assertThat(as.body()).contains("as: ");
    // rescore: the form's field names, a priority past a long
    HttpResponse<String> noReason =
        h.post("/tasks/" + id + "/rescore", Map.of("csrf", csrf, "priority", "5"));
    assertThat(noReason.statusCode()).isEqualTo(400);
    assertThat(noReason.body()).contains("reason: must not be empty");
    HttpResponse<String> huge =
        h.post(
            "/tasks/" + id + "/rescore",
            Map.of("csrf", csrf, "priority", "99999999999999999999", "reason", "too high"));
    assertThat(huge.statusCode()).isEqualTo(400);
    assertThat(huge.body())
        .contains("priority: must be between -9223372036854775808 and 9223372036854775807");
    assertThat(ledger.get(id).spec().priority()).isEqualTo(2);
    assertThat(ledger.history(id)).hasSize(2); // created, admitted: nothing written
  }

  @Test
  void a_read_only_console_refuses_every_action() {
    Http h = new Http("http://127.0.0.1:" + readOnlyServer.address().getPort());
    String csrf = h.login(PASSWORD);
    String id = ledger.file(TaskSpec.builder("payments", "Not by a read-only console").build());
    HttpResponse<String> page = h.get("/tasks/" + id);
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.body()).doesNotContain("action-admit");
    assertThat(h.get("/tasks/" + id + "/confirm?action=admit").statusCode()).isEqualTo(403);
    HttpResponse<String> r = h.post("/tasks/" + id + "/admit", Map.of("csrf", csrf));
    assertThat(r.statusCode()).isEqualTo(403);
    assertThat(r.body()).contains("read-only");
    assertThat(
            h.post("/domains/cards/dead/refile", Map.of("csrf", csrf, "error", "card refused"))
                .statusCode())
        .isEqualTo(403);
    assertThat(ledger.get(id).status()).isEqualTo(Status.PROPOSED);
  }

  @Test
  void a_task_above_the_handling_label_shows_no_title_or_body() throws Exception {
    Http h = http();
    h.login(PASSWORD);
    HttpResponse<String> page = h.get("/tasks/" + fx.confidential);
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.body())
        .doesNotContain(ConsoleFixture.SECRET_BODY)
        .doesNotContain("Payroll for the board")
        .contains("hidden: labelled confidential, above handling internal");
    HttpResponse<String> queue = h.get("/domains/payments");
    assertThat(queue.body()).doesNotContain("Payroll for the board").contains(fx.confidential);
    assertThat(h.get("/domains/payments?text=Payroll").body()).doesNotContain(fx.confidential);
    JsonNode api =
        JSON.readTree(h.getBasic("/api/tasks/" + fx.confidential, "admin", PASSWORD).body());
    assertThat(api.get("hidden").asBoolean()).isTrue();
    assertThat(api.get("title").isNull()).isTrue();
    assertThat(api.get("body").isNull()).isTrue();
    assertThat(api.get("events").get(0).get("kind").asText()).isEqualTo("created");
    assertThat(api.get("events").get(0).get("payload").isNull()).isTrue();
  }

  @Test
  void the_json_api_answers_with_basic_auth_and_exact_counts() throws Exception {
    Http h = http();
    HttpResponse<String> r = h.getBasic("/api/domains", "admin", PASSWORD);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json; charset=utf-8");
    JsonNode domains = JSON.readTree(r.body());
    JsonNode cards = null;
    for (JsonNode d : domains) {
      if (d.get("domain").asText().equals("cards")) {
        cards = d;
      }
    }
    assertThat(cards).isNotNull();
    assertThat(cards.get("schema").asText()).startsWith("ledger_cards_");
    assertThat(cards.get("counts").get("invalidated").asLong()).isGreaterThanOrEqualTo(3);
    assertThat(cards.get("counts").get("completed").asLong()).isZero();
    assertThat(cards.get("countsCapped").size()).isZero();
    Map<Status, Long> exact = ledger.countByStatus("payments");
    JsonNode payments = null;
    for (JsonNode d : JSON.readTree(h.getBasic("/api/domains", "admin", PASSWORD).body())) {
      if (d.get("domain").asText().equals("payments")) {
        payments = d;
      }
    }
    for (Status s : Status.values()) {
      assertThat(payments.get("counts").get(s.wire()).asLong())
          .as(s.wire())
          .isEqualTo(exact.get(s));
    }
    JsonNode task = JSON.readTree(h.getBasic("/api/tasks/" + fx.claimed, "admin", PASSWORD).body());
    assertThat(task.get("status").asText()).isEqualTo("claimed");
    assertThat(task.get("holder").asText()).isEqualTo("worker-7");
    assertThat(task.get("attempts").asLong()).isEqualTo(1);
    assertThat(task.get("events").get(task.get("events").size() - 1).get("kind").asText())
        .isEqualTo("claimed");
    assertThat(h.getBasic("/api/tasks/no-such-task", "admin", PASSWORD).statusCode())
        .isEqualTo(404);
  }

  @Test
  void keyset_pages_stay_stable_under_inserts() throws Exception {
    Http h = http();
    String domain = "keyset";
    List<String> filed = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      filed.add(
          ledger.fileAndAdmit(TaskSpec.builder(domain, "task " + i).priority(100 - i).build()));
    }
    JsonNode p1 =
        JSON.readTree(h.getBasic("/api/domains/keyset/queue?limit=3", "admin", PASSWORD).body());
    assertThat(ids(p1)).containsExactly(filed.get(0), filed.get(1), filed.get(2));
    // filed after the first page was read: one ahead of the cursor, one among the rest
    ledger.fileAndAdmit(TaskSpec.builder(domain, "jumps the queue").priority(1000).build());
    String late = ledger.fileAndAdmit(TaskSpec.builder(domain, "between").priority(97).build());
    JsonNode p2 =
        JSON.readTree(
            h.getBasic(
                    "/api/domains/keyset/queue?limit=3&after=" + p1.get("next").asText(),
                    "admin",
                    PASSWORD)
                .body());
    assertThat(ids(p2)).containsExactly(filed.get(3), late, filed.get(4));
    JsonNode p3 =
        JSON.readTree(
            h.getBasic(
                    "/api/domains/keyset/queue?limit=3&after=" + p2.get("next").asText(),
                    "admin",
                    PASSWORD)
                .body());
    assertThat(ids(p3)).containsExactly(filed.get(5), filed.get(6));
    assertThat(p3.get("next").isNull()).isTrue();
  }

  @Test
  void the_queue_filters_by_status_label_requirement_and_origin() throws Exception {
    Http h = http();
    JsonNode sql =
        JSON.readTree(
            h.getBasic("/api/domains/payments/queue?requires=sql", "admin", PASSWORD).body());
    assertThat(ids(sql)).containsExactly(fx.first);
    JsonNode claimed =
        JSON.readTree(
            h.getBasic("/api/domains/payments/queue?status=claimed", "admin", PASSWORD).body());
    assertThat(ids(claimed)).containsExactly(fx.claimed);
    JsonNode conf =
        JSON.readTree(
            h.getBasic("/api/domains/payments/queue?label=confidential", "admin", PASSWORD).body());
    assertThat(ids(conf)).containsExactly(fx.confidential);
    JsonNode proposed =
        JSON.readTree(
            h.getBasic("/api/domains/payments/queue?status=proposed&text=refund", "admin", PASSWORD)
                .body());
    assertThat(ids(proposed)).containsExactly(fx.proposed);
  }

  @Test
  void the_task_page_shows_lease_dependencies_why_and_the_timeline() {
    Http h = http();
    h.login(PASSWORD);
    String claimed = h.get("/tasks/" + fx.claimed).body();
    assertThat(claimed).contains("held by <b>worker-7</b> (attempt 1)");
    assertThat(claimed).contains("it is leased by worker-7 (attempt 1) until");
    assertThat(claimed)
        .contains("<b class=\"kind\">created</b>")
        .contains("<b class=\"kind\">claimed</b>");
    String dependent = h.get("/tasks/" + fx.dependent).body();
    assertThat(dependent).contains("it waits on dependency " + fx.first + " (admitted)");
    String first = h.get("/tasks/" + fx.first).body();
    assertThat(first).contains(fx.dependent).contains("A claimer with --can sql");
    assertThat(h.get("/tasks/" + fx.first + "?can=&as=internal").body())
        .contains("it needs --can sql");
  }

  @Test
  void dead_letters_are_grouped_by_their_last_error_and_a_group_is_refiled() {
    Http h = http();
    String csrf = h.login(PASSWORD);
    String page = h.get("/domains/cards/dead").body();
    assertThat(page)
        .contains("<span class=\"count\">2</span> <code class=\"err\">gateway timeout</code>");
    assertThat(page)
        .contains("<span class=\"count\">1</span> <code class=\"err\">card refused</code>");
    HttpResponse<String> done =
        h.post("/domains/cards/dead/refile", Map.of("csrf", csrf, "error", "gateway timeout"));
    assertThat(done.statusCode()).isEqualTo(200);
    assertThat(done.body()).contains("re-file 2 dead letters of cards");
    assertThat(ledger.deadLetters("cards")).extracting(t -> t.id()).containsExactly(fx.deadRefused);
  }

  @Test
  void delayed_and_running_pages_list_their_tasks() {
    Http h = http();
    h.login(PASSWORD);
    String id =
        ledger.file(
            TaskSpec.builder("payments", "Later")
                .notBefore(java.time.Instant.parse("2099-01-01T00:00:00Z"))
                .build());
    assertThat(h.get("/domains/payments/delayed").body())
        .contains(id)
        .contains("2099-01-01T00:00:00Z");
    String running = h.get("/domains/payments/running").body();
    assertThat(running).contains("worker-7").contains(fx.claimed);
  }

  @Test
  void no_page_or_response_shows_the_connection_string() {
    Http h = http();
    h.login(PASSWORD);
    for (String path :
        List.of("/", "/domains/payments", "/tasks/" + fx.first, "/tasks/nope", "/api/domains")) {
      String body = h.get(path).body();
      assertThat(body).doesNotContain("jdbc:").doesNotContain(PG.databaseName());
    }
  }

  private static List<String> ids(JsonNode page) {
    List<String> out = new ArrayList<>();
    page.get("tasks").forEach(t -> out.add(t.get("id").asText()));
    return out;
  }
}

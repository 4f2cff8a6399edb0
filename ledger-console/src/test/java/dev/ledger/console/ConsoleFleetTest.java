package dev.ledger.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import dev.ledger.migrate.Fleet;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The tenants and schema-versions pages and their API, on real PostgreSQL: a control database with
 * an active tenant, a degraded one (unreachable) and one registered after the fleet's last run
 * (provisioning, its migrations pending); and a console without a control database.
 */
class ConsoleFleetTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final String PASSWORD = "correct horse battery";
  static final String UNREACHABLE =
      "jdbc:postgresql://127.0.0.1:1/nowhere?user=ghost&password=s3cr3t";
  static final ObjectMapper JSON = new ObjectMapper();

  static final List<String> databases = new ArrayList<>();
  static HikariDataSource control;
  static ConsoleServer withFleet;
  static ConsoleServer withoutFleet;

  @BeforeAll
  static void start() throws SQLException {
    Ledger ledger = Ledger.open(PG.dataSource());
    ledger.fileAndAdmit(TaskSpec.builder("payments", "Reconcile").build());
    String controlDb = PostgresExtension.newDatabase();
    String acmeDb = PostgresExtension.newDatabase();
    String freshDb = PostgresExtension.newDatabase();
    databases.addAll(List.of(controlDb, acmeDb, freshDb));
    control = PostgresExtension.pool(TestServer.get().urlFor(controlDb), 3);
    Fleet fleet = Fleet.builder().control(control).build();
    fleet.register("acme", TestServer.get().urlFor(acmeDb));
    fleet.register("gone", UNREACHABLE);
    fleet.migrate();
    fleet.register("fresh", TestServer.get().urlFor(freshDb));
    withFleet =
        ConsoleServer.start(
            Console.builder(ledger, PG.dataSource())
                .password(PASSWORD.toCharArray())
                .control(control, "public")
                .build(),
            new InetSocketAddress("127.0.0.1", 0));
    withoutFleet =
        ConsoleServer.start(
            Console.builder(ledger, PG.dataSource()).password(PASSWORD.toCharArray()).build(),
            new InetSocketAddress("127.0.0.1", 0));
  }

  @AfterAll
  static void stop() throws SQLException {
    withFleet.close();
    withoutFleet.close();
    control.close();
    for (String db : databases) {
      PostgresExtension.dropDatabase(db);
    }
  }

  static Http http(ConsoleServer server) {
    return new Http("http://127.0.0.1:" + server.address().getPort());
  }

  static JsonNode api(ConsoleServer server, String path) throws Exception {
    HttpResponse<String> r = http(server).getBasic(path, "admin", PASSWORD);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertNoSecret(r.body());
    return JSON.readTree(r.body());
  }

  static void assertNoSecret(String body) {
    assertThat(body).doesNotContain("s3cr3t").doesNotContain("jdbc:").doesNotContain("user=");
  }

  @Test
  void the_tenants_api_lists_the_registry_with_status_reason_and_last_run() throws Exception {
    JsonNode t = api(withFleet, "/api/tenants");
    assertThat(t.get("control").asBoolean()).isTrue();
    assertThat(t.get("registry").asBoolean()).isTrue();
    JsonNode tenants = t.get("tenants");
    assertThat(tenants).hasSize(3);
    assertThat(tenants.get(0).get("tenant").asText()).isEqualTo("acme");
    assertThat(tenants.get(0).get("status").asText()).isEqualTo("active");
    assertThat(tenants.get(0).get("reason").isNull()).isTrue();
    assertThat(tenants.get(0).get("updated").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
    assertThat(tenants.get(1).get("tenant").asText()).isEqualTo("fresh");
    assertThat(tenants.get(1).get("status").asText()).isEqualTo("provisioning");
    assertThat(tenants.get(2).get("tenant").asText()).isEqualTo("gone");
    assertThat(tenants.get(2).get("status").asText()).isEqualTo("degraded");
    assertThat(tenants.get(2).get("reason").asText()).isNotBlank();
  }

  @Test
  void the_tenants_page_shows_each_tenant_and_the_degraded_reason() throws Exception {
    JsonNode gone = api(withFleet, "/api/tenants").get("tenants").get(2);
    Http http = http(withFleet);
    http.login(PASSWORD);
    HttpResponse<String> overview = http.get("/");
    assertThat(overview.body()).contains("href=\"/tenants\"").contains("href=\"/schemas\"");
    HttpResponse<String> page = http.get("/tenants");
    assertThat(page.statusCode()).isEqualTo(200);
    assertNoSecret(page.body());
    assertThat(page.body())
        .contains("<td class=\"tenant\">acme</td><td class=\"status\">active</td>")
        .contains("<td class=\"tenant\">fresh</td><td class=\"status\">provisioning</td>")
        .contains(
            "<tr class=\"degraded\"><td class=\"tenant\">gone</td><td class=\"status\">degraded"
                + "</td><td class=\"reason\">"
                + gone.get("reason").asText().split("[^A-Za-z0-9 ]")[0]);
  }

  @Test
  void the_schema_api_gives_each_schema_version_and_each_tenant_plan() throws Exception {
    JsonNode s = api(withFleet, "/api/schemas");
    JsonNode own = s.get("schemas");
    assertThat(own).hasSize(2);
    assertThat(own.get(0).get("kind").asText()).isEqualTo("directory");
    assertThat(own.get(0).get("schema").asText()).isEqualTo("public");
    assertThat(own.get(0).get("state").asText()).isEqualTo("current");
    assertThat(own.get(0).get("version").asText()).isEqualTo(LedgerMigrations.DIRECTORY_VERSION);
    assertThat(own.get(0).get("pending")).isEmpty();
    assertThat(own.get(1).get("domain").asText()).isEqualTo("payments");
    assertThat(own.get(1).get("version").asText()).isEqualTo(LedgerMigrations.DOMAIN_VERSION);
    assertThat(own.get(1).get("pending")).isEmpty();

    JsonNode tenants = s.get("tenants");
    assertThat(tenants).hasSize(3);
    JsonNode acme = tenants.get(0);
    assertThat(acme.get("tenant").asText()).isEqualTo("acme");
    assertThat(acme.get("pending").asInt()).isZero();
    assertThat(acme.get("schemas").get(0).get("version").asText())
        .isEqualTo(LedgerMigrations.DIRECTORY_VERSION);
    JsonNode fresh = tenants.get(1);
    assertThat(fresh.get("tenant").asText()).isEqualTo("fresh");
    int directoryVersion = Integer.parseInt(LedgerMigrations.DIRECTORY_VERSION);
    List<String> expected = new ArrayList<>();
    for (int v = 1; v <= directoryVersion; v++) {
      expected.add(String.valueOf(v));
    }
    JsonNode freshDirectory = fresh.get("schemas").get(0);
    assertThat(freshDirectory.get("state").asText()).isEqualTo("pending");
    assertThat(freshDirectory.get("version").isNull()).isTrue();
    List<String> pending = new ArrayList<>();
    freshDirectory.get("pending").forEach(p -> pending.add(p.asText()));
    assertThat(pending).isEqualTo(expected);
    assertThat(fresh.get("pending").asInt()).isEqualTo(directoryVersion);
    JsonNode gone = tenants.get(2);
    assertThat(gone.get("tenant").asText()).isEqualTo("gone");
    assertThat(gone.get("skipped").asBoolean()).isTrue();
    assertThat(gone.get("schemas").isNull()).isTrue();
    // a plan changes no status
    assertThat(api(withFleet, "/api/tenants").get("tenants").get(1).get("status").asText())
        .isEqualTo("provisioning");
  }

  @Test
  void the_schema_page_shows_versions_and_pending_migrations() {
    Http http = http(withFleet);
    http.login(PASSWORD);
    HttpResponse<String> page = http.get("/schemas");
    assertThat(page.statusCode()).isEqualTo(200);
    assertNoSecret(page.body());
    assertThat(page.body())
        .contains(
            "<td class=\"state\">current</td><td class=\"version\">"
                + LedgerMigrations.DOMAIN_VERSION
                + "</td>")
        .contains("id=\"plan-fresh\"")
        .contains("<td class=\"state\">pending</td><td class=\"version\"></td>");
  }

  @Test
  void without_a_control_database_the_pages_say_so() throws Exception {
    JsonNode t = api(withoutFleet, "/api/tenants");
    assertThat(t.get("control").asBoolean()).isFalse();
    assertThat(t.get("tenants")).isEmpty();
    JsonNode s = api(withoutFleet, "/api/schemas");
    assertThat(s.get("control").asBoolean()).isFalse();
    assertThat(s.get("schemas")).hasSize(2);
    assertThat(s.get("tenants")).isEmpty();
    Http http = http(withoutFleet);
    http.login(PASSWORD);
    assertThat(http.get("/tenants").body()).contains("id=\"no-control\"");
    assertThat(http.get("/schemas").body()).contains("id=\"no-control\"");
  }

  @Test
  void an_unreachable_control_database_answers_503_without_its_dsn() throws Exception {
    org.postgresql.ds.PGSimpleDataSource gone = new org.postgresql.ds.PGSimpleDataSource();
    gone.setUrl(UNREACHABLE);
    gone.setConnectTimeout(2);
    try (ConsoleServer s =
        ConsoleServer.start(
            Console.builder(Ledger.open(PG.dataSource()), PG.dataSource())
                .password(PASSWORD.toCharArray())
                .control(gone, "public")
                .build(),
            new InetSocketAddress("127.0.0.1", 0))) {
      HttpResponse<String> r = http(s).getBasic("/api/tenants", "admin", PASSWORD);
      assertThat(r.statusCode()).isEqualTo(503);
      assertThat(JSON.readTree(r.body()).get("error").asText()).contains("control database");
      assertNoSecret(r.body());
      assertThat(r.body()).doesNotContain("nowhere").doesNotContain("ghost");
    }
  }

  @Test
  void an_unreachable_ledger_database_answers_503_on_every_read_without_its_dsn() throws Exception {
    org.postgresql.ds.PGSimpleDataSource gone = new org.postgresql.ds.PGSimpleDataSource();
    gone.setUrl(UNREACHABLE);
    gone.setConnectTimeout(2);
    // the database answers while the ledger opens, then goes away
    java.util.concurrent.atomic.AtomicBoolean down =
        new java.util.concurrent.atomic.AtomicBoolean();
    javax.sql.DataSource flaky =
        (javax.sql.DataSource)
            java.lang.reflect.Proxy.newProxyInstance(
                javax.sql.DataSource.class.getClassLoader(),
                new Class<?>[] {javax.sql.DataSource.class},
                (proxy, m, args) -> {
                  try {
                    return m.invoke(down.get() ? gone : PG.dataSource(), args);
                  } catch (java.lang.reflect.InvocationTargetException e) {
                    throw e.getCause();
                  }
                });
    Ledger ledger = Ledger.open(flaky);
    ledger.provision("payments");
    try (ConsoleServer s =
        ConsoleServer.start(
            Console.builder(ledger, flaky).password(PASSWORD.toCharArray()).build(),
            new InetSocketAddress("127.0.0.1", 0))) {
      down.set(true);
      for (String path : List.of("/api/domains", "/api/domains/payments/queue")) {
        HttpResponse<String> r = http(s).getBasic(path, "admin", PASSWORD);
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(503);
        assertThat(JSON.readTree(r.body()).get("error").asText())
            .as(path)
            .startsWith("database unreachable");
        assertNoSecret(r.body());
        assertThat(r.body()).doesNotContain("nowhere").doesNotContain("ghost");
      }
    }
  }

  @Test
  void the_pages_need_a_login() {
    assertThat(http(withFleet).get("/api/tenants").statusCode()).isEqualTo(401);
    assertThat(http(withFleet).get("/tenants").statusCode()).isEqualTo(303);
  }
}

package dev.ledger.app.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.app.Cli;
import dev.ledger.app.ExitCodes;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * A fleet of six tenants, one unreachable and one with an edited migration: the four good ones end
 * active, the two bad ones degraded with a reason, the exit code says so ({@code --strict} fails),
 * no advisory lock is left behind, and no tenant password appears in any output, log line, report
 * or error.
 */
class FleetCommandTest {

  @RegisterExtension static final PostgresExtension CONTROL = new PostgresExtension();

  private static final ObjectMapper JSON = new ObjectMapper();
  // the scripts, not 1 to the latest: the set may have gaps
  private static final int DIRECTORY =
      dev.ledger.testing.MigrationScripts.directoryVersions().size();
  private static final int DOMAIN = dev.ledger.testing.MigrationScripts.versions("domain").size();
  private static final int EMPTY = DIRECTORY;
  private static final int REFERENCE = DIRECTORY + 3 * (DOMAIN - 1); // 3 schemas baselined at 1
  private static final int PROMOTIONS = DIRECTORY + 2 * (DOMAIN - 2); // 2 schemas baselined at 2
  private static final int BEHIND = 3 * (DOMAIN - 3); // 3 schemas at version 3

  @Test
  void six_tenants_one_unreachable_one_edited_end_four_active_two_degraded_and_leak_no_password()
      throws Exception {
    List<String> databases = new ArrayList<>();
    ListAppender<ILoggingEvent> logs = new ListAppender<>();
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    Level rootLevel = root.getLevel();
    PrintStream stdout = System.out;
    PrintStream stderr = System.err;
    ByteArrayOutputStream console = new ByteArrayOutputStream();
    List<String> captured = new ArrayList<>();
    List<String> secrets = new ArrayList<>();
    try {
      String empty = newDatabase(databases);
      String reference = newDatabase(databases);
      Fixtures.load(reference, Fixtures.DOMAIN_SCHEMAS);
      String promotions = newDatabase(databases);
      Fixtures.load(promotions, Fixtures.PROMOTIONS_V1);
      String behind = newDatabase(databases);
      Tenants.route(behind, List.of("b1", "b2", "b3"));
      for (String d : List.of("b1", "b2", "b3")) {
        LedgerMigrations.domain(Tenants.dataSource(behind), DomainSchemas.schemaName(d))
            .target("3")
            .load()
            .migrate();
      }
      String edited = newDatabase(databases);
      Tenants.route(edited, List.of("e1", "e2"));
      for (String d : List.of("e1", "e2")) {
        LedgerMigrations.migrateDomain(Tenants.dataSource(edited), DomainSchemas.schemaName(d));
      }
      try (Connection c = PostgresExtension.connect(edited);
          Statement s = c.createStatement()) {
        s.execute(
            "UPDATE \""
                + DomainSchemas.schemaName("e2")
                + "\".flyway_schema_history SET checksum = checksum + 1 WHERE version = '2'");
      }

      Map<String, String> dsns = new LinkedHashMap<>();
      dsns.put("t1-empty", Tenants.dsn(empty, "s3cret-empty-4c1d"));
      dsns.put("t2-reference", Tenants.dsn(reference, "s3cret-reference-88a0"));
      dsns.put("t3-promotions", Tenants.dsn(promotions, "s3cret-promotions-51f2"));
      dsns.put("t4-behind", Tenants.dsn(behind, "s3cret-behind-0b7e"));
      dsns.put(
          "t5-unreachable",
          "jdbc:postgresql://127.0.0.1:1/ledger_gone?user=postgres&password=s3cret-gone-d2c9");
      dsns.put("t6-edited", Tenants.dsn(edited, "s3cret-edited-6e44"));
      String control = CONTROL.jdbcUrl();
      dsns.values().forEach(d -> secrets.add(Tenants.password(d)));

      logs.start();
      root.addAppender(logs);
      root.setLevel(Level.DEBUG);
      System.setOut(new PrintStream(console, true, StandardCharsets.UTF_8));
      System.setErr(new PrintStream(console, true, StandardCharsets.UTF_8));

      for (Map.Entry<String, String> t : dsns.entrySet()) {
        Cli.Result r =
            Cli.run(
                "fleet",
                "register",
                "--control",
                control,
                "--tenant",
                t.getKey(),
                "--dsn",
                t.getValue());
        captured.add(r.all());
        assertThat(r.exit()).as(r.err()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).isEqualTo("registered tenant " + t.getKey() + " (provisioning)\n");
      }
      Cli.Result list = Cli.run("fleet", "list", "--control", control);
      captured.add(list.all());
      assertThat(list.out().lines().filter(l -> l.contains(" provisioning ")).count()).isEqualTo(6);

      Cli.Result plan = Cli.run("fleet", "plan", "--control", control, "--json");
      captured.add(plan.all());
      assertThat(plan.exit()).isEqualTo(ExitCodes.DEGRADED);
      Map<String, JsonNode> planned = byTenant(JSON.readTree(plan.out()));
      assertThat(planned.get("t1-empty").get("pending").asInt()).isEqualTo(EMPTY);
      assertThat(planned.get("t2-reference").get("pending").asInt()).isEqualTo(REFERENCE);
      assertThat(planned.get("t3-promotions").get("pending").asInt()).isEqualTo(PROMOTIONS);
      assertThat(planned.get("t4-behind").get("pending").asInt()).isEqualTo(BEHIND);
      assertThat(planned.get("t5-unreachable").get("error").asText()).contains("unreachable");
      assertThat(planned.get("t6-edited").get("error").asText())
          .contains("V2 (V2__promotions.sql)");
      assertThat(planned.values()).allMatch(t -> t.get("status").asText().equals("provisioning"));

      Cli.Result migrate =
          Cli.run("fleet", "migrate", "--control", control, "--parallelism", "3", "--json");
      captured.add(migrate.all());
      assertThat(migrate.exit()).as(migrate.all()).isEqualTo(ExitCodes.DEGRADED);
      JsonNode report = JSON.readTree(migrate.out());
      assertThat(report.get("exitCode").asInt()).isEqualTo(ExitCodes.DEGRADED);
      assertThat(report.at("/report/active").asInt()).isEqualTo(4);
      assertThat(report.at("/report/degraded").asInt()).isEqualTo(2);
      Map<String, JsonNode> tenants = byTenant(report);
      assertThat(tenants.get("t1-empty").get("applied").asInt()).isEqualTo(EMPTY);
      assertThat(tenants.get("t2-reference").get("applied").asInt()).isEqualTo(REFERENCE);
      assertThat(tenants.get("t3-promotions").get("applied").asInt()).isEqualTo(PROMOTIONS);
      assertThat(tenants.get("t4-behind").get("applied").asInt()).isEqualTo(BEHIND);
      for (String ok : List.of("t1-empty", "t2-reference", "t3-promotions", "t4-behind")) {
        assertThat(tenants.get(ok).get("status").asText()).isEqualTo("active");
        assertThat(tenants.get(ok).get("error").isNull()).isTrue();
      }
      assertThat(tenants.get("t5-unreachable").get("status").asText()).isEqualTo("degraded");
      assertThat(tenants.get("t5-unreachable").get("error").asText())
          .contains("tenant t5-unreachable")
          .contains("unreachable");
      assertThat(tenants.get("t5-unreachable").get("report").isNull()).isTrue();
      assertThat(tenants.get("t6-edited").get("status").asText()).isEqualTo("degraded");
      assertThat(tenants.get("t6-edited").get("error").asText())
          .contains("V2 (V2__promotions.sql)")
          .contains("checksum");
      // the edited tenant's other schema and directory were still brought current
      assertThat(tenants.get("t6-edited").at("/report/counts/failed").asInt()).isEqualTo(1);

      try (Connection c = PostgresExtension.connect(CONTROL.databaseName())) {
        List<List<String>> registry =
            Fixtures.rows(
                c,
                "SELECT h.tenant, h.status, n.reason IS NOT NULL FROM harness_tenants h"
                    + " JOIN ledger_tenant_notes n USING (tenant) ORDER BY tenant");
        assertThat(registry)
            .containsExactly(
                List.of("t1-empty", "active", "f"),
                List.of("t2-reference", "active", "f"),
                List.of("t3-promotions", "active", "f"),
                List.of("t4-behind", "active", "f"),
                List.of("t5-unreachable", "degraded", "t"),
                List.of("t6-edited", "degraded", "t"));
        captured.add(Fixtures.rows(c, "SELECT reason FROM ledger_tenant_notes").toString());
      }
      Cli.Result listed = Cli.run("fleet", "list", "--control", control, "--json");
      captured.add(listed.all());
      assertThat(listed.out()).contains("\"degraded\"").doesNotContain("jdbc:postgresql");

      Cli.Result strict = Cli.run("fleet", "migrate", "--control", control, "--strict");
      captured.add(strict.all());
      assertThat(strict.exit()).isEqualTo(ExitCodes.FAILED);
      assertThat(strict.out()).contains("4 active, 2 degraded (2 skipped)");
      assertThat(strict.out().lines().filter(l -> l.startsWith("t1-empty")).findFirst())
          .get()
          .satisfies(l -> assertThat(l.split("\\s+")[2]).isEqualTo("0"));

      for (String db : databases) {
        assertThat(Tenants.advisoryLocks(db)).as(db).isZero();
      }
    } finally {
      System.setOut(stdout);
      System.setErr(stderr);
      root.detachAppender(logs);
      root.setLevel(rootLevel);
      for (String db : databases) {
        PostgresExtension.dropDatabase(db);
      }
    }
    captured.add(console.toString(StandardCharsets.UTF_8));
    for (ILoggingEvent e : logs.list) {
      captured.add(e.getFormattedMessage());
      if (e.getThrowableProxy() != null) {
        captured.add(ThrowableProxyUtil.asString(e.getThrowableProxy()));
      }
    }
    assertThat(logs.list).isNotEmpty();
    String everything = String.join("\n", captured);
    assertThat(everything).contains("t5-unreachable").contains("t6-edited");
    assertThat(secrets).hasSize(6);
    for (String secret : secrets) {
      assertThat(everything).doesNotContain(secret);
    }
  }

  private static String newDatabase(List<String> databases) throws Exception {
    String db = PostgresExtension.newDatabase();
    databases.add(db);
    return db;
  }

  private static Map<String, JsonNode> byTenant(JsonNode document) {
    Map<String, JsonNode> out = new LinkedHashMap<>();
    for (JsonNode t : document.at("/report/tenants")) {
      out.put(t.get("tenant").asText(), t);
    }
    return out;
  }

  static {
    // referenced so the server is chosen before the test captures the console
    TestServer.get();
  }
}

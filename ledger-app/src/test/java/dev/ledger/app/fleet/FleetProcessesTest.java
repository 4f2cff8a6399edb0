package dev.ledger.app.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.app.Cli;
import dev.ledger.app.ExitCodes;
import dev.ledger.migrate.AdvisoryLocks;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Two {@code fleet migrate} processes (separate JVMs) over the same fleet at once: every tenant is
 * migrated exactly once, by one of them; neither deadlocks or errs, though every tenant runs a
 * {@code CREATE INDEX CONCURRENTLY} while the other process polls for the tenant's lock; no
 * advisory lock is left; no password is printed.
 */
// slow (two fleet JVMs): run on purpose, -Dledger.test.groups=slow
@Tag("slow")
class FleetProcessesTest {

  private static final Logger LOG = LoggerFactory.getLogger(FleetProcessesTest.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int TENANTS = 4;
  private static final int DOMAINS = 6;
  private static final List<String> VERSIONS = versions();
  private static final int MIGRATIONS_PER_TENANT = DOMAINS * VERSIONS.size();

  @RegisterExtension static final PostgresExtension CONTROL = new PostgresExtension();

  @Test
  void two_fleet_migrate_processes_at_once_migrate_each_tenant_exactly_once_without_deadlock(
      @TempDir Path dir) throws Exception {
    List<String> databases = new ArrayList<>();
    List<String> secrets = new ArrayList<>();
    try {
      for (int t = 0; t < TENANTS; t++) {
        String db = PostgresExtension.newDatabase();
        databases.add(db);
        int n = t;
        Tenants.route(db, IntStream.range(0, DOMAINS).mapToObj(i -> "t" + n + "-d" + i).toList());
        String dsn = Tenants.dsn(db, "proc-secret-" + t + "-a91c");
        secrets.add(Tenants.password(dsn));
        assertThat(
                Cli.run(
                        "fleet",
                        "register",
                        "--control",
                        CONTROL.jdbcUrl(),
                        "--tenant",
                        "tenant-" + t,
                        "--dsn",
                        dsn)
                    .exit())
            .isEqualTo(ExitCodes.OK);
      }

      // hold tenant-0's lock so both processes are polling for it when it is released
      Process first;
      Process second;
      try (Connection hold = PostgresExtension.connect(databases.get(0))) {
        try (PreparedStatement s = hold.prepareStatement("SELECT pg_advisory_lock(?)")) {
          s.setLong(1, AdvisoryLocks.tenantLockKey("tenant-0"));
          s.execute();
        }
        first = start(dir, "a");
        second = start(dir, "b");
        waitForLockPollers(hold, databases.get(0), 2, first, second);
        try (PreparedStatement s = hold.prepareStatement("SELECT pg_advisory_unlock(?)")) {
          s.setLong(1, AdvisoryLocks.tenantLockKey("tenant-0"));
          s.execute();
        }
      }
      boolean firstDone = first.waitFor(5, TimeUnit.MINUTES); // hang guard
      boolean secondDone = second.waitFor(5, TimeUnit.MINUTES);
      if (!firstDone || !secondDone) {
        first.destroyForcibly();
        second.destroyForcibly();
      }
      String outA = Files.readString(dir.resolve("a.out"), StandardCharsets.UTF_8);
      String errA = Files.readString(dir.resolve("a.err"), StandardCharsets.UTF_8);
      String outB = Files.readString(dir.resolve("b.out"), StandardCharsets.UTF_8);
      String errB = Files.readString(dir.resolve("b.err"), StandardCharsets.UTF_8);
      assertThat(firstDone && secondDone).as("both processes ended (no deadlock)").isTrue();
      assertThat(first.exitValue()).as(errA).isEqualTo(ExitCodes.OK);
      assertThat(second.exitValue()).as(errB).isEqualTo(ExitCodes.OK);

      JsonNode a = JSON.readTree(outA);
      JsonNode b = JSON.readTree(outB);
      int waited = 0;
      for (int t = 0; t < TENANTS; t++) {
        JsonNode ta = tenant(a, "tenant-" + t);
        JsonNode tb = tenant(b, "tenant-" + t);
        assertThat(ta.get("status").asText()).isEqualTo("active");
        assertThat(tb.get("status").asText()).isEqualTo("active");
        int appliedA = ta.get("applied").asInt();
        int appliedB = tb.get("applied").asInt();
        assertThat(List.of(appliedA, appliedB))
            .as("tenant-%d migrated by exactly one process", t)
            .containsExactlyInAnyOrder(MIGRATIONS_PER_TENANT, 0);
        waited += appliedA == 0 ? 1 : 0;
        try (Connection c = PostgresExtension.connect(databases.get(t))) {
          for (int i = 0; i < DOMAINS; i++) {
            String schema = DomainSchemas.schemaName("t" + t + "-d" + i);
            assertThat(
                    Fixtures.rows(
                        c,
                        "SELECT version FROM \""
                            + schema
                            + "\".flyway_schema_history"
                            + " WHERE version IS NOT NULL AND success ORDER BY installed_rank"))
                .containsExactlyElementsOf(VERSIONS.stream().map(List::of).toList());
          }
        }
        assertThat(Tenants.advisoryLocks(databases.get(t))).isZero();
      }
      String errors = errA + errB;
      assertThat(errors).contains("took the lock of tenant tenant-0 after");
      assertThat(errors).doesNotContain("ERROR").doesNotContain("Exception");
      for (String secret : secrets) {
        assertThat(outA + errA + outB + errB).doesNotContain(secret);
      }
      LOG.info(
          "two processes: tenants migrated by the first {}, by the second {}",
          TENANTS - waited,
          waited);
    } finally {
      for (String db : databases) {
        PostgresExtension.dropDatabase(db);
      }
    }
  }

  /** The main domain set's versions, then the test's concurrent-index V900. */
  private static List<String> versions() {
    // the scripts, not 1 to the latest: the set may have gaps
    List<String> out = new ArrayList<>(dev.ledger.testing.MigrationScripts.versions("domain"));
    out.add("900");
    return List.copyOf(out);
  }

  private Process start(Path dir, String name) throws Exception {
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb =
        new ProcessBuilder(
            java,
            "-cp",
            classpath,
            "-Dlogback.configurationFile=logback.xml",
            "dev.ledger.app.Main",
            "fleet",
            "migrate",
            "--control",
            CONTROL.jdbcUrl(),
            "--parallelism",
            "2",
            "--schema-parallelism",
            "3",
            "--lock-timeout",
            "PT4M",
            "--domain-location",
            "classpath:db/test/concurrent-index",
            "--json");
    pb.environment().put("LEDGER_LOG_LEVEL", "DEBUG");
    pb.redirectOutput(dir.resolve(name + ".out").toFile());
    pb.redirectError(dir.resolve(name + ".err").toFile());
    pb.directory(new File(System.getProperty("user.dir")));
    return pb.start();
  }

  /** Waits until {@code n} other sessions are connected to the tenant's database (polling). */
  private static void waitForLockPollers(
      Connection hold, String database, int n, Process first, Process second) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
    while (System.nanoTime() < deadline && first.isAlive() && second.isAlive()) {
      try (PreparedStatement s =
          hold.prepareStatement(
              "SELECT count(*) FROM pg_stat_activity WHERE datname = ? AND pid <> pg_backend_pid()")) {
        s.setString(1, database);
        try (ResultSet rs = s.executeQuery()) {
          rs.next();
          if (rs.getLong(1) >= n) {
            return;
          }
        }
      }
      Thread.sleep(100);
    }
    throw new AssertionError("the two processes never both waited for tenant-0's lock");
  }

  private static JsonNode tenant(JsonNode document, String tenant) {
    for (JsonNode t : document.at("/report/tenants")) {
      if (t.get("tenant").asText().equals(tenant)) {
        return t;
      }
    }
    throw new AssertionError("no report of " + tenant);
  }
}

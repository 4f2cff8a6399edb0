package dev.ledger.app.migrate;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.migrate.AdvisoryLocks;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
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
import org.junit.jupiter.api.Test;

/**
 * A migration run stopped by SIGTERM (a deploy pipeline's timeout, a pod's termination), in a real
 * JVM: it ends with the JVM's status 143 and, with {@code --json}, still prints its one JSON
 * document, saying interrupted, with the progress so far; in text, one line saying so. The run is
 * stopped while it waits for the migration lock the test holds, so the moment is deterministic.
 */
class InterruptedRunTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  record Run(int exit, String out, String err) {
    String all() {
      return out + err;
    }
  }

  @Test
  void migrate_json_stopped_by_sigterm_prints_one_document_saying_interrupted() throws Exception {
    Run run = migrateStoppedWhileLocked("migrate", "--json");
    assertThat(run.exit()).as(run.err()).isEqualTo(143);
    assertThat(run.out()).hasLineCount(1);
    JsonNode doc = JSON.readTree(run.out());
    String message =
        "interrupted by SIGTERM before the run had read the database; run it again to finish";
    assertThat(doc.get("command").asText()).isEqualTo("ledger-app migrate");
    assertThat(doc.get("exitCode").asInt()).isEqualTo(143);
    assertThat(doc.get("ok").asBoolean()).isFalse();
    assertThat(doc.get("report").isNull()).isTrue();
    assertThat(doc.get("outcome").asText()).isEqualTo("interrupted");
    assertThat(doc.get("signal").asText()).isEqualTo("SIGTERM");
    assertThat(doc.get("error").asText()).isEqualTo(message);
    assertThat(doc.get("progress").get("done").asInt()).isZero();
    assertThat(run.err()).endsWith("ledger-app migrate: " + message + "\n");
    assertThat(run.all()).doesNotContain("pw-intr-5d2e");
  }

  @Test
  void plan_in_text_stopped_by_sigterm_says_interrupted_on_stderr_and_nothing_on_stdout()
      throws Exception {
    Run run = migrateStoppedWhileLocked("plan");
    assertThat(run.exit()).as(run.err()).isEqualTo(143);
    assertThat(run.out()).isEmpty();
    assertThat(run.err())
        .endsWith(
            "ledger-app plan: interrupted by SIGTERM before the run had read the database;"
                + " run it again to finish\n");
  }

  /**
   * Runs the command in its own JVM while the test holds the database's migration lock, waits until
   * the process polls for it, then sends SIGTERM ({@link Process#destroy()}).
   */
  private static Run migrateStoppedWhileLocked(String... command) throws Exception {
    String db = PostgresExtension.newDatabase();
    Path dir = Files.createTempDirectory("interrupted");
    try (Connection hold = PostgresExtension.connect(db)) {
      try (PreparedStatement s = hold.prepareStatement("SELECT pg_advisory_lock(?)")) {
        s.setLong(1, AdvisoryLocks.databaseLockKey("public"));
        s.execute();
      }
      // a password the server ignores (trust): it must not be printed in any case
      String url = TestServer.get().urlFor(db) + "&password=pw-intr-5d2e";
      List<String> args = new ArrayList<>(List.of(command));
      args.addAll(List.of("--url", url, "--lock-timeout", "PT3M"));
      Process p = start(dir, args);
      waitForPoller(hold, db, p);
      p.destroy(); // SIGTERM
      assertThat(p.waitFor(1, TimeUnit.MINUTES)).as("stopped within a minute").isTrue();
      return new Run(
          p.exitValue(),
          Files.readString(dir.resolve("out"), StandardCharsets.UTF_8),
          Files.readString(dir.resolve("err"), StandardCharsets.UTF_8));
    } finally {
      PostgresExtension.dropDatabase(db);
    }
  }

  private static Process start(Path dir, List<String> args) throws Exception {
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command =
        new ArrayList<>(
            List.of(
                java,
                "-cp",
                classpath,
                "-Dlogback.configurationFile=logback.xml",
                "dev.ledger.app.Main"));
    command.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().remove("LEDGER_URL");
    pb.redirectOutput(dir.resolve("out").toFile());
    pb.redirectError(dir.resolve("err").toFile());
    pb.directory(new File(System.getProperty("user.dir")));
    return pb.start();
  }

  /**
   * Waits until the process has tried the migration lock at least once (a session of it in the
   * database whose last statement was {@code pg_try_advisory_lock}): by then its run, and the
   * progress it reports, have started. Waiting for a session alone was not enough on a loaded
   * machine: the pool connects before the run starts, and a SIGTERM in between found no progress.
   */
  private static void waitForPoller(Connection hold, String database, Process p) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    while (System.nanoTime() < deadline && p.isAlive()) {
      try (PreparedStatement s =
          hold.prepareStatement(
              "SELECT count(*) FROM pg_stat_activity WHERE datname = ? AND pid <> pg_backend_pid()"
                  + " AND query LIKE '%pg_try_advisory_lock%'")) {
        s.setString(1, database);
        try (ResultSet rs = s.executeQuery()) {
          rs.next();
          if (rs.getLong(1) >= 1) {
            return;
          }
        }
      }
      Thread.sleep(50);
    }
    throw new AssertionError("the process never tried the lock (alive: " + p.isAlive() + ")");
  }
}

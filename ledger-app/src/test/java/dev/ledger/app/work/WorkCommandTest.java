package dev.ledger.app.work;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ledger-app work} in a process of its own: the command gets the task as JSON on stdin, exit
 * 0 completes it with stdout as the handoff, non-zero fails it with stderr (retried, then a dead
 * letter), and SIGTERM stops the worker cleanly with nothing left claimed.
 */
class WorkCommandTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @TempDir Path dir;

  @Test
  void an_unknown_domain_is_refused_at_start_with_the_operators_remedy() {
    dev.ledger.app.Cli.Result r =
        dev.ledger.app.Cli.run(
            "work", "--domain", "paymnets", "--command", "true", "--url", PG.jdbcUrl());
    assertThat(r.exit()).isEqualTo(dev.ledger.app.ExitCodes.USAGE);
    assertThat(r.out()).isEmpty();
    assertThat(r.err())
        .isEqualTo(
            "error: --domain: unknown domain 'paymnets': no task was ever filed there and no"
                + " schema provisioned. Check the spelling, or provision it first: ledger-app"
                + " migrate --provision paymnets (see 'ledger-app work --help')\n");
  }

  @Test
  void an_empty_command_is_refused_and_claims_nothing() {
    Ledger ledger = Ledger.open(PG.dataSource());
    String id = ledger.fileAndAdmit(TaskSpec.builder("empty-cmd", "keep me").build());
    for (String command : new String[] {"", "   "}) {
      dev.ledger.app.Cli.Result r =
          dev.ledger.app.Cli.run(
              "work", "--domain", "empty-cmd", "--command", command, "--url", PG.jdbcUrl());
      assertThat(r.exit()).as(r.all()).isEqualTo(dev.ledger.app.ExitCodes.USAGE);
      assertThat(r.out()).isEmpty();
      assertThat(r.err())
          .isEqualTo("error: --command: must not be empty (see 'ledger-app work --help')\n");
    }
    assertThat(ledger.get(id).status()).isEqualTo(dev.ledger.Status.ADMITTED);
  }

  @Test
  void runs_a_command_per_task_fails_with_stderr_and_stops_cleanly_on_sigterm() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    String good = ledger.file(TaskSpec.builder("ops", "good").body("hello").build());
    ledger.admit(good);
    String bad = ledger.file(TaskSpec.builder("ops", "bad").body("fail please").build());
    ledger.admit(bad);
    // echo the body back; fail when it asks to
    String command =
        "read doc; case \"$doc\" in *'fail please'*) echo \"no way $LEDGER_ATTEMPT\" >&2; exit 3;;"
            + " *'\"body\":\"sleep\"'*) sleep 1;; esac;"
            + " echo \"$doc\" | grep -o '\"title\":\"[a-z]*\"'";
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb =
        new ProcessBuilder(
            java,
            "-cp",
            classpath,
            "dev.ledger.app.Main",
            "work",
            "--url",
            PG.jdbcUrl(),
            "--domain",
            "ops",
            "--command",
            command,
            "--max-attempts",
            "2",
            "--backoff",
            "100ms",
            "--poll",
            "200ms");
    pb.redirectOutput(dir.resolve("work.out").toFile());
    pb.redirectError(dir.resolve("work.err").toFile());
    pb.directory(new File(System.getProperty("user.dir")));
    Process p = pb.start();
    try {
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while ((ledger.get(good).status() != Status.COMPLETED || ledger.deadLetters("ops").isEmpty())
          && System.nanoTime() < end) {
        assertThat(p.isAlive()).as(Files.readString(dir.resolve("work.err"))).isTrue();
        Thread.sleep(50);
      }
      Task done = ledger.get(good);
      assertThat(done.status()).isEqualTo(Status.COMPLETED);
      assertThat(done.handoff()).isEqualTo("\"title\":\"good\"");
      List<Task> dead = ledger.deadLetters("ops");
      assertThat(dead).hasSize(1);
      assertThat(dead.get(0).reason())
          .startsWith("dead letter: attempt 2 of 2 failed at ")
          .endsWith(": exit 3: no way 2");
      assertThat(ledger.get(bad).reason()).endsWith(": exit 3: no way 1");

      // a slow task is running when SIGTERM comes: it finishes within the shutdown timeout
      String slow = ledger.file(TaskSpec.builder("ops", "slow").body("sleep").build());
      ledger.admit(slow);
      while (ledger.get(slow).status() != Status.CLAIMED && System.nanoTime() < end) {
        Thread.sleep(10);
      }
      p.destroy(); // SIGTERM
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(ledger.list("ops", Status.CLAIMED)).isEmpty();
      assertThat(ledger.get(slow).status()).isEqualTo(Status.COMPLETED);
      assertThat(ledger.get(slow).handoff()).isEqualTo("\"title\":\"slow\"");
      assertThat(Files.readString(dir.resolve("work.out")))
          .contains("working on ops")
          .endsWith(
              "stopped: 2 completed, 1 failed and retried, 1 dead letter(s), 0 lease(s) lost\n");
    } finally {
      p.destroyForcibly();
    }
  }

  @Test
  void with_json_prints_a_line_per_event_and_a_summary_then_exits_143_on_sigterm()
      throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    String good = ledger.file(TaskSpec.builder("jobs", "good").body("ok").build());
    ledger.admit(good);
    String bad = ledger.file(TaskSpec.builder("jobs", "bad").body("fail please").build());
    ledger.admit(bad);
    String command =
        "read doc; case \"$doc\" in *'fail please'*) echo nope >&2; exit 3;; esac; echo fine";
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb =
        new ProcessBuilder(
            java,
            // the app's log configuration (stderr), not the tests' (stdout)
            "-Dlogback.configurationFile="
                + Path.of("src/main/resources/logback.xml").toAbsolutePath(),
            "-cp",
            classpath,
            "dev.ledger.app.Main",
            "work",
            "--url",
            PG.jdbcUrl(),
            "--domain",
            "jobs",
            "--command",
            command,
            "--holder",
            "w-json",
            "--max-attempts",
            "1",
            "--poll",
            "200ms",
            "--json");
    pb.redirectOutput(dir.resolve("work.out").toFile());
    pb.redirectError(dir.resolve("work.err").toFile());
    Process p = pb.start();
    try {
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while ((ledger.get(good).status() != Status.COMPLETED || ledger.deadLetters("jobs").isEmpty())
          && System.nanoTime() < end) {
        assertThat(p.isAlive()).as(Files.readString(dir.resolve("work.err"))).isTrue();
        Thread.sleep(50);
      }
      assertThat(ledger.deadLetters("jobs")).extracting(Task::id).containsExactly(bad);
      p.destroy(); // SIGTERM
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
      // the JVM's status after SIGTERM, however cleanly it stopped: 128 + 15
      assertThat(p.exitValue()).isEqualTo(143);
      ObjectMapper mapper = new ObjectMapper();
      List<JsonNode> lines = new java.util.ArrayList<>();
      for (String line : Files.readAllLines(dir.resolve("work.out"))) {
        lines.add(mapper.readTree(line));
      }
      assertThat(lines).hasSize(4);
      JsonNode started = lines.get(0);
      assertThat(started.get("event").asText()).isEqualTo("started");
      assertThat(started.get("domain").asText()).isEqualTo("jobs");
      assertThat(started.get("holder").asText()).isEqualTo("w-json");
      assertThat(started.get("concurrency").asInt()).isEqualTo(1);
      java.util.Map<String, JsonNode> handled = new java.util.HashMap<>();
      for (JsonNode l : lines.subList(1, 3)) {
        assertThat(l.get("event").asText()).isEqualTo("handled");
        handled.put(l.get("id").asText(), l);
      }
      assertThat(handled.keySet()).containsExactlyInAnyOrder(good, bad);
      assertThat(handled.get(good).get("exit").asInt()).isZero();
      assertThat(handled.get(good).get("outcome").asText()).isEqualTo("done");
      assertThat(handled.get(good).get("attempt").asInt()).isEqualTo(1);
      assertThat(handled.get(good).get("max_attempts").asInt()).isEqualTo(1);
      assertThat(handled.get(bad).get("exit").asInt()).isEqualTo(3);
      assertThat(handled.get(bad).get("outcome").asText()).isEqualTo("failed");
      assertThat(handled.get(bad).get("ms").asLong()).isNotNegative();
      JsonNode stopped = lines.get(3);
      assertThat(stopped.toString())
          .isEqualTo(
              "{\"event\":\"stopped\",\"domain\":\"jobs\",\"holder\":\"w-json\","
                  + "\"completed\":1,\"retried\":0,\"dead\":1,\"lost\":0}");
      assertThat(ledger.list("jobs", Status.CLAIMED)).isEmpty();
    } finally {
      p.destroyForcibly();
    }
  }
}

package dev.ledger.app.work;

import static org.assertj.core.api.Assertions.assertThat;

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
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
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
      assertThat(Files.readString(dir.resolve("work.out"))).contains("working on ops");
    } finally {
      p.destroyForcibly();
    }
  }
}

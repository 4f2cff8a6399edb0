package dev.ledger.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Ledger;
import dev.ledger.Task;
import dev.ledger.TaskSpec;
import dev.ledger.testing.LogCapture;
import dev.ledger.testing.PostgresExtension;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A pool's log lines carry task ids and error classes, not the text of a failure (a handler's
 * message, an exception's message, which may hold personal data from the task), unless the pool is
 * built with {@code logTaskText(true)} (issue 23, item 9).
 */
class TaskTextLoggingTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final String ADDRESS = "alice@example.com";

  private static void await(String what, BooleanSupplier done) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(20);
    }
  }

  /** Runs two poison tasks (one returns a failure, one throws) to their dead letters. */
  private String logsOfFailures(String domain, boolean logTaskText) throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    ledger.provision(domain);
    LogCapture logs = LogCapture.begin();
    try (WorkerPool pool =
        WorkerPool.builder(ledger)
            .pollInterval(Duration.ofMillis(100))
            .logTaskText(logTaskText)
            .domain(
                domain,
                (task, ctx) -> {
                  if (task.spec().title().equals("returns")) {
                    return Outcome.failed("mail to " + task.spec().body() + " bounced");
                  }
                  throw new IllegalStateException("no mailbox " + task.spec().body());
                })
            .start()) {
      for (String title : List.of("returns", "throws")) {
        ledger.fileAndAdmit(TaskSpec.builder(domain, title).body(ADDRESS).maxAttempts(2).build());
      }
      await("two dead letters", () -> ledger.deadLetters(domain).size() == 2);
      for (Task dead : ledger.deadLetters(domain)) {
        assertThat(dead.reason()).contains(ADDRESS); // the ledger keeps the error
      }
      Thread.sleep(100);
    } finally {
      logs.stop();
    }
    return logs.text();
  }

  @Test
  void failures_are_logged_by_task_id_and_error_class_without_their_text_by_default()
      throws Exception {
    String text = logsOfFailures("quiet-logs", false);
    assertThat(text).contains("is a dead letter after 2 attempts: Outcome.failed");
    assertThat(text).contains("is a dead letter after 2 attempts: java.lang.IllegalStateException");
    assertThat(text).doesNotContain(ADDRESS).doesNotContain("alice");
  }

  @Test
  void failures_are_logged_with_their_text_when_the_pool_is_told_to() throws Exception {
    String text = logsOfFailures("loud-logs", true);
    assertThat(text).contains("mail to " + ADDRESS + " bounced");
    assertThat(text).contains("no mailbox " + ADDRESS);
  }
}

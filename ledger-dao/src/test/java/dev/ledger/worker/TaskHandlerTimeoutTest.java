package dev.ledger.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A handler timeout per task ({@link PoolBuilder#handlerTimeoutOf}) on real PostgreSQL: the task
 * given one times out, is retried and dead-letters at its own max attempts, while a slower task of
 * the same pool without one completes; a chooser that picks a timeout out of range fails the
 * attempt without running the handler.
 */
class TaskHandlerTimeoutTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static Ledger ledger;

  @BeforeAll
  static void open() {
    ledger = Ledger.open(PG.dataSource());
  }

  @Test
  void a_hanging_task_with_its_own_timeout_times_out_is_retried_and_dead_letters()
      throws Exception {
    String domain = "per-task";
    String hangs =
        ledger.fileAndAdmit(
            TaskSpec.builder(domain, "hangs")
                .requirements(List.of("slow-api"))
                .maxAttempts(2)
                .build());
    String slow = ledger.fileAndAdmit(TaskSpec.builder(domain, "slow but fine").build());
    AtomicInteger interrupted = new AtomicInteger();
    AtomicInteger slowRuns = new AtomicInteger();
    try (WorkerPool pool =
        WorkerPool.builder(ledger)
            .concurrency(2)
            .manifest(List.of("slow-api"))
            .pollInterval(Duration.ofMillis(50))
            .retry(new RetryPolicy(5, Duration.ofMillis(50), Duration.ofMillis(100), 2.0, 0))
            // no pool timeout: only the tasks that need the slow API get one
            .handlerTimeoutOf(
                t -> t.spec().requirements().contains("slow-api") ? Duration.ofMillis(200) : null)
            .domain(
                domain,
                (task, ctx) -> {
                  if (task.spec().title().equals("hangs")) {
                    try {
                      Thread.sleep(600_000);
                    } catch (InterruptedException e) {
                      interrupted.incrementAndGet();
                      throw e;
                    }
                  }
                  slowRuns.incrementAndGet();
                  Thread.sleep(500); // longer than the other task's timeout
                  return Outcome.done("ok");
                })
            .start()) {
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while ((ledger.deadLetters(domain).isEmpty() || ledger.get(slow).status() != Status.COMPLETED)
          && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
    }
    List<Task> dead = ledger.deadLetters(domain);
    assertThat(dead).hasSize(1);
    assertThat(interrupted.get()).isEqualTo(2); // the task's own max attempts, not the pool's 5
    List<Task> attempts = ledger.list(domain, Status.INVALIDATED);
    assertThat(attempts).hasSize(2);
    assertThat(attempts).extracting(Task::id).contains(hangs);
    assertThat(attempts)
        .allSatisfy(
            t ->
                assertThat(t.reason())
                    .contains("timed out after PT0.2S (the handler was interrupted)"));
    assertThat(ledger.get(slow).status()).isEqualTo(Status.COMPLETED);
    assertThat(slowRuns.get()).isEqualTo(1);
  }

  @Test
  void a_timeout_chosen_out_of_range_fails_the_attempt_without_running_the_handler()
      throws Exception {
    String domain = "bad-choice";
    ledger.fileAndAdmit(TaskSpec.builder(domain, "t").maxAttempts(1).build());
    AtomicInteger runs = new AtomicInteger();
    try (WorkerPool pool =
        WorkerPool.builder(ledger)
            .pollInterval(Duration.ofMillis(50))
            .handlerTimeoutOf(t -> Duration.ofMillis(1))
            .domain(
                domain,
                (task, ctx) -> {
                  runs.incrementAndGet();
                  return Outcome.done();
                })
            .start()) {
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (ledger.deadLetters(domain).isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
    }
    List<Task> dead = ledger.deadLetters(domain);
    assertThat(dead).hasSize(1);
    assertThat(dead.get(0).reason()).contains("handler timeout: ").contains("handler_timeout");
    assertThat(runs.get()).isZero();
  }
}

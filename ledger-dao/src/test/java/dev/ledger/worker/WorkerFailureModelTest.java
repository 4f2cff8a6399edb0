package dev.ledger.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The failure model's crash case in one JVM: a worker that claimed a task and then stopped (here: a
 * claim nobody heartbeats, as a killed JVM leaves it) costs the task an attempt when its lease
 * expires, so max attempts ends it as a dead letter with "lease expired" as its last error; a
 * release does not cost one. The two-JVM kill is {@link WorkerCrashTest}.
 */
class WorkerFailureModelTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final RetryPolicy FAST =
      new RetryPolicy(3, Duration.ofMillis(100), Duration.ofMillis(100), 1.0, 0.0);

  private Ledger ledger;
  private WorkerPool pool;

  @BeforeEach
  void open() {
    ledger = Ledger.open(PG.dataSource());
  }

  @AfterEach
  void close() {
    if (pool != null) {
      pool.close(Duration.ZERO);
    }
  }

  private static void await(String what, BooleanSupplier done) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(20);
    }
  }

  /** Claims the task as a worker that then dies: no heartbeat, no release. */
  private Lease crashedClaim(String id, String holder) {
    return ledger.claim(id, holder, Duration.ofMillis(300), List.of(), Label.PUBLIC);
  }

  @Test
  void an_expired_lease_at_the_last_attempt_makes_a_dead_letter_whose_error_says_lease_expired()
      throws Exception {
    String domain = "crash-dead";
    String id = ledger.file(TaskSpec.builder(domain, "crashes its worker").maxAttempts(1).build());
    ledger.admit(id);
    crashedClaim(id, "died-1");
    List<String> ran = new CopyOnWriteArrayList<>();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    pool =
        WorkerPool.builder(ledger)
            .retry(FAST)
            .pollInterval(Duration.ofMillis(100))
            .metrics(MicrometerWorkerMetrics.of(registry))
            .domain(
                domain,
                (task, ctx) -> {
                  ran.add(task.id());
                  return Outcome.done();
                })
            .start();
    await("the dead letter", () -> !ledger.deadLetters(domain).isEmpty());
    Task dead = ledger.get(id);
    assertThat(dead.status()).isEqualTo(Status.INVALIDATED);
    assertThat(dead.supersededBy()).isNull();
    assertThat(dead.reason())
        .startsWith("dead letter: attempt 1 of 1 failed at ")
        .contains(": lease expired: died-1 held the task until ")
        .endsWith("without completing or releasing it (the worker died or stalled)");
    assertThat(ledger.deadLetters(domain)).extracting(Task::id).containsExactly(id);
    // the handler never ran: the attempt was the dead worker's
    assertThat(ran).isEmpty();
    assertThat(ledger.filedFrom(id)).isEmpty();
    assertThat(registry.get("ledger.tasks.failed").tag("domain", domain).counter().count())
        .isEqualTo(1.0);
    assertThat(registry.get("ledger.tasks.dead").tag("domain", domain).counter().count())
        .isEqualTo(1.0);
    assertThat(registry.find("ledger.handler.time").timers()).isEmpty();
  }

  @Test
  void a_crash_costs_an_attempt_and_the_retry_runs_as_the_next_attempt_after_its_backoff()
      throws Exception {
    String domain = "crash-retry";
    String root = ledger.file(TaskSpec.builder(domain, "crashed once").build());
    ledger.admit(root);
    crashedClaim(root, "died-1");
    List<Integer> attempts = new CopyOnWriteArrayList<>();
    List<String> ran = new CopyOnWriteArrayList<>();
    pool =
        WorkerPool.builder(ledger)
            .retry(FAST)
            .pollInterval(Duration.ofMillis(100))
            .domain(
                domain,
                (task, ctx) -> {
                  attempts.add(ctx.attempt());
                  ran.add(task.id());
                  return Outcome.done("attempt " + ctx.attempt());
                })
            .start();
    await("the retry's completion", () -> !ran.isEmpty());
    Task first = ledger.get(root);
    assertThat(first.status()).isEqualTo(Status.INVALIDATED);
    assertThat(first.reason())
        .startsWith("attempt 1 of 3 failed at ")
        .contains(": lease expired: died-1 held the task until ");
    List<Task> chain = ledger.filedFrom(root);
    assertThat(chain).extracting(Task::id).containsExactly(first.supersededBy());
    Task retry = chain.get(0);
    assertThat(retry.spec().origin()).isEqualTo("retries:" + root);
    assertThat(retry.spec().upstreamEvent()).isEqualTo("attempt:2");
    await("completion", () -> ledger.get(retry.id()).status() == Status.COMPLETED);
    assertThat(ledger.get(retry.id()).handoff()).isEqualTo("attempt 2");
    assertThat(attempts).containsExactly(2);
    assertThat(ran).containsExactly(retry.id());
  }

  @Test
  void a_released_task_is_claimed_again_without_costing_an_attempt() throws Exception {
    String domain = "released";
    String id = ledger.file(TaskSpec.builder(domain, "handed back").maxAttempts(1).build());
    ledger.admit(id);
    Lease l = ledger.claim(id, "shutting-down", Duration.ofMinutes(1), List.of(), Label.PUBLIC);
    ledger.release(l);
    List<Integer> attempts = new CopyOnWriteArrayList<>();
    pool =
        WorkerPool.builder(ledger)
            .retry(FAST)
            .pollInterval(Duration.ofMillis(100))
            .domain(
                domain,
                (task, ctx) -> {
                  attempts.add(ctx.attempt());
                  return Outcome.done();
                })
            .start();
    await("completion", () -> ledger.get(id).status() == Status.COMPLETED);
    assertThat(attempts).containsExactly(1);
    assertThat(ledger.get(id).attempts()).isEqualTo(2L);
    assertThat(ledger.deadLetters(domain)).isEmpty();
  }
}

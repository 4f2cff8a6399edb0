package dev.ledger.worker;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.TaskSpec;
import dev.ledger.testing.KillSwitch;
import dev.ledger.testing.LosesAnswer;
import dev.ledger.testing.PostgresExtension;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A completion or a failure record that the database fails (its backend terminated as it runs, or
 * its commit's answer lost) is tried again while the lease lasts: every task completes exactly
 * once, no handler runs twice, no attempt is wasted, and the retries are counted (issue 23, item
 * 5).
 */
class CompletionRetryTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final int TASKS = 10;

  private WorkerPool pool;
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final Map<String, AtomicInteger> ran = new ConcurrentHashMap<>();
  private final CountDownLatch started = new CountDownLatch(TASKS);
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void close() {
    release.countDown();
    if (pool != null) {
      pool.close(Duration.ZERO);
    }
  }

  private static void await(String what, BooleanSupplier done) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(20);
    }
  }

  /** Starts a pool whose handlers block until released; fails attempt 1 when asked to. */
  private List<String> startBlocked(Ledger ledger, String domain, boolean failFirst)
      throws InterruptedException {
    ledger.provision(domain);
    List<TaskSpec> specs = new ArrayList<>();
    for (int i = 0; i < TASKS; i++) {
      specs.add(TaskSpec.builder(domain, "task " + i).build());
    }
    // filed before the start, so the start's one claim takes them all, and no claim (no commit)
    // runs until the handlers are released: not full, so a thread coming free claims nothing, and
    // the poll is a minute away
    List<String> ids = ledger.fileAll(specs);
    pool =
        WorkerPool.builder(ledger)
            .concurrency(TASKS + 2)
            .lease(Duration.ofSeconds(60))
            .pollInterval(Duration.ofMinutes(1))
            .retry(new RetryPolicy(3, Duration.ofMillis(50), Duration.ofMillis(50), 1.0, 0.0))
            .metrics(MicrometerWorkerMetrics.of(registry))
            .domain(
                domain,
                (task, ctx) -> {
                  ran.computeIfAbsent(task.id(), id -> new AtomicInteger()).incrementAndGet();
                  if (ctx.attempt() == 1) {
                    started.countDown();
                    release.await();
                    if (failFirst) {
                      return Outcome.failed("first attempt fails");
                    }
                  }
                  return Outcome.done("ok");
                })
            .start();
    assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
    return ids;
  }

  private double count(String meter, String domain) {
    Counter c = registry.find(meter).tag("domain", domain).counter();
    return c == null ? 0 : c.count();
  }

  private void assertCompletedOnce(Ledger ledger, String domain, List<String> ids) {
    for (String id : ids) {
      Task t = ledger.get(id);
      assertThat(t.status()).isEqualTo(Status.COMPLETED);
      assertThat(t.attempts()).isEqualTo(1); // claimed once: no lease ran out
      assertThat(ledger.history(id).stream().filter(e -> e.kind().equals("completed"))).hasSize(1);
    }
    assertThat(ran).hasSize(TASKS);
    assertThat(ran.values()).allMatch(n -> n.get() == 1);
    assertThat(count("ledger.tasks.completed", domain)).isEqualTo(TASKS);
    assertThat(count("ledger.tasks.claimed", domain)).isEqualTo(TASKS);
    assertThat(count("ledger.tasks.lease.lost", domain)).isZero();
    assertThat(count("ledger.tasks.failed", domain)).isZero();
    assertThat(count("ledger.tasks.completion.retried", domain)).isBetween(1.0, 2.0 * TASKS);
  }

  @Test
  void completions_whose_backend_is_terminated_are_retried_while_the_lease_lasts()
      throws Exception {
    KillSwitch kill = new KillSwitch(PG.databaseName());
    Ledger ledger =
        Ledger.open(PG.dataSource(), LedgerConfig.builder().executeListener(kill).build());
    String domain = "killed-completion";
    List<String> ids = startBlocked(ledger, domain, false);
    kill.arm(sql -> sql.contains("\"routes\""));
    release.countDown();
    await(
        "every task completed",
        () ->
            ledger.countByStatus(domain).get(Status.COMPLETED) != null
                && ledger.countByStatus(domain).get(Status.COMPLETED) == TASKS);
    assertThat(kill.fired()).isEqualTo(1);
    await("the completions counted", () -> count("ledger.tasks.completed", domain) == TASKS);
    assertCompletedOnce(ledger, domain, ids);
  }

  @Test
  void a_completion_whose_commit_answer_was_lost_is_found_completed_by_its_retry()
      throws Exception {
    // the pool's completion commits itself in its one execute (issue 26): the answer of that
    // execute is what is lost, after the server committed
    LosesAnswer lossy = new LosesAnswer();
    try (HikariDataSource pool = PostgresExtension.pool(PG.jdbcUrl(), 20)) {
      Ledger ledger = Ledger.open(lossy.wrap(pool));
      String domain = "unknown-commit";
      List<String> ids = startBlocked(ledger, domain, false);
      lossy.arm(sql -> sql.contains("\"routes\""));
      release.countDown();
      await("the completions counted", () -> count("ledger.tasks.completed", domain) == TASKS);
      assertThat(lossy.fired()).isEqualTo(1);
      assertCompletedOnce(ledger, domain, ids);
    }
  }

  @Test
  void failure_records_whose_backend_is_terminated_are_retried_while_the_lease_lasts()
      throws Exception {
    KillSwitch kill = new KillSwitch(PG.databaseName());
    Ledger ledger =
        Ledger.open(PG.dataSource(), LedgerConfig.builder().executeListener(kill).build());
    String domain = "killed-failure";
    List<String> ids = startBlocked(ledger, domain, true);
    kill.arm(KillSwitch.insertInto("events"));
    release.countDown();
    await("every retry completed", () -> count("ledger.tasks.completed", domain) == TASKS);
    assertThat(kill.fired()).isEqualTo(1);
    for (String id : ids) {
      Task t = ledger.get(id);
      assertThat(t.status()).isEqualTo(Status.INVALIDATED);
      assertThat(t.reason()).startsWith("attempt 1 of 3 failed at ");
      assertThat(t.attempts()).isEqualTo(1);
      Task retry = ledger.get(t.supersededBy());
      assertThat(retry.status()).isEqualTo(Status.COMPLETED);
      assertThat(retry.spec().upstreamEvent()).isEqualTo("attempt:2");
    }
    assertThat(ledger.countByStatus(domain))
        .containsEntry(Status.INVALIDATED, (long) TASKS)
        .containsEntry(Status.COMPLETED, (long) TASKS)
        .containsEntry(Status.CLAIMED, 0L)
        .containsEntry(Status.ADMITTED, 0L)
        .containsEntry(Status.PROPOSED, 0L);
    assertThat(ran).hasSize(2 * TASKS);
    assertThat(ran.values()).allMatch(n -> n.get() == 1);
    assertThat(count("ledger.tasks.failed", domain)).isEqualTo(TASKS);
    assertThat(count("ledger.tasks.retried", domain)).isEqualTo(TASKS);
    assertThat(count("ledger.tasks.dead", domain)).isZero();
    assertThat(count("ledger.tasks.lease.lost", domain)).isZero();
    assertThat(count("ledger.tasks.failure.retried", domain)).isEqualTo(1.0);
  }
}

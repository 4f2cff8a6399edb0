package dev.ledger.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Ledger;
import dev.ledger.LoggedEvent;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.PostgresExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Rows of claimed tasks locked by another transaction hold up only their own completions: the pool
 * completes every other task while the lock is held, and the locked ones once it is released, each
 * exactly once (issue 23, item 4).
 */
class LockedRowsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final int LOCKED = 4;
  private static final int OTHERS = 400;

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

  private static void await(String what, Duration limit, BooleanSupplier done)
      throws InterruptedException {
    long end = System.nanoTime() + limit.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(20);
    }
  }

  @ParameterizedTest(name = "locked: {0}")
  @ValueSource(strings = {"tasks", "ledger_tasks"})
  void locked_rows_hold_up_only_their_own_completions(String table) throws Exception {
    String domain = "locked-" + table.replace('_', '-');
    ledger.provision(domain);
    Map<String, AtomicInteger> ran = new ConcurrentHashMap<>();
    CountDownLatch lockedStarted = new CountDownLatch(LOCKED);
    CountDownLatch rowsLocked = new CountDownLatch(1);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    pool =
        WorkerPool.builder(ledger)
            .concurrency(8)
            .lease(Duration.ofSeconds(60))
            .pollInterval(Duration.ofMillis(100))
            .metrics(MicrometerWorkerMetrics.of(registry))
            .domain(
                domain,
                (task, ctx) -> {
                  ran.computeIfAbsent(task.id(), id -> new AtomicInteger()).incrementAndGet();
                  if (task.spec().title().startsWith("locked")) {
                    lockedStarted.countDown();
                    rowsLocked.await();
                  }
                  return Outcome.done("ok");
                })
            .start();
    List<String> locked = new ArrayList<>();
    for (int i = 0; i < LOCKED; i++) {
      locked.add(ledger.fileAndAdmit(TaskSpec.builder(domain, "locked " + i).build()));
    }
    assertThat(lockedStarted.await(20, TimeUnit.SECONDS)).isTrue();
    String schema = DomainSchemas.quotedSchemaName(domain);
    String lockSql =
        table.equals("tasks")
            ? "SELECT id FROM " + schema + ".tasks WHERE id = ANY (?) FOR UPDATE"
            : "SELECT id FROM public.ledger_tasks WHERE id = ANY (?) FOR UPDATE";
    try (Connection holder = PostgresExtension.connect(PG.databaseName())) {
      holder.setAutoCommit(false);
      try (PreparedStatement ps = holder.prepareStatement(lockSql)) {
        ps.setArray(1, holder.createArrayOf("text", locked.toArray()));
        ps.executeQuery().close();
      }
      rowsLocked.countDown();
      List<TaskSpec> others = new ArrayList<>();
      for (int i = 0; i < OTHERS; i++) {
        others.add(TaskSpec.builder(domain, "other " + i).build());
      }
      ledger.fileAll(others);
      await(
          "the other tasks to complete while " + LOCKED + " rows are locked",
          Duration.ofSeconds(10),
          () -> ledger.countByStatus(domain).getOrDefault(Status.COMPLETED, 0L) == OTHERS);
      for (String id : locked) {
        assertThat(ledger.get(id).status()).isEqualTo(Status.CLAIMED);
      }
      holder.rollback();
    }
    await(
        "the locked tasks to complete after the lock is released",
        Duration.ofSeconds(10),
        () -> ledger.countByStatus(domain).getOrDefault(Status.COMPLETED, 0L) == OTHERS + LOCKED);
    assertThat(ran).hasSize(OTHERS + LOCKED);
    assertThat(ran.values()).allMatch(n -> n.get() == 1);
    for (String id : locked) {
      assertThat(ledger.history(id).stream().map(LoggedEvent::kind).filter("completed"::equals))
          .hasSize(1);
    }
    assertThat(registry.get("ledger.tasks.completed").tag("domain", domain).counter().count())
        .isEqualTo(OTHERS + LOCKED);
    assertThat(registry.find("ledger.tasks.lease.lost").tag("domain", domain).counter()).isNull();
    assertThat(
            registry.get("ledger.tasks.completion.retried").tag("domain", domain).counter().count())
        .isGreaterThanOrEqualTo(1.0);
  }
}

package dev.ledger.retention;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Claimer;
import dev.ledger.Completion;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.TaskSpec;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.SettableClock;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A purge running while four worker threads claim and complete: no error on either side, exactly
 * the old completed tasks removed, every task that was open kept (and completed by the workers),
 * replay equal afterwards.
 */
@Tag("slow")
class RetentionConcurrencyTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final String DOMAIN = "busy";
  private static final int OLD = 2000;
  private static final int OPEN = 1000;

  @Test
  void a_purge_beside_claiming_workers_removes_only_the_old_tasks() throws Exception {
    SettableClock clock = new SettableClock(Instant.parse("2026-03-01T09:00:00Z"));
    Ledger ledger = Ledger.open(PG.dataSource(), LedgerConfig.builder().clock(clock).build());
    Claimer claimer = Claimer.of("w").lease(Duration.ofMinutes(10));
    for (int i = 0; i < OLD / 500; i++) {
      ledger.fileAll(specs("old", 500));
      List<Lease> leases = ledger.claimBatch(DOMAIN, claimer, 500);
      assertThat(leases).hasSize(500);
      assertThat(ledger.completeAll(DOMAIN, done(leases))).isEmpty();
    }
    clock.advance(Duration.ofHours(2));
    List<String> open = new ArrayList<>();
    for (int i = 0; i < OPEN / 500; i++) {
      open.addAll(ledger.fileAll(specs("open", 500)));
    }
    ledger.retention().set(DOMAIN, Duration.ofHours(1));

    ExecutorService workers = Executors.newFixedThreadPool(4);
    AtomicBoolean purging = new AtomicBoolean(true);
    List<Integer> completedByWorkers = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch firstDone = new CountDownLatch(1);
    List<Future<?>> running = new ArrayList<>();
    for (int w = 0; w < 4; w++) {
      Claimer mine = Claimer.of("worker-" + w).lease(Duration.ofMinutes(10));
      running.add(
          workers.submit(
              () -> {
                // claim until the queue is empty and the purge has finished
                while (true) {
                  List<Lease> got = ledger.claimBatch(DOMAIN, mine, 10);
                  if (got.isEmpty()) {
                    if (!purging.get()) {
                      return null;
                    }
                    Thread.sleep(5);
                    continue;
                  }
                  assertThat(ledger.completeAll(DOMAIN, done(got))).isEmpty();
                  completedByWorkers.add(got.size());
                  firstDone.countDown();
                }
              }));
    }
    // the workers are under way when the purge starts
    assertThat(firstDone.await(60, TimeUnit.SECONDS)).isTrue();
    PurgeReport report;
    try {
      report = ledger.retention().purge(DOMAIN, 200, p -> {});
    } finally {
      purging.set(false);
    }
    for (Future<?> f : running) {
      f.get(120, TimeUnit.SECONDS);
    }
    workers.shutdown();
    assertThat(workers.awaitTermination(10, TimeUnit.SECONDS)).isTrue();

    assertThat(report.tasksRemoved()).isEqualTo(OLD);
    assertThat(report.eventsRemoved()).isEqualTo(OLD * 4L);
    assertThat(completedByWorkers.stream().mapToInt(Integer::intValue).sum()).isEqualTo(OPEN);
    String s = "\"" + DomainSchemas.schemaName(DOMAIN) + "\"";
    try (Connection c = PostgresExtension.connect(PG.databaseName())) {
      assertThat(Fixtures.count(c, "SELECT count(*) FROM " + s + ".tasks")).isEqualTo(OPEN);
      assertThat(
              Fixtures.count(c, "SELECT count(*) FROM " + s + ".tasks WHERE status = 'completed'"))
          .isEqualTo(OPEN);
      assertThat(
              Fixtures.count(
                  c,
                  "SELECT count(*) FROM "
                      + s
                      + ".tasks WHERE id IN ("
                      + RetentionTest.quotedList(open)
                      + ")"))
          .isEqualTo(OPEN);
      assertThat(Fixtures.count(c, "SELECT count(*) FROM public.ledger_tasks")).isEqualTo(OPEN);
    }
    List<List<String>> live = RetentionTest.state(PG, DOMAIN);
    ledger.rebuild();
    assertThat(RetentionTest.state(PG, DOMAIN)).isEqualTo(live);
  }

  private static List<TaskSpec> specs(String title, int n) {
    List<TaskSpec> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(TaskSpec.builder(DOMAIN, title + " " + i).build());
    }
    return out;
  }

  private static List<Completion> done(List<Lease> leases) {
    return leases.stream().map(l -> new Completion(l, "ok")).toList();
  }
}

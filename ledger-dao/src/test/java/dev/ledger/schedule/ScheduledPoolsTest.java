package dev.ledger.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Ledger;
import dev.ledger.Task;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.WorkerProcess;
import dev.ledger.worker.Outcome;
import dev.ledger.worker.WorkerPool;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Worker pools file their domains' due schedule ticks, each once: two pools in this JVM, and three
 * worker JVMs of which two are killed and restarted on the way.
 */
class ScheduledPoolsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @TempDir Path dir;

  /**
   * The ticks filed, sorted; asserts none is filed twice and none missing between the first and
   * last.
   */
  private static List<Instant> contiguousTicks(Ledger ledger, String domain, String name) {
    List<Task> tasks = ledger.withOrigin(domain, Schedules.origin(name));
    List<Instant> ticks =
        tasks.stream().map(t -> Instant.parse(t.spec().upstreamEvent())).sorted().toList();
    assertThat(ticks).doesNotHaveDuplicates();
    for (int i = 1; i < ticks.size(); i++) {
      assertThat(ticks.get(i))
          .as("tick after %s", ticks.get(i - 1))
          .isEqualTo(ticks.get(i - 1).plusSeconds(1));
    }
    return ticks;
  }

  @Test
  void two_pools_of_a_domain_file_and_run_each_tick_once() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    ledger.provision("pools"); // a pool refuses a domain that has no schema
    Schedule s =
        ledger
            .schedules()
            .add(
                ScheduleSpec.builder("pools", "pools", Timing.every(Duration.ofSeconds(1)), "Tick")
                    .catchUp(1000)
                    .build());
    Set<String> handled = ConcurrentHashMap.newKeySet();
    List<String> twice = new ArrayList<>();
    List<WorkerPool> pools = new ArrayList<>();
    try {
      for (String holder : List.of("p1", "p2")) {
        pools.add(
            WorkerPool.builder(ledger)
                .dataSource(PG.dataSource())
                .holder(holder)
                .concurrency(2)
                .domain(
                    "pools",
                    (task, ctx) -> {
                      if (!handled.add(task.id())) {
                        synchronized (twice) {
                          twice.add(task.id());
                        }
                      }
                      return Outcome.done();
                    })
                .start());
      }
      Instant until = s.nextTick().plusSeconds(4);
      long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
      while ((handled.size() < 5 || Instant.now().isBefore(until))
          && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
    } finally {
      pools.forEach(WorkerPool::close);
    }
    List<Instant> ticks = contiguousTicks(ledger, "pools", "pools");
    assertThat(ticks.size()).isGreaterThanOrEqualTo(5);
    assertThat(ticks.get(0)).isEqualTo(s.nextTick());
    assertThat(ledger.schedules().get("pools").orElseThrow().lastTick())
        .isEqualTo(ticks.get(ticks.size() - 1));
    assertThat(twice).isEmpty();
    // a tick filed just before the pools closed may not have run: at most one run per tick
    assertThat(handled.size()).isBetween(5, ticks.size());
    assertThat(ledger.withOrigin("pools", Schedules.origin("pools")))
        .extracting(Task::id)
        .containsAll(handled);
  }

  /**
   * The test: a schedule every second, three worker JVMs for 60 seconds, two of them killed
   * (SIGKILL) and restarted on the way (at 15 s and 35 s, back 5 s later); every tick from the
   * first to the last filed is filed exactly once, none missing (the catch-up policy, 1000, skips
   * none here).
   */
  @Test
  @Tag("slow")
  void three_processes_two_killed_and_restarted_file_every_tick_once() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    ledger.provision("procs");
    Schedule s =
        ledger
            .schedules()
            .add(
                ScheduleSpec.builder(
                        "every-second", "procs", Timing.every(Duration.ofSeconds(1)), "Tick")
                    .catchUp(1000)
                    .build());
    long start = System.nanoTime();
    Instant lastKill;
    try (WorkerProcess a = start("w-a");
        WorkerProcess b = start("w-b");
        WorkerProcess c = start("w-c")) {
      sleepUntil(start, 15);
      assertThat(a.kill()).as(a.describe()).isEqualTo(137);
      sleepUntil(start, 20);
      try (WorkerProcess a2 = start("w-a2")) {
        sleepUntil(start, 35);
        assertThat(b.kill()).as(b.describe()).isEqualTo(137);
        lastKill = Instant.now();
        sleepUntil(start, 40);
        try (WorkerProcess b2 = start("w-b2")) {
          sleepUntil(start, 60);
          for (WorkerProcess w : List.of(c, a2, b2)) {
            assertThat(w.process().isAlive()).as(w.describe()).isTrue();
          }
        }
      }
    }
    // every worker is gone (closing a WorkerProcess kills it), and so are their backends (a COMMIT
    // sent just before a kill still commits): what they filed is final
    WorkerProcess.awaitBackendsGone(PG.dataSource(), Duration.ofSeconds(30));
    List<Instant> ticks = contiguousTicks(ledger, "procs", "every-second");
    assertThat(ticks.get(0)).isEqualTo(s.nextTick());
    Schedule after = ledger.schedules().get("every-second").orElseThrow();
    assertThat(after.lastTick()).isEqualTo(ticks.get(ticks.size() - 1));
    assertThat(after.nextTick()).isEqualTo(after.lastTick().plusSeconds(1));
    // filing went on after the last kill (w-c never stopped)
    assertThat(after.lastTick()).isAfter(lastKill);
    // each task created once: the ticks' tasks, and the retries of a tick's task whose lease a
    // killed worker held (the claim that takes over an expired lease records a failed attempt and
    // files the retry, origin retries:<task>); nothing else
    java.util.Map<String, Integer> created =
        new dev.ledger.testing.DomainLog(PG.dataSource(), "procs").countOf("created");
    assertThat(created).allSatisfy((id, n) -> assertThat(n).isEqualTo(1));
    Set<String> tickTasks = new java.util.HashSet<>();
    ledger
        .withOrigin("procs", Schedules.origin("every-second"))
        .forEach(t -> tickTasks.add(t.id()));
    assertThat(tickTasks).hasSize(ticks.size());
    assertThat(created.keySet()).containsAll(tickTasks);
    for (String id : created.keySet()) {
      if (!tickTasks.contains(id)) {
        Task retry = ledger.get(id);
        assertThat(retry.spec().origin()).as("task %s", id).startsWith("retries:");
        assertThat(tickTasks).contains(retry.spec().origin().substring("retries:".length()));
      }
    }
  }

  private WorkerProcess start(String holder) {
    return WorkerProcess.start(
        dir,
        holder,
        "pool",
        PG.jdbcUrl(),
        "procs",
        holder,
        "2",
        "1500",
        dir.resolve(holder + ".log").toString(),
        "4");
  }

  private static void sleepUntil(long startNanos, int seconds) throws InterruptedException {
    long wait = startNanos + Duration.ofSeconds(seconds).toNanos() - System.nanoTime();
    if (wait > 0) {
      Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
    }
  }
}

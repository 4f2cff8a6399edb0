package dev.ledger.worker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.Ledger;
import dev.ledger.LoggedEvent;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.WorkerProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two worker JVMs of 4 threads each drain 2,000 tasks; one is killed with SIGKILL mid-run and
 * started again. Every task's retry chain is completed exactly once, no two live leases ever
 * overlap on a task (read from the event log: each claim starts at or after the lease before it
 * ended), and the killed worker's unfinished tasks count the expired lease as a failed attempt
 * ("lease expired") and are run again, as their retries, by others.
 */
// slow (worker JVMs, one SIGKILLed): run on purpose, -Dledger.test.groups=slow
@Tag("slow")
class WorkerCrashTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final int TASKS = 2000;
  private static final String DOMAIN = "crash";
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  @Test
  void sigkilled_worker_loses_nothing_and_no_task_is_held_twice() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    List<String> ids = new ArrayList<>(TASKS);
    for (int i = 0; i < TASKS; i++) {
      String id = ledger.file(TaskSpec.builder(DOMAIN, "task " + i).build());
      ledger.admit(id);
      ids.add(id);
    }
    String url = PG.jdbcUrl();
    // w-b's handler never returns (it would take 10 minutes), so the kill finds it holding the
    // tasks its threads run, heartbeating them: a worker whose handlers took 4 ms could be killed
    // between a completion and its next claim, holding nothing (seen on a loaded machine)
    try (WorkerProcess a = start("w-a", url, 4);
        WorkerProcess b = start("w-b", url, 600_000)) {
      awaitCompleted(ledger, 400, Duration.ofMinutes(2), a, b);
      // the kill must find w-b working: on a loaded machine its JVM can start after w-a has
      // completed the 400 alone, and a worker killed before its first claim held nothing
      awaitStarted(dir.resolve("w-b.log"), Duration.ofMinutes(2), b);
      assertThat(b.kill()).isEqualTo(137);
      try (WorkerProcess b2 = start("w-b2", url, 4)) {
        awaitCompleted(ledger, TASKS, Duration.ofMinutes(3), a, b2);
        assertThat(a.process().isAlive()).as(a.describe()).isTrue();
        assertThat(b2.process().isAlive()).as(b2.describe()).isTrue();
      }
    }

    // a task whose lease expired under the killed worker counts that as a failed attempt: it is
    // invalidated ("lease expired") and its retry, filed from it, runs; so each filed task's retry
    // chain (the task and ledger.filedFrom(task)) is completed exactly once
    Set<String> rerunAfterKill = new HashSet<>();
    Set<String> completedTasks = new HashSet<>();
    for (String id : ids) {
      List<String> chain = new ArrayList<>();
      chain.add(id);
      ledger.filedFrom(id).forEach(t -> chain.add(t.id()));
      int completed = 0;
      for (String task : chain) {
        List<LoggedEvent> events = ledger.history(task);
        completed += (int) events.stream().filter(e -> e.kind().equals("completed")).count();
        if (ledger.get(task).status() == Status.COMPLETED) {
          completedTasks.add(task);
        }
        assertNoOverlap(task, events);
      }
      assertThat(completed).as(id + " and its retries").isEqualTo(1);
      assertThat(ledger.get(chain.get(chain.size() - 1)).status()).isEqualTo(Status.COMPLETED);
      Task root = ledger.get(id);
      if (root.status() == Status.INVALIDATED) {
        // only an expired lease fails a task here (the handler always completes): the killed
        // worker's, or, on an overloaded machine, a live worker's whose heartbeat came too late
        assertThat(root.reason())
            .as(id)
            .startsWith("attempt 1 of 5 failed at ")
            .containsPattern(": lease expired: w-(a|b|b2) held the task until ");
        assertThat(root.supersededBy()).isEqualTo(chain.get(1));
        if (root.reason().contains(": lease expired: w-b held")) {
          rerunAfterKill.add(id);
        }
      } else {
        assertThat(root.status()).as(id).isEqualTo(Status.COMPLETED);
        assertThat(chain).as(id).hasSize(1);
      }
    }
    // the killed worker held tasks (4 threads, a batch claim) that others ran after expiry
    assertThat(rerunAfterKill).isNotEmpty();
    List<String> lines = new ArrayList<>();
    for (String w : List.of("w-a", "w-b", "w-b2")) {
      Path log = dir.resolve(w + ".log");
      if (Files.exists(log)) {
        lines.addAll(Files.readAllLines(log, StandardCharsets.UTF_8));
      }
    }
    Set<String> started = new HashSet<>();
    lines.forEach(l -> started.add(l.split(" ")[0]));
    // every completed task's handler ran; the others' ran at most under the killed worker
    assertThat(started).containsAll(completedTasks);
    assertThat(completedTasks).hasSize(TASKS);
    assertThat(ledger.list(DOMAIN, Status.CLAIMED)).isEmpty();
  }

  /** A new claim of a task only once the lease before it ended (read from its event log). */
  private static void assertNoOverlap(String id, List<LoggedEvent> events) throws Exception {
    Instant leaseEnd = null;
    for (LoggedEvent e : events) {
      JsonNode p = JSON.readTree(e.payload());
      switch (e.kind()) {
        case "claimed" -> {
          if (leaseEnd != null) {
            assertThat(e.at())
                .as(id + " claimed while a lease was live")
                .isAfterOrEqualTo(leaseEnd);
          }
          leaseEnd = Instant.parse(p.get("until").asText());
        }
        case "heartbeat" -> leaseEnd = Instant.parse(p.get("until").asText());
        case "completed", "released", "invalidated" -> leaseEnd = null;
        default -> {}
      }
    }
  }

  /** A worker JVM: 4 threads, 1.5 s leases, a handler that logs the task, then sleeps. */
  private WorkerProcess start(String holder, String url, long handlerMs) {
    return WorkerProcess.start(
        dir,
        holder,
        "pool",
        url,
        DOMAIN,
        holder,
        "4",
        "1500",
        dir.resolve(holder + ".log").toString(),
        Long.toString(handlerMs));
  }

  /** Waits until a worker's handler has started a task (its log has a line). */
  private static void awaitStarted(Path log, Duration timeout, WorkerProcess worker)
      throws Exception {
    long end = System.nanoTime() + timeout.toNanos();
    while (!Files.exists(log) || Files.size(log) == 0) {
      if (!worker.process().isAlive()) {
        throw new AssertionError("a worker died: " + worker.describe());
      }
      if (System.nanoTime() > end) {
        throw new AssertionError("no task started by " + log + " after " + timeout);
      }
      Thread.sleep(25);
    }
  }

  private static void awaitCompleted(
      Ledger ledger, int n, Duration timeout, WorkerProcess... workers)
      throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (ledger.countByStatus(DOMAIN).get(Status.COMPLETED) < n) {
      for (WorkerProcess w : workers) {
        if (!w.process().isAlive()) {
          throw new AssertionError("a worker died: " + w.describe());
        }
      }
      if (System.nanoTime() > end) {
        throw new AssertionError("fewer than " + n + " tasks completed after " + timeout);
      }
      Thread.sleep(25);
    }
  }
}

package dev.ledger.worker;

import static dev.ledger.worker.WorkerPoolTest.await;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Ledger;
import dev.ledger.LoggedEvent;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The worker pool where a first trial broke it: one refused result among a batch of completions,
 * tasks prefetched but not started when the pool closes, and a handler that ignores the interrupt
 * of {@code close(Duration)}. Each test uses a domain of its own.
 */
class WorkerPoolEdgeTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private Ledger ledger;
  private final List<WorkerPool> pools = new ArrayList<>();

  @BeforeEach
  void open() {
    ledger = Ledger.open(PG.dataSource());
  }

  @AfterEach
  void close() {
    pools.forEach(p -> p.close(Duration.ZERO));
  }

  private WorkerPool start(WorkerPool.Builder b) {
    WorkerPool p = b.build();
    pools.add(p);
    return p.start();
  }

  private long kinds(String id, String kind) {
    return ledger.history(id).stream().map(LoggedEvent::kind).filter(kind::equals).count();
  }

  @Test
  void a_refused_handoff_fails_its_own_attempt_and_the_rest_of_its_batch_completes()
      throws Exception {
    String domain = "refused-handoff";
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      String title = i == 2 ? "bad" : "good " + i;
      ids.add(ledger.fileAndAdmit(TaskSpec.builder(domain, title).maxAttempts(1).build()));
    }
    Map<String, Integer> runs = new ConcurrentHashMap<>();
    // the six handlers return together, so their completions share one batch
    CyclicBarrier together = new CyclicBarrier(6);
    start(
        WorkerPool.builder(ledger)
            .concurrency(6)
            .lease(Duration.ofMinutes(5)) // a stuck lease would outlast the test
            .domain(
                domain,
                (task, ctx) -> {
                  runs.merge(task.spec().title(), 1, Integer::sum);
                  together.await(20, TimeUnit.SECONDS);
                  return task.spec().title().equals("bad")
                      ? Outcome.done("bad\u0000handoff")
                      : Outcome.done("ok");
                }));
    await(
        "every task to end",
        Duration.ofSeconds(20),
        () -> ids.stream().allMatch(id -> ledger.get(id).status().terminal()));

    for (int i = 0; i < 6; i++) {
      Task t = ledger.get(ids.get(i));
      if (i == 2) {
        assertThat(t.status()).isEqualTo(Status.INVALIDATED);
        assertThat(t.reason())
            .startsWith("dead letter: attempt 1 of 1 failed at ")
            .contains(": its result was refused: handoff: ");
        assertThat(kinds(t.id(), "completed")).isZero();
      } else {
        assertThat(t.status()).as(t.spec().title()).isEqualTo(Status.COMPLETED);
        assertThat(t.handoff()).isEqualTo("ok");
        assertThat(kinds(t.id(), "completed")).isEqualTo(1);
      }
    }
    assertThat(runs)
        .containsOnlyKeys("bad", "good 0", "good 1", "good 3", "good 4", "good 5")
        .allSatisfy((title, n) -> assertThat(n).as(title).isEqualTo(1));
    assertThat(ledger.list(domain, Status.CLAIMED)).isEmpty();
  }

  @Test
  void close_gives_back_a_prefetched_task_without_starting_it() throws Exception {
    String domain = "prefetched";
    Map<String, String> ids =
        Map.of(
            "one", ledger.fileAndAdmit(TaskSpec.builder(domain, "one").build()),
            "two", ledger.fileAndAdmit(TaskSpec.builder(domain, "two").build()));
    List<String> started = new CopyOnWriteArrayList<>();
    CountDownLatch finish = new CountDownLatch(1);
    WorkerPool pool =
        start(
            WorkerPool.builder(ledger)
                .concurrency(1) // and the default prefetch of 1: two tasks held
                .domain(
                    domain,
                    (task, ctx) -> {
                      started.add(task.spec().title());
                      finish.await(20, TimeUnit.SECONDS);
                      return Outcome.done();
                    }));
    await(
        "one running and one prefetched",
        Duration.ofSeconds(10),
        () -> started.size() == 1 && ledger.list(domain, Status.CLAIMED).size() == 2);
    AtomicBoolean closed = new AtomicBoolean();
    Thread closer =
        new Thread(
            () -> {
              pool.close(Duration.ofSeconds(20));
              closed.set(true);
            });
    closer.start();
    Thread.sleep(500); // close has stopped the pool and waits for the running handler
    finish.countDown();
    closer.join(30_000);

    assertThat(closed).isTrue();
    assertThat(started).hasSize(1);
    String ran = started.get(0);
    String second = ids.get(ran.equals("one") ? "two" : "one");
    assertThat(ledger.get(ids.get(ran)).status()).isEqualTo(Status.COMPLETED);
    Task back = ledger.get(second);
    assertThat(back.status()).isEqualTo(Status.ADMITTED);
    assertThat(kinds(second, "claimed")).isEqualTo(1);
    assertThat(kinds(second, "released")).isEqualTo(1);
    assertThat(pool.inFlight()).isZero();
  }

  @Test
  void close_with_a_handler_deaf_to_interrupts_returns_soon_after_its_timeout() throws Exception {
    String domain = "deaf";
    String id = ledger.fileAndAdmit(TaskSpec.builder(domain, "deaf").build());
    CountDownLatch running = new CountDownLatch(1);
    CountDownLatch returned = new CountDownLatch(1);
    WorkerPool pool =
        start(
            WorkerPool.builder(ledger)
                .domain(
                    domain,
                    (task, ctx) -> {
                      running.countDown();
                      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
                      while (System.nanoTime() < end) {
                        try {
                          Thread.sleep(50);
                        } catch (InterruptedException ignored) {
                          // deaf: it keeps going
                        }
                      }
                      returned.countDown();
                      return Outcome.done("late");
                    }));
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    long t0 = System.nanoTime();
    boolean clean = pool.close(Duration.ofSeconds(1));
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);

    assertThat(clean).isFalse();
    // the timeout, the release's round trip and a 200 ms grace (it was about 3 s and more)
    assertThat(tookMs).isBetween(1_000L, 2_500L);
    assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
    assertThat(returned.await(10, TimeUnit.SECONDS)).isTrue();
    Thread.sleep(300);
    assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED); // the late result is refused
    assertThat(kinds(id, "completed")).isZero();
  }

  @Test
  void a_prefetched_task_keeps_its_lease_however_long_it_waits_for_a_thread() throws Exception {
    String domain = "slow-queue";
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      ids.add(ledger.fileAndAdmit(TaskSpec.builder(domain, "slow " + i).maxAttempts(2).build()));
    }
    Map<String, Integer> runs = new ConcurrentHashMap<>();
    // one thread, three tasks held, each handler 1.5 s with a lease of 1 s: the third waits 3 s
    // for the thread, three times its lease
    start(
        WorkerPool.builder(ledger)
            .concurrency(1)
            .prefetch(2)
            .lease(Duration.ofSeconds(1))
            .pollInterval(Duration.ofMillis(100))
            .domain(
                domain,
                (task, ctx) -> {
                  runs.merge(task.id(), 1, Integer::sum);
                  Thread.sleep(1500);
                  return Outcome.done();
                }));
    await(
        "the three tasks completed",
        Duration.ofSeconds(30),
        () -> ids.stream().allMatch(id -> ledger.get(id).status() == Status.COMPLETED));
    for (String id : ids) {
      assertThat(runs.get(id)).as(id).isEqualTo(1);
      assertThat(kinds(id, "claimed")).as(id).isEqualTo(1);
      assertThat(ledger.withOrigin(domain, "retries:" + id)).as(id).isEmpty();
    }
    assertThat(ledger.list(domain, Status.INVALIDATED)).isEmpty();
  }

  @Test
  void closing_an_idle_pool_is_clean_at_once_and_a_bad_timeout_is_refused() {
    String domain = "idle-close";
    ledger.provision(domain);
    WorkerPool pool =
        start(WorkerPool.builder(ledger).domain(domain, (task, ctx) -> Outcome.done()));
    for (Duration bad : java.util.Arrays.asList(null, Duration.ofSeconds(-1))) {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> pool.close(bad))
          .isInstanceOfSatisfying(
              dev.ledger.InvalidInputException.class,
              e -> assertThat(e.field()).isEqualTo("timeout"));
    }
    assertThat(pool.close(Duration.ZERO)).isTrue();
  }
}

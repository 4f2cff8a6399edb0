package dev.ledger.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.FailureRecord;
import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A re-filed dead letter is the root of a chain of its own: it fails, retries and dead-letters as a
 * new chain would, however many times it is re-filed, with a real pool failing every attempt; the
 * pool's counters count exactly the retries filed and the dead letters made (issue 23, item 1).
 */
class RefiledDeadLetterTest {

  @org.junit.jupiter.api.extension.RegisterExtension
  static final PostgresExtension PG = new PostgresExtension();

  private static final RetryPolicy FAST =
      new RetryPolicy(5, Duration.ofMillis(50), Duration.ofMillis(50), 1.0, 0.0);

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

  @ParameterizedTest(name = "re-filed {0} time(s)")
  @ValueSource(ints = {1, 2, 3})
  void a_refiled_dead_letter_fails_retries_and_dead_letters_as_a_new_chain_at_every_depth(int depth)
      throws Exception {
    String domain = "refile-depth-" + depth;
    List<String> ran = new CopyOnWriteArrayList<>();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    ledger.provision(domain);
    pool =
        WorkerPool.builder(ledger)
            .retry(FAST)
            .pollInterval(Duration.ofMillis(100))
            .metrics(MicrometerWorkerMetrics.of(registry))
            .domain(
                domain,
                (task, ctx) -> {
                  ran.add(task.id());
                  return Outcome.failed("exit 7");
                })
            .start();
    String root =
        ledger.fileAndAdmit(TaskSpec.builder(domain, "always fails").maxAttempts(2).build());
    List<String> chainRoots = new ArrayList<>(List.of(root));
    for (int refiled = 0; refiled <= depth; refiled++) {
      int chains = refiled + 1;
      await(
          "chain " + chains + " to end as a dead letter",
          () -> ledger.deadLetters(domain).size() == 1 && ran.size() == 2 * chains);
      Thread.sleep(200); // nothing more may run: every chain ended
      Map<Status, Long> counts = ledger.countByStatus(domain);
      assertThat(counts.getOrDefault(Status.INVALIDATED, 0L)).isEqualTo(2L * chains);
      assertThat(counts.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(2L * chains);
      assertThat(ran).hasSize(2 * chains).doesNotHaveDuplicates();
      Task dead = ledger.deadLetters(domain).get(0);
      assertThat(dead.reason()).startsWith(FailureRecord.DEAD_LETTER + " attempt 2 of 2 failed");
      String chainRoot = chainRoots.get(refiled);
      // the dead letter is the retry of this chain's root, filed under it as attempt 2
      assertThat(ledger.get(chainRoot).supersededBy()).isEqualTo(dead.id());
      assertThat(dead.spec().origin()).isEqualTo("retries:" + chainRoot);
      assertThat(dead.spec().upstreamEvent()).isEqualTo("attempt:2");
      assertThat(counter(registry, "ledger.tasks.failed", domain)).isEqualTo(2.0 * chains);
      assertThat(counter(registry, "ledger.tasks.retried", domain)).isEqualTo(1.0 * chains);
      assertThat(counter(registry, "ledger.tasks.dead", domain)).isEqualTo(1.0 * chains);
      if (refiled < depth) {
        String again = ledger.refile(dead.id());
        assertThat(ledger.refile(dead.id())).isEqualTo(again);
        assertThat(ledger.get(again).spec().upstreamEvent()).isEqualTo("refiled:" + dead.id());
        chainRoots.add(again);
      }
    }
  }

  private static double counter(SimpleMeterRegistry registry, String name, String domain) {
    return registry.get(name).tag("domain", domain).counter().count();
  }
}

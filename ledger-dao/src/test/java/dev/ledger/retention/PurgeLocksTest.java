package dev.ledger.retention;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Claimer;
import dev.ledger.Completion;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.kernel.Engine;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.SettableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a purge batch holds while its transaction is open (its advisory lock, the old rows it locked
 * and deleted, their routes, edges and events) blocks no claim, completion, filing or admission of
 * the domain: with a batch held open after its deletes, the workers' operations all return within
 * the ledger's own lock bound (a wait on a lock would end in a timeout exception after 5 s), and
 * the batch then commits what it removed. Bench B18 measures the claim rate during a whole purge.
 */
class PurgeLocksTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final String DOMAIN = "held";

  @Test
  void claims_completions_and_filings_go_on_while_a_purge_batch_holds_its_locks() throws Exception {
    SettableClock clock = new SettableClock(Instant.parse("2026-03-01T09:00:00Z"));
    Ledger ledger = Ledger.open(PG.dataSource(), LedgerConfig.builder().clock(clock).build());
    Claimer seed = Claimer.of("seed").lease(Duration.ofMinutes(10));
    ledger.fileAll(specs("old", 300));
    List<Lease> done = ledger.claimBatch(DOMAIN, seed, 300);
    assertThat(ledger.completeAll(DOMAIN, completions(done))).isEmpty();
    clock.advance(Duration.ofHours(2));
    ledger.fileAll(specs("open", 100));
    Instant cutoff = clock.instant().minus(Duration.ofHours(1));

    Engine engine = new Engine(PG.dataSource(), LedgerConfig.builder().clock(clock).build());
    CountDownLatch deleted = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<Purge.Batch> batch =
        CompletableFuture.supplyAsync(
            () ->
                engine.write(
                    "test purge",
                    tx -> {
                      var ctx = engine.domain(tx, DOMAIN).orElseThrow();
                      assertThat(Purge.begin(ctx, DOMAIN)).isTrue();
                      Purge.Batch b =
                          Purge.batch(ctx, DOMAIN, Purge.window(ctx, "", 10_000), cutoff);
                      deleted.countDown();
                      try {
                        // hold the batch's locks while the workers run
                        assertThat(release.await(120, TimeUnit.SECONDS)).isTrue();
                      } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                      }
                      return b;
                    }));
    assertThat(deleted.await(60, TimeUnit.SECONDS)).isTrue();
    try {
      // every one of these would throw LedgerTimeoutException after the ledger's 5 s lock bound
      // if it waited on the open batch
      Claimer worker = Claimer.of("worker").lease(Duration.ofMinutes(10));
      int completed = 0;
      for (int i = 0; i < 10; i++) {
        List<Lease> got = ledger.claimBatch(DOMAIN, worker, 10);
        assertThat(got).hasSize(10);
        assertThat(ledger.completeAll(DOMAIN, completions(got))).isEmpty();
        completed += got.size();
      }
      assertThat(completed).isEqualTo(100);
      String filed =
          ledger.fileAndAdmit(TaskSpec.builder(DOMAIN, "filed during the batch").build());
      Lease last = ledger.claimNext(DOMAIN, worker).orElseThrow();
      assertThat(last.taskId()).isEqualTo(filed);
      ledger.complete(last, "ok");
      assertThat(batch.isDone()).isFalse(); // the batch was open all along
    } finally {
      release.countDown();
    }
    Purge.Batch b = batch.get(60, TimeUnit.SECONDS);
    assertThat(b.tasksRemoved()).isEqualTo(300);
    assertThat(b.eventsRemoved()).isEqualTo(1200);
    assertThat(ledger.list(DOMAIN, Status.COMPLETED)).hasSize(101);
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

  private static List<Completion> completions(List<Lease> leases) {
    return leases.stream().map(l -> new Completion(l, "ok")).toList();
  }
}

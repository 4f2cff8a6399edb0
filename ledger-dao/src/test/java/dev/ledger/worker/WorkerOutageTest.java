package dev.ledger.worker;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.testing.LogCapture;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.StoppableServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A pool whose database goes away keeps its threads, says so once (a WARN, {@link
 * WorkerPool#outageSince()}, the {@code ledger.worker.outages} gauge), and claims again by itself
 * once the database is back, saying that once too.
 */
class WorkerOutageTest {

  @Test
  void a_pool_whose_server_stops_reports_the_outage_once_and_resumes_when_it_is_back()
      throws Exception {
    try (StoppableServer server = StoppableServer.start()) {
      String url = server.urlFor(server.createDatabase("outage"));
      try (HikariDataSource ds = PostgresExtension.pool(url, 6)) {
        ds.setConnectionTimeout(500);
        Ledger ledger = Ledger.open(ds);
        ledger.provision("jobs");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        AtomicInteger handled = new AtomicInteger();
        LogCapture log = LogCapture.begin();
        try (WorkerPool pool =
            WorkerPool.builder(ledger)
                .dataSource(ds)
                .concurrency(2)
                .pollInterval(Duration.ofMillis(200))
                .metrics(MicrometerWorkerMetrics.of(registry))
                .domain(
                    "jobs",
                    (task, ctx) -> {
                      handled.incrementAndGet();
                      return Outcome.done("ok");
                    })
                .start()) {
          String before = ledger.fileAndAdmit(TaskSpec.builder("jobs", "before").build());
          awaitCompleted(ledger, before);
          assertThat(pool.outageSince()).isEmpty();

          server.stop();
          long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
          while (pool.outageSince().isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(50);
          }
          assertThat(pool.outageSince()).isPresent();
          assertThat(registry.get("ledger.worker.outages").gauge().value()).isEqualTo(1.0);
          Thread.sleep(3_000); // several failed claims: still one warning
          assertThat(countOf(log.text(), "claiming failed (")).isEqualTo(1);

          server.restart();
          String after = fileOnceTheServerAnswers(ledger);
          awaitCompleted(ledger, after);
          assertThat(pool.outageSince()).isEmpty();
          assertThat(registry.get("ledger.worker.outages").gauge().value()).isZero();
          assertThat(registry.get("ledger.worker.outages.began").counter().count()).isEqualTo(1.0);
          assertThat(countOf(log.text(), "the database answers again after")).isEqualTo(1);
          assertThat(handled.get()).isEqualTo(2);
        } finally {
          log.stop();
        }
      }
    }
  }

  /** Files a task, trying again while the restarted server does not accept connections yet. */
  private static String fileOnceTheServerAnswers(Ledger ledger) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      try {
        return ledger.fileAndAdmit(TaskSpec.builder("jobs", "after").build());
      } catch (dev.ledger.LedgerStorageException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(100);
      }
    }
  }

  private static int countOf(String text, String part) {
    int n = 0;
    for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
      n++;
    }
    return n;
  }

  private static void awaitCompleted(Ledger ledger, String id) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (System.nanoTime() < deadline) {
      try {
        if (ledger.get(id).status() == Status.COMPLETED) {
          return;
        }
      } catch (dev.ledger.LedgerStorageException e) {
        // the pool's connections are being re-made after the restart
      }
      Thread.sleep(50);
    }
    assertThat(ledger.get(id).status()).isEqualTo(Status.COMPLETED);
  }
}

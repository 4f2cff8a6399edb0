package dev.ledger.worker;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.testing.LogCapture;
import dev.ledger.testing.PgBouncer;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A pool whose data source goes through a real PgBouncer in {@code pool_mode = transaction}: its
 * {@code LISTEN} runs on a server connection the pooler hands to other clients, so notifications
 * never reach it. The pool finds that out with its probe, warns once, and picks tasks up by
 * polling; the same pool straight to PostgreSQL listens.
 */
class WorkerPoolerTest {

  private static final String WARNING =
      "LISTEN/NOTIFY does not reach this connection within 2 s (a transaction-mode pooler, or a"
          + " very busy server?); polling instead, and probing again every 60 s";

  @Test
  void behind_a_transaction_mode_pooler_the_pool_warns_once_and_polls() throws Exception {
    String db = PostgresExtension.newDatabase();
    LogCapture logs = LogCapture.begin();
    try (HikariDataSource direct = PostgresExtension.pool(TestServer.get().urlFor(db), 4)) {
      String domain = "pooled";
      Ledger.open(direct).provision(domain);
      try (PgBouncer bouncer = PgBouncer.start("transaction", 2)) {
        String url = bouncer.urlFor(db);
        // prepareThreshold=0: server-side prepared statements do not survive a transaction pooler
        url += (url.contains("?") ? "&" : "?") + "prepareThreshold=0";
        try (HikariDataSource pooled = PostgresExtension.pool(url, 6)) {
          Ledger ledger = Ledger.open(pooled);
          List<String> ran = new java.util.concurrent.CopyOnWriteArrayList<>();
          try (WorkerPool pool =
              WorkerPool.builder(ledger)
                  .dataSource(pooled)
                  .concurrency(2)
                  .pollInterval(Duration.ofMillis(500))
                  .domain(
                      domain,
                      (task, ctx) -> {
                        ran.add(task.id());
                        return Outcome.done();
                      })
                  .start()) {
            // the probe waits 2 s for its notification
            awaitLog(logs, WARNING, Duration.ofSeconds(20));
            assertThat(pool.listening()).isFalse();
            // tasks filed one at a time, each picked up by a poll (no notification arrives)
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
              String id = ledger.fileAndAdmit(TaskSpec.builder(domain, "task " + i).build());
              ids.add(id);
              long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
              while (ledger.get(id).status() != Status.COMPLETED && System.nanoTime() < end) {
                Thread.sleep(20);
              }
              assertThat(ledger.get(id).status()).as(id).isEqualTo(Status.COMPLETED);
            }
            assertThat(ran).containsExactlyElementsOf(ids);
            assertThat(pool.listening()).isFalse();
          }
        }
      }
      assertThat(count(logs.text(), WARNING)).isEqualTo(1);
      // the same pool without the pooler listens, and does not warn
      LogCapture direct2 = LogCapture.begin();
      try (WorkerPool pool =
          WorkerPool.builder(Ledger.open(direct))
              .dataSource(direct)
              .domain(domain, (task, ctx) -> Outcome.done())
              .start()) {
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!pool.listening() && System.nanoTime() < end) {
          Thread.sleep(20);
        }
        assertThat(pool.listening()).isTrue();
      } finally {
        direct2.stop();
      }
      assertThat(direct2.text()).doesNotContain(WARNING);
    } finally {
      logs.stop();
      PostgresExtension.dropDatabase(db);
    }
  }

  private static void awaitLog(LogCapture logs, String text, Duration timeout)
      throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (!logs.text().contains(text)) {
      if (System.nanoTime() > end) {
        throw new AssertionError("no log line '" + text + "' after " + timeout);
      }
      Thread.sleep(20);
    }
  }

  private static int count(String text, String part) {
    Matcher m = Pattern.compile(Pattern.quote(part)).matcher(text);
    int n = 0;
    while (m.find()) {
      n++;
    }
    return n;
  }
}

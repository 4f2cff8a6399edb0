package dev.ledger.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.worker.Outcome;
import dev.ledger.worker.WorkerMetrics;
import dev.ledger.worker.WorkerPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * B16's row as users run it (issue 25): 4 {@link WorkerPool}s of 4 threads each, default batching
 * and prefetch, drain a domain with a concurrency limit and a rate limit set (never binding)
 * against the same pools draining a domain with no control: tasks completed per second, from the
 * pools' start to the last completion. Each round drains fresh domains (seeded, analysed, then
 * measured), the two sides alternating. Checks every task completed once.
 */
final class ControlsPoolBench {

  private ControlsPoolBench() {}

  /** The pools of each side. */
  static final int POOLS = 4;

  /** The threads of each pool. */
  static final int THREADS = 4;

  /**
   * Runs the row on the B16 database.
   *
   * @param ctx the run
   * @param pool the database's connections (each pool's claims and completions go through it)
   * @param ledger the ledger over {@code pool}
   * @throws Exception a failure, or a correctness check that failed
   */
  static void run(Context ctx, HikariDataSource pool, Ledger ledger) throws Exception {
    int rounds = ctx.size(1, 3);
    int n = ctx.size(2_000, 20_000);
    int[] round = {0, 0};
    double[] m =
        Context.alternate(
            rounds,
            () -> drain(pool, ledger, "b16-pools-limited-" + round[0]++, n, true),
            () -> drain(pool, ledger, "b16-pools-free-" + round[1]++, n, false));
    double ratio = m[0] / m[1];
    ctx.results()
        .add(
            new Results.Row(
                "B16",
                "claim+complete with a concurrency and a rate limit, "
                    + POOLS
                    + " WorkerPools x "
                    + THREADS
                    + " threads",
                "tasks/s",
                Results.Kind.RATE,
                m[0],
                m[1],
                "the same pools, no control",
                "≥ 0.9x",
                ctx.quick() ? null : ratio >= 0.9));
    ctx.results()
        .note(
            "B16 pools: "
                + n
                + " admitted per side per round, "
                + rounds
                + " rounds alternating; "
                + POOLS
                + " WorkerPools of "
                + THREADS
                + " threads (default batch and prefetch, no-op handler); rate = tasks completed"
                + " per second from the pools' start to the last completion");
  }

  /** Seeds {@code n} tasks into a new domain and drains it with the pools; tasks per second. */
  private static double drain(
      HikariDataSource pool, Ledger ledger, String domain, int n, boolean limited)
      throws Exception {
    String schema = ledger.provision(domain);
    CycleBench.seed(pool, domain, schema, n);
    Context.execute(pool, "ANALYZE");
    if (limited) {
      ledger.setLimits(domain, 1_000_000, 1_000_000, Duration.ofSeconds(1));
    }
    AtomicLong completed = new AtomicLong();
    AtomicLong twice = new AtomicLong();
    CountDownLatch all = new CountDownLatch(1);
    Set<String> seen = ConcurrentHashMap.newKeySet();
    WorkerMetrics count =
        new WorkerMetrics() {
          @Override
          public void completed(String d) {
            if (completed.incrementAndGet() == n) {
              all.countDown();
            }
          }
        };
    List<WorkerPool> pools = new ArrayList<>();
    long t0 = System.nanoTime();
    double rate;
    try {
      for (int p = 0; p < POOLS; p++) {
        pools.add(
            WorkerPool.builder(ledger)
                .holder("b16-pool-" + p)
                .concurrency(THREADS)
                .lease(Duration.ofMinutes(5))
                .pollInterval(Duration.ofMillis(100))
                .metrics(count)
                .domain(
                    domain,
                    (task, c) -> {
                      if (!seen.add(task.id())) {
                        twice.incrementAndGet();
                      }
                      return Outcome.done();
                    })
                .start());
      }
      boolean done = all.await(10, TimeUnit.MINUTES);
      rate = n / ((System.nanoTime() - t0) / 1e9);
      Context.check(
          done, "B16 pools " + domain + ": " + completed.get() + " of " + n + " in 10 minutes");
    } finally {
      for (WorkerPool w : pools) {
        w.close();
      }
    }
    Context.check(twice.get() == 0, "B16 pools " + domain + ": " + twice.get() + " ran twice");
    long c = ledger.countByStatus(domain).get(Status.COMPLETED);
    Context.check(c == n, "B16 pools " + domain + ": " + c + " completed rows, expected " + n);
    return rate;
  }
}

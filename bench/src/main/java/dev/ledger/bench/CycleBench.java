package dev.ledger.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Claimer;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import dev.ledger.event.Event;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * B2, claim+complete cycles on a deep queue (100k admitted), at 1, 8 and 32 workers: ours ({@code
 * claimNext} then {@code complete}) against the same statements over raw JDBC. Every claim is
 * checked: no task handed to two workers (in memory, as it happens) and, after the run, one {@code
 * claimed} and one {@code completed} event per task claimed. Target: at least 0.8x at 8 workers.
 */
final class CycleBench {

  /** Workers measured; the plot's x axis. */
  static final int[] WORKERS = {1, 8, 32};

  private CycleBench() {}

  /**
   * Runs B2.
   *
   * @param ctx the run
   * @return workers to [ours, baseline] cycles/s, for the plot
   * @throws Exception on failure
   */
  static Map<Integer, double[]> run(Context ctx) throws Exception {
    String db = ctx.server().createDatabase("b2");
    Map<Integer, double[]> plot = new LinkedHashMap<>();
    try (HikariDataSource pool = ctx.server().pool(db, 40)) {
      OursSql sql = Context.captureSql(pool);
      Ledger ledger = Context.ledger(pool);
      String oursDomain = "b2-ours";
      String baseDomain = "b2-baseline";
      String oursSchema = ledger.provision(oursDomain);
      String baseSchema = ledger.provision(baseDomain);
      int depth = ctx.size(10_000, 100_000);
      RawLedger raw = new RawLedger(pool, baseDomain, baseSchema, sql);
      Duration time = Duration.ofSeconds(ctx.size(2, 8));
      int rounds = 2;
      Set<String> oursSeen = ConcurrentHashMap.newKeySet();
      Set<String> baseSeen = ConcurrentHashMap.newKeySet();
      AtomicLong oursCycles = new AtomicLong();
      AtomicLong baseCycles = new AtomicLong();
      Duration lease = Duration.ofMinutes(10);
      for (int workers : new int[] {0, 1, 8, 32}) {
        // 0: a warm-up round of 4 workers for one second, not reported
        Duration run = workers == 0 ? Duration.ofSeconds(1) : time;
        int threads = workers == 0 ? 4 : workers;
        // every worker count starts on a queue of `depth` admitted tasks, whatever the rounds
        // before it took: a fast run would otherwise drain the queue before 32 workers start
        topUp(pool, oursDomain, oursSchema, depth);
        topUp(pool, baseDomain, baseSchema, depth);
        double[] m =
            Context.alternate(
                workers == 0 ? 1 : rounds,
                () ->
                    Workers.timed(
                        threads,
                        run,
                        (w, i) -> {
                          Optional<Lease> l =
                              ledger.claimNext(oursDomain, Claimer.of("w" + w).lease(lease));
                          if (l.isEmpty()) {
                            return 0;
                          }
                          once(oursSeen, l.get().taskId(), "ours");
                          ledger.complete(l.get(), null);
                          oursCycles.incrementAndGet();
                          return 1;
                        }),
                () ->
                    Workers.timed(
                        threads,
                        run,
                        (w, i) -> {
                          List<RawLedger.Claim> c =
                              raw.claim("w" + w, lease, List.of(), Label.PUBLIC, 1);
                          if (c.isEmpty()) {
                            return 0;
                          }
                          once(baseSeen, c.get(0).id(), "baseline");
                          raw.complete(c.get(0).id(), "w" + w, c.get(0).attempt());
                          baseCycles.incrementAndGet();
                          return 1;
                        }));
        if (workers == 0) {
          continue;
        }
        plot.put(workers, m);
        ctx.results()
            .add(
                new Results.Row(
                    "B2",
                    "claim+complete, " + workers + " worker" + (workers == 1 ? "" : "s"),
                    "cycles/s",
                    Results.Kind.RATE,
                    m[0],
                    m[1],
                    "raw JDBC, same SQL",
                    workers == 8 ? "≥ 0.8x" : "",
                    workers == 8 ? m[0] / m[1] >= 0.8 : null));
      }
      Context.checkClaims(pool, oursSchema, "B2 ours", oursCycles.get(), true);
      Context.checkClaims(pool, baseSchema, "B2 baseline", baseCycles.get(), true);
      ctx.results()
          .note(
              "B2: "
                  + depth
                  + " admitted tasks per side at the start of each worker count; "
                  + oursCycles.get()
                  + " cycles by ours and "
                  + baseCycles.get()
                  + " by the baseline, 0 double claims (checked per claim and per task in the"
                  + " event log)");
    } finally {
      ctx.server().dropDatabase(db);
    }
    return plot;
  }

  /** Seeds admitted tasks until the domain has {@code depth} of them, then analyzes. */
  private static void topUp(HikariDataSource pool, String domain, String schema, int depth)
      throws Exception {
    long admitted =
        Context.count(
            pool, "SELECT count(*) FROM \"" + schema + "\".tasks WHERE status = 'admitted'");
    if (admitted < depth) {
      seed(pool, domain, schema, (int) (depth - admitted));
      Context.execute(pool, "ANALYZE \"" + schema + "\".tasks");
    }
  }

  static void seed(HikariDataSource pool, String domain, String schema, int n) throws Exception {
    try (Seeder s = new Seeder(pool, domain, schema)) {
      for (int i = 0; i < n; i++) {
        s.add(
            TaskSpec.builder(domain, "cycle " + i)
                .body("seeded")
                .priority(i % 10)
                .createdBy("bench")
                .build(),
            new Event.Admitted());
      }
    }
  }

  private static void once(Set<String> seen, String id, String who) {
    if (!seen.add(id)) {
      throw new BenchFailure("B2 " + who + ": task " + id + " was claimed twice");
    }
  }
}

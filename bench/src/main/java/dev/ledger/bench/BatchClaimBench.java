package dev.ledger.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Claimer;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * B4, batch claims: {@code claimBatch} of 1, 10 and 50 tasks per statement by one worker, tasks
 * claimed per second, ours against the same statement over raw JDBC; and ours at 10 against ours at
 * 1 (the target: at least 3x). Claims are not completed, so the claimed tasks stay ahead in
 * the claim index, as they do for a worker fleet that holds its leases.
 */
final class BatchClaimBench {

  private BatchClaimBench() {}

  static void run(Context ctx) throws Exception {
    String db = ctx.server().createDatabase("b4");
    try (HikariDataSource pool = ctx.server().pool(db, 8)) {
      OursSql sql = Context.captureSql(pool);
      Ledger ledger = Context.ledger(pool);
      String oursDomain = "b4-ours";
      String baseDomain = "b4-baseline";
      String oursSchema = ledger.provision(oursDomain);
      String baseSchema = ledger.provision(baseDomain);
      int depth = ctx.size(60_000, 200_000);
      CycleBench.seed(pool, oursDomain, oursSchema, depth);
      CycleBench.seed(pool, baseDomain, baseSchema, depth);
      Context.execute(pool, "ANALYZE");
      RawLedger raw = new RawLedger(pool, baseDomain, baseSchema, sql);
      Duration time = Duration.ofSeconds(ctx.size(2, 5));
      Duration lease = Duration.ofMinutes(30);
      Claimer b4 = Claimer.of("b4").lease(lease);
      Set<String> oursSeen = ConcurrentHashMap.newKeySet();
      Set<String> baseSeen = ConcurrentHashMap.newKeySet();
      AtomicLong oursClaims = new AtomicLong();
      AtomicLong baseClaims = new AtomicLong();
      double batch1 = Double.NaN;
      for (int batch : new int[] {0, 1, 10, 50}) {
        // 0: a one-second warm-up round at batch 1, not reported
        int size = Math.max(1, batch);
        Duration run = batch == 0 ? Duration.ofSeconds(1) : time;
        double[] m =
            Context.alternate(
                batch == 0 ? 1 : 2,
                () ->
                    Workers.timed(
                        1,
                        run,
                        (w, i) -> {
                          List<Lease> got = ledger.claimBatch(oursDomain, b4, size);
                          for (Lease l : got) {
                            once(oursSeen, l.taskId(), "ours");
                          }
                          oursClaims.addAndGet(got.size());
                          return got.size();
                        }),
                () ->
                    Workers.timed(
                        1,
                        run,
                        (w, i) -> {
                          List<RawLedger.Claim> got =
                              raw.claim("b4", lease, List.of(), Label.PUBLIC, size);
                          for (RawLedger.Claim c : got) {
                            once(baseSeen, c.id(), "baseline");
                          }
                          baseClaims.addAndGet(got.size());
                          return got.size();
                        }));
        if (batch == 0) {
          continue;
        }
        ctx.results()
            .add(
                new Results.Row(
                    "B4",
                    "claimBatch(" + batch + "), 1 worker",
                    "tasks/s",
                    Results.Kind.RATE,
                    m[0],
                    m[1],
                    "raw JDBC, same SQL",
                    "",
                    null));
        if (batch == 1) {
          batch1 = m[0];
        } else if (batch == 10) {
          ctx.results()
              .add(
                  new Results.Row(
                      "B4",
                      "ours claimBatch(10) vs claimBatch(1)",
                      "tasks/s",
                      Results.Kind.RATE,
                      m[0],
                      batch1,
                      "ours, batch 1",
                      "≥ 3x",
                      m[0] / batch1 >= 3));
        }
      }
      Context.checkClaims(pool, oursSchema, "B4 ours", oursClaims.get(), false);
      Context.checkClaims(pool, baseSchema, "B4 baseline", baseClaims.get(), false);
      ctx.results()
          .note(
              "B4: "
                  + depth
                  + " admitted per side; "
                  + oursClaims.get()
                  + " tasks claimed by ours, "
                  + baseClaims.get()
                  + " by the baseline, none twice");
    } finally {
      ctx.server().dropDatabase(db);
    }
  }

  private static void once(Set<String> seen, String id, String who) {
    if (!seen.add(id)) {
      throw new BenchFailure("B4 " + who + ": task " + id + " was claimed twice");
    }
  }
}

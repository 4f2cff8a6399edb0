package dev.ledger.bench;

import dev.ledger.Claimer;
import dev.ledger.Lease;
import dev.ledger.LedgerTimeoutException;
import dev.ledger.testing.CitusCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * B20's move row (issue 29): claim+complete at 8 workers over the cluster's {@value
 * CitusBench#DOMAINS} domains while one of them (the first, {@code b20-00}) moves to the other
 * worker ({@code citus_move_shard_placement}, {@code block_writes}): claims per second before,
 * during and after the move, in quarter-second buckets. Every claim is recorded on the side for
 * {@link CitusSide#check} (0 double claims, every claimed task completed, none left leased). Not
 * thread-safe (one run).
 */
final class CitusMoveBench {

  private CitusMoveBench() {}

  /**
   * Runs the move row on the cluster's side.
   *
   * @param ctx the run
   * @param cluster the running cluster
   * @param url the cluster side's database on the coordinator
   * @param s the cluster's side
   * @throws Exception on failure, or a failed check ({@link BenchFailure})
   */
  static void run(Context ctx, CitusCluster cluster, String url, CitusSide s) throws Exception {
    int workers = 8;
    int seconds = ctx.size(6, 30);
    int depth = ctx.size(400, 3_000);
    s.topUp(depth);
    int moved = 0;
    String schema = s.schemas.get(moved);
    int from = CitusFixtures.nodeOf(url, schema);
    int to =
        cluster.workers().stream()
            .mapToInt(CitusCluster.Node::port)
            .filter(p -> p != from)
            .findFirst()
            .orElseThrow();
    long tick = 250_000_000L;
    AtomicLongArray buckets = new AtomicLongArray(seconds * 4 + 8);
    AtomicLong movedClaimsDuring = new AtomicLong();
    AtomicLong timeouts = new AtomicLong();
    long[] window = new long[2];
    long t0 = System.nanoTime();
    Thread mover =
        new Thread(
            () -> {
              try {
                Thread.sleep(seconds * 1000L / 3);
                window[0] = System.nanoTime() - t0;
                CitusFixtures.move(url, schema, from, to);
                window[1] = System.nanoTime() - t0;
              } catch (Exception e) {
                throw new IllegalStateException("B20: the move failed: " + e, e);
              }
            },
            "b20-mover");
    List<Throwable> moverFailure = new ArrayList<>();
    mover.setUncaughtExceptionHandler((t, e) -> moverFailure.add(e));
    CpuMeter cpu = CpuMeter.start();
    mover.start();
    Workers.timed(
        workers,
        Duration.ofSeconds(seconds),
        (w, i) -> {
          long n = cycleCounted(s, w, i, movedClaimsDuring, timeouts, window, t0);
          buckets.incrementAndGet(
              (int) Math.min(buckets.length() - 1, (System.nanoTime() - t0) / tick));
          return n;
        });
    mover.join();
    double busy = cpu.busyCores();
    Context.check(moverFailure.isEmpty(), "B20: " + moverFailure);
    Context.check(window[1] > 0, "B20: the move did not end within the run");
    Context.check(
        CitusFixtures.nodeOf(url, schema) == to,
        "B20: the moved domain is not on the other worker");
    double before = rate(buckets, tick, tick * 4, window[0]);
    double during = rate(buckets, tick, window[0], window[1]);
    double after = rate(buckets, tick, window[1], (long) seconds * 1_000_000_000L);
    ctx.results()
        .add(
            new Results.Row(
                "B20",
                "claim+complete, 16 domains, 8 workers, during a move of one domain",
                "cycles/s",
                Results.Kind.RATE,
                during,
                before,
                "the same run before the move",
                "",
                null));
    // the "after" window exists only when the move ended at least a second before the run did
    boolean hasAfter = (long) seconds * 1_000_000_000L - window[1] >= 1_000_000_000L;
    if (!hasAfter) {
      after = Double.NaN; // printed as NaN in the note: the move outlasted the run
    }
    if (hasAfter) {
      ctx.results()
          .add(
              new Results.Row(
                  "B20",
                  "claim+complete, 16 domains, 8 workers, after the move",
                  "cycles/s",
                  Results.Kind.RATE,
                  after,
                  before,
                  "the same run before the move",
                  "",
                  null));
    }
    ctx.results()
        .note(
            String.format(
                Locale.ROOT,
                "B20 move: one of 16 domains moved between the workers (block_writes) %.1f s into"
                    + " a %d s run of 8 workers; the move took %.2f s; %.0f / %.0f / %.0f cycles/s"
                    + " before / during / after (quarter-second buckets, the first second left"
                    + " out); %d claims in the moved domain while it moved; %d claims or completions"
                    + " in it gave up at the ledger's lock bound (LedgerTimeoutException, retried);"
                    + " busy cores %.2f",
                window[0] / 1e9,
                seconds,
                (window[1] - window[0]) / 1e9,
                before,
                during,
                after,
                movedClaimsDuring.get(),
                timeouts.get(),
                busy));
  }

  /**
   * One claim+complete as {@link CitusCycles}' cycle, where the moved domain's claims and
   * completions may wait out the ledger's lock bound while the move blocks its writes: such a claim
   * counts as timed out (and the worker tries the next domain), such a completion is tried again
   * until it succeeds.
   */
  private static long cycleCounted(
      CitusSide s,
      int worker,
      long i,
      AtomicLong movedDuring,
      AtomicLong timeouts,
      long[] window,
      long t0)
      throws InterruptedException {
    for (int k = 0; k < CitusBench.DOMAINS; k++) {
      int d = (int) ((worker + i + k) % CitusBench.DOMAINS);
      Optional<Lease> l;
      try {
        l = s.ledger.claimNext(s.domains.get(d), Claimer.of("w" + worker).lease(CitusBench.LEASE));
      } catch (LedgerTimeoutException e) {
        if (d != 0) {
          throw e;
        }
        timeouts.incrementAndGet();
        continue;
      }
      if (l.isPresent()) {
        s.claimedOnce(l.get());
        long bound = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (true) {
          try {
            s.ledger.complete(l.get(), null);
            break;
          } catch (LedgerTimeoutException e) {
            if (d != 0 || System.nanoTime() > bound) {
              throw e;
            }
            timeouts.incrementAndGet();
            Thread.sleep(100);
          }
        }
        s.claims.incrementAndGet(d);
        long now = System.nanoTime() - t0;
        if (d == 0 && window[0] > 0 && window[1] == 0 && now > window[0]) {
          movedDuring.incrementAndGet();
        }
        return 1;
      }
    }
    return 0;
  }

  /** Items per second in the buckets from {@code fromNanos} to {@code toNanos}, whole buckets. */
  private static double rate(AtomicLongArray buckets, long tick, long fromNanos, long toNanos) {
    int first = (int) ((fromNanos + tick - 1) / tick);
    int last = (int) Math.min(buckets.length() - 1, toNanos / tick);
    if (last <= first) {
      // a move shorter than a bucket: the bucket it fell into
      first = (int) (fromNanos / tick);
      last = first + 1;
    }
    long n = 0;
    for (int b = first; b < last; b++) {
      n += buckets.get(b);
    }
    return n / ((last - first) * tick / 1e9);
  }
}

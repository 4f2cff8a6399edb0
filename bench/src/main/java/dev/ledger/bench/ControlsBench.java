package dev.ledger.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Claimer;
import dev.ledger.DomainControls;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * B16, queue controls: the claim's cost in a domain with a concurrency limit and a rate limit set
 * (both far above what the run reaches, so neither binds) against the same claim in a domain with
 * no control: claims per second of claim time, one claim of one task at a time by each of 1 and 4
 * workers (controlled claims of one domain take turns on its controls row until they commit, so 4
 * workers show that price), every claim completed outside the measured time (so the claimed tasks
 * the limit counts stay few, as in a fleet whose handlers finish). The target: at least
 * 0.9x. {@code --quick} checks correctness only (no task claimed twice, every claim logged and
 * completed, the limits read back); its ratio is printed but never judged. Then the row as users
 * run it: {@link ControlsPoolBench}.
 */
final class ControlsBench {

  private ControlsBench() {}

  /** The workers of each row: one (the statements' own cost), four (claims taking turns). */
  private static final int[] WORKERS = {1, 4};

  /** Claims per worker of each side's warm-up before each row's measured rounds. */
  private static final int WARM_UP = 30;

  static void run(Context ctx) throws Exception {
    String db = ctx.server().createDatabase("b16");
    // 8 connections for the claim rows' workers; the pool row's 4 pools of 4 threads claim and
    // complete through the same pool, so it is sized for them
    try (HikariDataSource pool = ctx.server().pool(db, 16)) {
      Ledger ledger = Context.ledger(pool);
      String limited = "b16-limited";
      String free = "b16-free";
      String limitedSchema = ledger.provision(limited);
      String freeSchema = ledger.provision(free);
      int rounds = ctx.size(1, 3);
      int steps = ctx.size(40, 4_000); // per worker per round
      // never runs dry, at any speed: 1 + 4 workers' rounds, their warm-ups, and a margin
      int depth = 5 * (steps * rounds + WARM_UP) + 1_000;
      CycleBench.seed(pool, limited, limitedSchema, depth);
      CycleBench.seed(pool, free, freeSchema, depth);
      Context.execute(pool, "ANALYZE");
      DomainControls set = ledger.setLimits(limited, 1_000_000, 1_000_000, Duration.ofSeconds(1));
      Context.check(
          set.maxClaimed() == 1_000_000 && set.rateClaims() == 1_000_000,
          "B16: the limits read back as " + set);
      Claimer claimer = Claimer.of("b16").lease(Duration.ofMinutes(30));
      Set<String> seen = ConcurrentHashMap.newKeySet();
      AtomicLong limitedClaims = new AtomicLong();
      AtomicLong freeClaims = new AtomicLong();
      for (int workers : WORKERS) {
        // warm-up, not measured: each connection the workers use runs each side's claim statement
        // past pgjdbc's prepare threshold (5) and PostgreSQL's custom plans (5), so the rounds
        // measure the generic plans a long-running pool uses (a cold connection's first claim in
        // a domain plans the statement for 20-80 ms, which in a quick run's 40 claims was most of
        // the measured time, and more for the larger controlled statement)
        claimRate(ledger, limited, claimer, workers, WARM_UP, seen, limitedClaims);
        claimRate(ledger, free, claimer, workers, WARM_UP, seen, freeClaims);
        double[] m =
            Context.alternate(
                rounds,
                () -> claimRate(ledger, limited, claimer, workers, steps, seen, limitedClaims),
                () -> claimRate(ledger, free, claimer, workers, steps, seen, freeClaims));
        double ratio = m[0] / m[1];
        ctx.results()
            .add(
                new Results.Row(
                    "B16",
                    "claim with a concurrency and a rate limit, " + workers + " worker(s)",
                    "claims/s",
                    Results.Kind.RATE,
                    m[0],
                    m[1],
                    "the same claim, no control",
                    "≥ 0.9x",
                    ctx.quick() ? null : ratio >= 0.9));
      }
      Context.checkClaims(pool, limitedSchema, "B16 limited", limitedClaims.get(), true);
      Context.checkClaims(pool, freeSchema, "B16 free", freeClaims.get(), true);
      Context.check(
          ledger.controls(limited).claimedNow() == 0 && ledger.controls(free).claimedNow() == 0,
          "B16: tasks are still claimed after every claim was completed");
      ctx.results()
          .note(
              "B16: "
                  + depth
                  + " admitted per side; limits 1,000,000 claimed and 1,000,000/1s (never"
                  + " binding); each row after a warm-up of "
                  + WARM_UP
                  + " claims per worker per side (not measured); "
                  + limitedClaims.get()
                  + " limited and "
                  + freeClaims.get()
                  + " free claims, each completed, none twice; rate = claims per second of claim"
                  + " time");
      ControlsPoolBench.run(ctx, pool, ledger);
    } finally {
      ctx.server().dropDatabase(db);
    }
  }

  /** Claims (and completes) {@code steps} tasks per worker; claims per second of claim time. */
  private static double claimRate(
      Ledger ledger,
      String domain,
      Claimer claimer,
      int workers,
      int steps,
      Set<String> seen,
      AtomicLong claims)
      throws Exception {
    AtomicLong claimNanos = new AtomicLong();
    AtomicLong claimed = new AtomicLong();
    Workers.fixed(
        workers,
        steps,
        (w, i) -> {
          long t0 = System.nanoTime();
          Lease l =
              ledger
                  .claimNext(domain, claimer)
                  .orElseThrow(() -> new BenchFailure("B16 " + domain + ": nothing to claim"));
          claimNanos.addAndGet(System.nanoTime() - t0);
          if (!seen.add(l.taskId())) {
            throw new BenchFailure("B16 " + domain + ": task " + l.taskId() + " claimed twice");
          }
          ledger.complete(l, "b16");
          claimed.incrementAndGet();
          return 1;
        });
    claims.addAndGet(claimed.get());
    // claims per second of one worker's claim time, times the workers
    return claimed.get() / (claimNanos.get() / 1e9) * workers;
  }
}

package dev.ledger.bench;

import dev.ledger.Claimer;
import dev.ledger.Lease;
import dev.ledger.TaskSpec;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * B20's file+admit (B1's workload) and claim+complete (B2's) rows over the {@value
 * CitusBench#DOMAINS} domains of two {@link CitusSide}s, alternating; every claim is recorded on
 * its side for {@link CitusSide#check}. Not thread-safe (one run).
 */
final class CitusCycles {

  private CitusCycles() {}

  /**
   * file+admit at each client count, each client filing round-robin into the domains.
   *
   * @param ctx the run
   * @param label appended to each row's name ("" for the cluster on this machine)
   * @param a the cluster's side (the row's first figure)
   * @param b the one-server side (the baseline)
   * @param clientCounts the client counts, one row each
   * @throws Exception on failure
   */
  static void append(Context ctx, String label, CitusSide a, CitusSide b, int[] clientCounts)
      throws Exception {
    int perRound = ctx.size(160, 1_200);
    int rounds = ctx.size(1, 2);
    for (CitusSide s : List.of(a, b)) {
      // warm-up, not measured
      Workers.fixed(4, ctx.size(16, 100), (w, i) -> fileAdmit(s, w, i, 4));
    }
    for (int clients : clientCounts) {
      long steps = perRound / clients;
      double[] m =
          Context.alternate(
              rounds,
              () ->
                  a.measured(
                      () -> Workers.fixed(clients, steps, (w, i) -> fileAdmit(a, w, i, clients))),
              () ->
                  b.measured(
                      () -> Workers.fixed(clients, steps, (w, i) -> fileAdmit(b, w, i, clients))));
      ctx.results()
          .add(
              new Results.Row(
                  "B20",
                  "file+admit, 16 domains, "
                      + clients
                      + " client"
                      + (clients == 1 ? "" : "s")
                      + ", cluster"
                      + label,
                  "tasks/s",
                  Results.Kind.RATE,
                  m[0],
                  m[1],
                  "one server, same 16 domains",
                  "",
                  null));
    }
  }

  private static long fileAdmit(CitusSide s, int worker, long i, int clients) {
    String domain = s.domains.get((int) ((worker + i * clients) % CitusBench.DOMAINS));
    String id =
        s.ledger.file(
            TaskSpec.builder(domain, "b20 " + worker + "/" + i)
                .body("filed by B20")
                .priority(i % 10)
                .createdBy("bench")
                .build());
    s.ledger.admit(id);
    s.filed.incrementAndGet();
    return 1;
  }

  /**
   * claim+complete at each worker count, each side topped up before every measured run.
   *
   * @param ctx the run
   * @param label appended to each row's name ("" for the cluster on this machine)
   * @param a the cluster's side (the row's first figure)
   * @param b the one-server side (the baseline)
   * @param workerCounts the worker counts, one row each
   * @throws Exception on failure, or a task claimed twice ({@link BenchFailure})
   */
  static void cycles(Context ctx, String label, CitusSide a, CitusSide b, int[] workerCounts)
      throws Exception {
    Duration time = Duration.ofSeconds(ctx.size(2, 8));
    int rounds = ctx.size(1, 2);
    // topped up before every measured run, deep enough for ~2,400 cycles/s on one server (CI's
    // quick run drained 60 per domain within its 2 s, failing as a dry workload)
    int depth = ctx.size(300, 1_200);
    for (int workers : workerCounts) {
      double[] m =
          Context.alternate(
              rounds,
              () -> {
                a.topUp(depth);
                return a.measured(() -> Workers.timed(workers, time, (w, i) -> cycle(a, w, i)));
              },
              () -> {
                b.topUp(depth);
                return b.measured(() -> Workers.timed(workers, time, (w, i) -> cycle(b, w, i)));
              });
      ctx.results()
          .add(
              new Results.Row(
                  "B20",
                  "claim+complete, 16 domains, " + workers + " workers, cluster" + label,
                  "cycles/s",
                  Results.Kind.RATE,
                  m[0],
                  m[1],
                  "one server, same 16 domains",
                  "",
                  null));
    }
  }

  /** One claim+complete in the worker's next domain; tries the others when that one is empty. */
  private static long cycle(CitusSide s, int worker, long i) {
    for (int k = 0; k < CitusBench.DOMAINS; k++) {
      int d = (int) ((worker + i + k) % CitusBench.DOMAINS);
      Optional<Lease> l =
          s.ledger.claimNext(s.domains.get(d), Claimer.of("w" + worker).lease(CitusBench.LEASE));
      if (l.isPresent()) {
        s.claimedOnce(l.get());
        s.ledger.complete(l.get(), null);
        s.claims.incrementAndGet(d);
        return 1;
      }
    }
    return 0;
  }
}

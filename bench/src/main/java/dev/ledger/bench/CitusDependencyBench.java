package dev.ledger.bench;

import dev.ledger.Claimer;
import dev.ledger.Lease;
import dev.ledger.TaskSpec;
import dev.ledger.testing.CitusCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * B20's dependency rows (issue 29), B3's dependency row across the two workers: on each side a
 * domain {@code b20-down} whose tasks wait on tasks of {@code b20-up} (on the cluster each on its
 * own worker). The claim's p50 in {@code b20-down} with the blocked tasks ahead, each claim checked
 * to be a ready task and none claimable after them; then claim+complete of the upstream tasks at 8
 * workers, each completion unblocking one task on the other worker, checked: no double claim, as
 * many dependents unblocked as upstream tasks completed, one claimed and one completed event each.
 * Not thread-safe (one run).
 */
final class CitusDependencyBench {

  private CitusDependencyBench() {}

  /**
   * Runs the two rows.
   *
   * @param ctx the run
   * @param cluster the running cluster
   * @param url the cluster side's database on the coordinator
   * @param citus the cluster's side (the rows' first figures)
   * @param single the one-server side (the baseline)
   * @throws Exception on failure, or a failed check ({@link BenchFailure})
   */
  static void run(Context ctx, CitusCluster cluster, String url, CitusSide citus, CitusSide single)
      throws Exception {
    int n = ctx.size(60, 1_000);
    int probes = ctx.size(20, 200);
    double[] p50 = new double[2];
    double[] rate = new double[2];
    int k = 0;
    for (CitusSide s : List.of(citus, single)) {
      String up = "b20-up";
      String down = "b20-down";
      String upSchema = s.ledger.provision(up);
      String downSchema = s.ledger.provision(down);
      if (s == citus) {
        CitusFixtures.moveTo(url, upSchema, cluster.workers().get(0).port());
        CitusFixtures.moveTo(url, downSchema, cluster.workers().get(1).port());
      }
      List<String> upIds = new ArrayList<>();
      for (int b = 0; b < n; b += 500) {
        List<TaskSpec> batch = new ArrayList<>();
        for (int i = b; i < Math.min(n, b + 500); i++) {
          batch.add(TaskSpec.builder(up, "up " + i).createdBy("bench").build());
        }
        upIds.addAll(s.ledger.fileAll(batch));
      }
      for (int b = 0; b < n; b += 500) {
        List<TaskSpec> batch = new ArrayList<>();
        for (int i = b; i < Math.min(n, b + 500); i++) {
          batch.add(
              TaskSpec.builder(down, "down " + i)
                  .dependsOn(List.of(upIds.get(i)))
                  .priority(9)
                  .createdBy("bench")
                  .build());
        }
        s.ledger.fileAll(batch);
      }
      List<TaskSpec> ready = new ArrayList<>();
      for (int i = 0; i < probes; i++) {
        ready.add(TaskSpec.builder(down, "ready " + i).priority(0).createdBy("bench").build());
      }
      Set<String> readyIds = Set.copyOf(s.ledger.fileAll(ready));
      Context.execute(s.pool, "ANALYZE \"" + downSchema + "\".tasks");
      // the claim's p50 with n blocked tasks (waiting on the other worker's domain) ahead
      List<Double> times = new ArrayList<>();
      for (int i = 0; i < probes; i++) {
        long t0 = System.nanoTime();
        Lease l = s.ledger.claimNext(down, Claimer.of("p").lease(CitusBench.LEASE)).orElseThrow();
        times.add((System.nanoTime() - t0) / 1e6);
        Context.check(
            readyIds.contains(l.taskId()), "B20 " + s.name + ": a blocked task was claimed");
        s.ledger.complete(l, null);
      }
      p50[k] = Stats.median(times);
      Context.check(
          s.ledger.claimNext(down, Claimer.of("p").lease(CitusBench.LEASE)).isEmpty(),
          "B20 " + s.name + ": a task with an open dependency was claimable");
      // claim+complete upstream: each completion unblocks one task on the other worker
      Set<String> seen = ConcurrentHashMap.newKeySet();
      int workers = 8;
      rate[k] =
          s.measured(
              () ->
                  Workers.fixed(
                      workers,
                      n / workers,
                      (w, i) -> {
                        Lease l =
                            s.ledger
                                .claimNext(up, Claimer.of("u" + w).lease(CitusBench.LEASE))
                                .orElseThrow();
                        if (!seen.add(l.taskId())) {
                          throw new BenchFailure(
                              "B20 " + s.name + ": " + l.taskId() + " claimed twice");
                        }
                        s.ledger.complete(l, null);
                        return 1;
                      }));
      long done = (long) (n / workers) * workers;
      long unblocked =
          Context.count(
              s.pool,
              "SELECT count(*) FROM \""
                  + downSchema
                  + "\".tasks WHERE status = 'admitted' AND NOT blocked");
      Context.check(
          unblocked == done,
          "B20 "
              + s.name
              + ": "
              + done
              + " upstream tasks completed, "
              + unblocked
              + " dependents unblocked");
      Context.checkClaims(s.pool, upSchema, "B20 " + s.name + " upstream", done, true);
      k++;
    }
    ctx.results()
        .add(
            new Results.Row(
                "B20",
                "claim p50, " + n + " tasks ahead blocked by tasks on the other worker",
                "ms",
                Results.Kind.TIME,
                p50[0],
                p50[1],
                "one server, same domains",
                "",
                null));
    ctx.results()
        .add(
            new Results.Row(
                "B20",
                "claim+complete, 8 workers, each completion unblocks a task on the other worker",
                "cycles/s",
                Results.Kind.RATE,
                rate[0],
                rate[1],
                "one server, same domains",
                "",
                null));
  }
}

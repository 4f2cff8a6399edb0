package dev.ledger.bench;

import dev.ledger.testing.CitusCluster;
import dev.ledger.testing.Tools;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * B20, one tenant over a Citus cluster (issue 29): a coordinator and two workers ({@link
 * CitusCluster}: PostgreSQL 15 servers on this machine, {@code citus} preloaded), 16 domains, each
 * a distributed schema on one of the two workers, against the same 16 domains on one server (a
 * database without the {@code citus} extension on the coordinator's server: the same PostgreSQL,
 * build and settings). In one run:
 *
 * <ul>
 *   <li>file+admit at 1 and 8 clients, each filing round-robin into the 16 domains (B1's workload),
 *       and claim+complete at 8 and 32 workers over the 16 domains (B2's workload), every claim
 *       checked once in memory and once per task in the event log ({@link CitusCycles});
 *   <li>claim+complete at 8 workers while one domain moves to the other worker ({@code
 *       citus_move_shard_placement}, {@code block_writes}): claims per second before, during and
 *       after the move, 0 double claims, every claimed task completed and none left leased ({@link
 *       CitusMoveBench});
 *   <li>dependencies across the two workers (B3's dependency row): the claim's p50 in a domain
 *       whose tasks wait on tasks of a domain on the other worker, and claim+complete of the
 *       upstream tasks, each completion unblocking a task on the other worker ({@link
 *       CitusDependencyBench});
 *   <li>provisioning and the migration job's no-op over many distributed schemas (B7's and B6's
 *       workloads, {@link CitusMigrationBench});
 *   <li>full runs only: file+admit and claim+complete with the coordinator reaching its workers
 *       through {@link LatencyProxy} (2 ms round trip), as B8's remote rows ({@link
 *       CitusRemoteBench}).
 * </ul>
 *
 * <p>Each side is a {@link CitusSide}; the databases, pools and shard moves are {@link
 * CitusFixtures}. The machine's busy cores ({@link CpuMeter}) are reported per side: two cores
 * bound what the cluster can show here. Without Citus ({@value Tools#CITUS_LIBRARY} missing) B20 is
 * skipped with one line.
 */
final class CitusBench {

  /** Domains per side. */
  static final int DOMAINS = 16;

  /** The lease of every claim: long enough that none expires within a run. */
  static final Duration LEASE = Duration.ofMinutes(10);

  private CitusBench() {}

  /**
   * Runs B20, or skips it with one line where Citus is not installed.
   *
   * @param ctx the run
   * @throws Exception on failure
   */
  static void run(Context ctx) throws Exception {
    if (!Files.isRegularFile(Path.of(Tools.CITUS_LIBRARY))) {
      String line =
          "B20 skipped: citus is not installed ("
              + Tools.CITUS_LIBRARY
              + " missing; ../shared/tools/citus/install.sh installs it)";
      System.out.println("   " + line);
      ctx.results().note(line);
      return;
    }
    try (CitusCluster cluster = CitusCluster.start()) {
      // first: its rows are printed before the longer workloads start
      CitusMigrationBench.run(ctx, cluster);
      String clusterUrl = cluster.createDatabase("b20_cluster");
      String singleUrl = CitusFixtures.plainDatabase(cluster, "b20_single");
      try (CitusSide citus = new CitusSide("cluster", clusterUrl, 40);
          CitusSide single = new CitusSide("one server", singleUrl, 40)) {
        long onFirst = 0;
        for (String schema : citus.schemas) {
          onFirst +=
              CitusFixtures.nodeOf(clusterUrl, schema) == cluster.workers().get(0).port() ? 1 : 0;
        }
        Context.check(
            onFirst > 0 && onFirst < DOMAINS,
            "B20: the 16 domains are not spread over the two workers ("
                + onFirst
                + " on the first)");
        ctx.results()
            .note(
                "B20: a coordinator and two workers (Citus 13.2.2, PostgreSQL 15, this machine);"
                    + " of the 16 domains "
                    + onFirst
                    + " live on the first worker, "
                    + (DOMAINS - onFirst)
                    + " on the second. The one-server side is a database without the citus"
                    + " extension on the coordinator's server.");
        CitusCycles.append(ctx, "", citus, single, new int[] {1, 8});
        CitusCycles.cycles(ctx, "", citus, single, new int[] {8, 32});
        CitusMoveBench.run(ctx, cluster, clusterUrl, citus);
        citus.check();
        single.check();
        CitusDependencyBench.run(ctx, cluster, clusterUrl, citus, single);
        ctx.results()
            .note(
                "B20 busy cores (of "
                    + CpuMeter.cores()
                    + ", whole machine, median over the measured runs): cluster "
                    + citus.busyCores()
                    + ", one server "
                    + single.busyCores()
                    + "; 0 double claims (checked per claim and per task in the event log), every"
                    + " claimed task completed, none left leased");
      }
      if (!ctx.quick()) {
        CitusRemoteBench.run(ctx, cluster, singleUrl);
      }
    }
  }
}

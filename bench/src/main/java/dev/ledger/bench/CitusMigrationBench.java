package dev.ledger.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.migrate.MigrationJob;
import dev.ledger.migrate.MigrationReport;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.testing.CitusCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * B20's migration rows (issue 29): B7's and B6's workloads on the Citus cluster of {@link
 * CitusBench}, against the same on one server (a database without {@code citus} on the
 * coordinator's server). Each side provisions the same many domains, one at a time ({@code
 * Ledger.provision}: on the cluster each a distributed schema, {@code citus_schema_distribute}, in
 * the provisioning transaction), then the migration job runs once to record them (unmeasured) and
 * three more times as the measured no-op, each checked: every schema current, Flyway run 0 times,
 * no schema checked, one or two catalog statements. On the cluster the per-schema Flyway loop (B6's
 * baseline) is timed on a sample of the distributed schemas. Not thread-safe (one run).
 */
final class CitusMigrationBench {

  private CitusMigrationBench() {}

  /**
   * Runs the rows on a running cluster; makes and leaves its own two databases on it.
   *
   * @param ctx the run
   * @param cluster the running cluster
   * @throws Exception on failure, or a failed check ({@link BenchFailure})
   */
  static void run(Context ctx, CitusCluster cluster) throws Exception {
    int domains = ctx.size(20, 200);
    String clusterUrl = cluster.createDatabase("b20_migrate");
    String singleUrl = CitusFixtures.plainDatabase(cluster, "b20_migrate_single");
    try (HikariDataSource clusterPool = CitusFixtures.pool(clusterUrl, 8);
        HikariDataSource singlePool = CitusFixtures.pool(singleUrl, 8)) {
      Ledger onCluster = Context.ledger(clusterPool);
      Ledger onOne = Context.ledger(singlePool);
      List<String> clusterSchemas = new ArrayList<>();
      List<String> singleSchemas = new ArrayList<>();
      // provisioning, halves alternating: schemas per second, one at a time
      int half = domains / 2;
      double[] provisioned =
          Context.alternate(
              2,
              () -> provision(onCluster, clusterSchemas, half),
              () -> provision(onOne, singleSchemas, half));
      ctx.results()
          .add(
              new Results.Row(
                  "B20",
                  "provision a new domain (B7's workload, 1 at a time), cluster",
                  "schemas/s",
                  Results.Kind.RATE,
                  provisioned[0],
                  provisioned[1],
                  "one server",
                  "",
                  null));
      // the deploy's run that records the new schemas, then the measured no-op runs
      recordingRun(clusterPool, clusterSchemas.size());
      recordingRun(singlePool, singleSchemas.size());
      double[] noOp =
          Context.alternate(
              6,
              () -> noOpRun(clusterPool, clusterSchemas.size()),
              () -> noOpRun(singlePool, singleSchemas.size()));
      int n = clusterSchemas.size();
      ctx.results()
          .add(
              new Results.Row(
                  "B20",
                  String.format(
                      Locale.ROOT,
                      "no-op migrate, %,d up-to-date distributed schemas (B6's workload), cluster",
                      n),
                  "ms/schema",
                  Results.Kind.TIME,
                  noOp[0] / n,
                  noOp[1] / n,
                  "one server, same " + n + " schemas",
                  "",
                  null));
      int sample = Math.min(n, ctx.size(10, 40));
      double loopMs = flywayLoop(clusterPool, clusterSchemas.subList(0, sample));
      double ours = noOp[0] / n;
      ctx.results()
          .add(
              new Results.Row(
                  "B20",
                  String.format(
                      Locale.ROOT,
                      "no-op migrate, %,d distributed schemas: the job against one Flyway"
                          + " migrate() per schema (timed on %d), both on the cluster",
                      n,
                      sample),
                  "ms/schema",
                  Results.Kind.TIME,
                  ours,
                  loopMs,
                  "one Flyway migrate() per schema",
                  ctx.quick() ? "" : "≤ 5 ms/schema", // quick: no thresholds, as elsewhere
                  ctx.quick() ? null : ours <= 5));
      ctx.results()
          .note(
              "B20 migration rows: "
                  + n
                  + " domains per side provisioned one at a time (halves alternating); the no-op"
                  + " is MigrationJob.migrate() over the whole database (median of 6 runs per"
                  + " side, alternating), each checked to find every schema current, run Flyway 0"
                  + " times, check no schema and send 1 or 2 statements");
    }
  }

  /** Provisions {@code count} more domains, one at a time; returns schemas per second. */
  private static double provision(Ledger ledger, List<String> schemas, int count) {
    long t0 = System.nanoTime();
    for (int i = 0; i < count; i++) {
      schemas.add(ledger.provision(String.format(Locale.ROOT, "b20-migrate-%04d", schemas.size())));
    }
    return count / ((System.nanoTime() - t0) / 1e9);
  }

  /** The migration job's first run after the schemas were made: checks and records them. */
  private static void recordingRun(HikariDataSource pool, int domains) {
    MigrationReport r = MigrationJob.builder().dataSource(pool).build().migrate();
    Context.check(
        r.ok() && r.domains().size() == domains,
        "B20: the job run recording "
            + domains
            + " schemas: ok="
            + r.ok()
            + ", "
            + r.domains().size()
            + " domain schemas");
  }

  /** One measured no-op run of the migration job, checked; returns its wall time, ms. */
  private static double noOpRun(HikariDataSource pool, int domains) {
    long t0 = System.nanoTime();
    MigrationReport r = MigrationJob.builder().dataSource(pool).build().migrate();
    double ms = (System.nanoTime() - t0) / 1e6;
    Context.check(
        r.ok()
            && r.counts().flywayRuns() == 0
            && r.domains().size() == domains
            && r.counts().current() == r.counts().schemas()
            && r.counts().checked() == 0
            && r.counts().catalogQueries() >= 1
            && r.counts().catalogQueries() <= 2,
        "B20: the no-op job over "
            + domains
            + " schemas: ok="
            + r.ok()
            + ", "
            + r.counts().flywayRuns()
            + " Flyway runs, "
            + r.domains().size()
            + " domain schemas, "
            + r.counts().checked()
            + " checked, "
            + r.counts().catalogQueries()
            + " statements");
    return ms;
  }

  /** One Flyway {@code migrate()} per schema, each checked to apply nothing; ms per schema. */
  private static double flywayLoop(HikariDataSource pool, List<String> schemas) {
    long t0 = System.nanoTime();
    for (String schema : schemas) {
      MigrateResult r = LedgerMigrations.migrateDomain(pool, schema);
      Context.check(
          r.migrationsExecuted == 0,
          "B20: schema " + schema + " was not up to date (" + r.migrationsExecuted + " applied)");
    }
    return (System.nanoTime() - t0) / 1e6 / schemas.size();
  }
}

package dev.ledger.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * B6 (no-op migrate of many up-to-date domain schemas), B7 (new domain schemas, 1 to 8 at once) and
 * B8 (fleet). The migration job ({@code ledger-app migrate}) and the fleet reconciler are not on
 * main yet, so what is measured is what exists: B6's baseline, one Flyway {@code migrate()} per
 * schema ({@link LedgerMigrations#migrateDomain}); B7's {@code Ledger.provision} (Flyway plus the
 * route, under the domain's lock) from 1, 2, 4 and 8 threads against the sequential Flyway loop.
 * The rows without a product to measure say so.
 */
final class MigrationBench {

  private MigrationBench() {}

  /**
   * B6: the per-schema Flyway loop over 10, 100, 1,000 (and, full, a sample of 10,000) up-to-date
   * schemas. The schemas are made by running the domain migration scripts directly and copying the
   * template's Flyway history, so making 10,000 of them does not take 10,000 Flyway runs.
   *
   * @param ctx the run
   * @throws Exception on failure
   */
  static void noOp(Context ctx) throws Exception {
    String db = ctx.server().createDatabase("b6");
    try (HikariDataSource pool = ctx.server().pool(db, 8)) {
      Ledger ledger = Context.ledger(pool);
      String template = ledger.provision("b6-template");
      List<String> scripts = scripts(pool, template);
      List<String> schemas = new ArrayList<>();
      int[] sizes = ctx.quick() ? new int[] {10, 50} : new int[] {10, 100, 1_000};
      int sampleMax = ctx.size(100, 1_000);
      for (int size : sizes) {
        long t0 = System.nanoTime();
        while (schemas.size() < size) {
          int from = schemas.size();
          int to = Math.min(size, from + 50);
          clone(pool, template, scripts, from, to, schemas);
        }
        double makeS = (System.nanoTime() - t0) / 1e9;
        List<String> sample = sample(schemas, sampleMax);
        long l0 = System.nanoTime();
        for (String schema : sample) {
          MigrateResult r = LedgerMigrations.migrateDomain(pool, schema);
          Context.check(
              r.migrationsExecuted == 0,
              "B6: schema "
                  + schema
                  + " was not up to date ("
                  + r.migrationsExecuted
                  + " applied)");
        }
        double msPerSchema = (System.nanoTime() - l0) / 1e6 / sample.size();
        String workload =
            "no-op migrate, "
                + String.format("%,d", size)
                + " up-to-date schemas"
                + (sample.size() < size ? " (loop timed on " + sample.size() + ")" : "");
        ctx.results()
            .add(
                new Results.Row(
                    "B6",
                    workload,
                    "ms/schema",
                    Results.Kind.TIME,
                    Double.NaN,
                    msPerSchema,
                    "one Flyway migrate() per schema",
                    "≤ 5 ms/schema" + (size == 10_000 ? "; ≥ 100x the loop" : ""),
                    null));
        System.out.printf("   (%d schemas made in %.0f s)%n", size, makeS);
      }
      ctx.results()
          .note(
              "B6/B7/B8: `ledger-app migrate` and the fleet reconciler are not on main yet, so the"
                  + " migration job's own numbers are not measured; B6 shows the loop it must beat."
                  + " The full run stops at 1,000 schemas to stay near half an hour: the loop is"
                  + " linear, so 10,000 schemas cost 10,000 x the per-schema time shown.");
    } finally {
      ctx.server().dropDatabase(db);
    }
  }

  /**
   * B7: new domain schemas; ours is {@code Ledger.provision} from P threads, the baseline the
   * sequential Flyway loop, measured before and after ours.
   *
   * @param ctx the run
   * @throws Exception on failure
   */
  static void newDomains(Context ctx) throws Exception {
    String db = ctx.server().createDatabase("b7");
    try (HikariDataSource pool = ctx.server().pool(db, 32)) {
      Ledger ledger = Context.ledger(pool);
      int n = ctx.size(16, 200);
      AtomicInteger next = new AtomicInteger();
      List<Double> loop = new ArrayList<>();
      loop.add(loop(pool, n, next));
      double[] ours = new double[4];
      int[] parallel = {1, 2, 4, 8};
      for (int i = 0; i < parallel.length; i++) {
        int p = parallel[i];
        int base = next.getAndAdd(n);
        ours[i] =
            Workers.fixed(
                p,
                n / p,
                (w, k) -> {
                  ledger.provision("b7-ours-" + (base + w * (n / p) + k));
                  return 1;
                });
        if (i == 1) {
          loop.add(loop(pool, n, next));
        }
      }
      loop.add(loop(pool, n, next));
      double baseline = Stats.median(loop);
      for (int i = 0; i < parallel.length; i++) {
        ctx.results()
            .add(
                new Results.Row(
                    "B7",
                    n
                        + " new domains, Ledger.provision on "
                        + parallel[i]
                        + " thread"
                        + (parallel[i] == 1 ? "" : "s"),
                    "schemas/s",
                    Results.Kind.RATE,
                    ours[i],
                    baseline,
                    "sequential Flyway loop",
                    parallel[i] == 8 ? "≥ 2x" : "",
                    parallel[i] == 8 ? ours[i] / baseline >= 2 : null));
      }
      long routed =
          Context.count(
              pool, "SELECT count(*) FROM public.ledger_domains WHERE domain LIKE 'b7-ours-%'");
      long current =
          Context.count(pool, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'ledger_b7_%'");
      long expected = (long) parallel.length * n + (long) loop.size() * n;
      Context.check(
          routed == (long) parallel.length * n && current == expected,
          "B7: " + routed + " routes and " + current + " schemas, expected " + expected);
      ctx.results()
          .note(
              "B7: ours here is Ledger.provision (runtime provisioning, one Flyway run per domain"
                  + " under its advisory lock, plus the route), the part of the migration job that"
                  + " exists; "
                  + n
                  + " schemas per measurement, the loop measured 3 times between them (median)");
    } finally {
      ctx.server().dropDatabase(db);
    }
  }

  /**
   * B8: the fleet reconciler is not on main yet; the row says so.
   *
   * @param ctx the run
   */
  static void fleet(Context ctx) {
    ctx.results()
        .add(
            new Results.Row(
                "B8",
                "fleet: 20 tenant databases, one new migration each",
                "s",
                Results.Kind.TIME,
                Double.NaN,
                Double.NaN,
                "sequential per-tenant run",
                "≥ 0.7 x min(parallelism, tenants)",
                null));
  }

  private static double loop(HikariDataSource pool, int n, AtomicInteger next) {
    int base = next.getAndAdd(n);
    long t0 = System.nanoTime();
    for (int i = 0; i < n; i++) {
      MigrateResult r =
          LedgerMigrations.migrateDomain(pool, DomainSchemas.schemaName("b7-loop-" + (base + i)));
      int expected = Integer.parseInt(LedgerMigrations.DOMAIN_VERSION);
      Context.check(
          r.migrationsExecuted == expected,
          "B7 loop: " + r.migrationsExecuted + " migrations applied, not " + expected);
    }
    return n / ((System.nanoTime() - t0) / 1e9);
  }

  private static List<String> sample(List<String> all, int max) {
    if (all.size() <= max) {
      return all;
    }
    List<String> out = new ArrayList<>(max);
    double step = all.size() / (double) max;
    for (int i = 0; i < max; i++) {
      out.add(all.get((int) (i * step)));
    }
    return out;
  }

  /** The domain scripts Flyway applied to the template, in order, as text. */
  private static List<String> scripts(HikariDataSource pool, String template) throws IOException {
    List<String> out = new ArrayList<>();
    for (MigrationInfo m : LedgerMigrations.domain(pool, template).load().info().applied()) {
      if (m.getScript() == null || !m.getScript().endsWith(".sql")) {
        continue;
      }
      String path =
          LedgerMigrations.DOMAIN_LOCATION.substring("classpath:".length()) + "/" + m.getScript();
      try (InputStream in = LedgerMigrations.class.getClassLoader().getResourceAsStream(path)) {
        if (in == null) {
          throw new BenchFailure("B6: migration script " + path + " is not on the class path");
        }
        out.add(new String(in.readAllBytes(), StandardCharsets.UTF_8));
      }
    }
    Context.check(
        out.size() == Integer.parseInt(LedgerMigrations.DOMAIN_VERSION),
        "B6: expected " + LedgerMigrations.DOMAIN_VERSION + " domain scripts, found " + out.size());
    return out;
  }

  private static void clone(
      HikariDataSource pool,
      String template,
      List<String> scripts,
      int from,
      int to,
      List<String> schemas)
      throws SQLException {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      for (int i = from; i < to; i++) {
        String domain = "b6-" + i;
        String schema = DomainSchemas.schemaName(domain);
        s.execute("CREATE SCHEMA \"" + schema + "\"");
        for (String script : scripts) {
          s.execute(script.replace("${flyway:defaultSchema}", schema));
        }
        s.execute(
            "CREATE TABLE \""
                + schema
                + "\".flyway_schema_history (LIKE \""
                + template
                + "\".flyway_schema_history INCLUDING ALL)");
        s.execute(
            "INSERT INTO \""
                + schema
                + "\".flyway_schema_history SELECT * FROM \""
                + template
                + "\".flyway_schema_history");
        s.execute(
            "INSERT INTO public.ledger_domains (domain, schema) VALUES ('"
                + domain
                + "', '\""
                + schema
                + "\"')");
        schemas.add(schema);
      }
      c.commit();
      c.setAutoCommit(true);
    }
  }
}

package dev.ledger.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.migrate.Dsn;
import dev.ledger.migrate.Fleet;
import dev.ledger.migrate.FleetReport;
import dev.ledger.migrate.MigrationJob;
import dev.ledger.migrate.MigrationReport;
import dev.ledger.migrate.TenantReport;
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
 * B6 (no-op migrate of many up-to-date domain schemas), B7 (new domain schemas at parallelism 1 to
 * 8) and B8 (a fleet of tenant databases): the migration job ({@link MigrationJob}) and the fleet
 * reconciler ({@link Fleet}) against one Flyway {@code migrate()} per schema and a sequential
 * per-tenant run.
 */
final class MigrationBench {

  private static final String FLEET_MIGRATION = "classpath:db/bench/fleet";

  /**
   * B8's remote-tenant rows: the delay the proxy adds each way, µs: a 2 ms round trip (another
   * server nearby) and a 10 ms one (another region).
   */
  private static final long[] REMOTE_ONE_WAY_MICROS = {1_000, 5_000};

  private MigrationBench() {}

  /**
   * B6: the per-schema Flyway loop over 10, 100, 1,000 (and, full, a sample of 10,000) up-to-date
   * schemas. The schemas are made by running the domain migration scripts directly and copying the
   * template's Flyway history, so making 10,000 of them does not take 10,000 Flyway runs; then one
   * unmeasured job run checks the new schemas in full and records them in the directory's {@code
   * ledger_schema_state}, as the run of a deploy that made them would, and the measured no-op runs
   * come after it.
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
      int[] sizes = ctx.quick() ? new int[] {10, 50} : new int[] {10, 100, 1_000, 10_000};
      int sampleMax = ctx.size(50, 500);
      for (int size : sizes) {
        long t0 = System.nanoTime();
        int made = size - schemas.size();
        while (schemas.size() < size) {
          int from = schemas.size();
          int to = Math.min(size, from + 50);
          clone(pool, template, scripts, from, to, schemas);
        }
        double makeS = (System.nanoTime() - t0) / 1e9;
        // the routed schemas: the clones and the template
        double recordMs = recordingJob(ctx, pool, db, size + 1, made);
        // ours: the migration job over the whole database (3 runs, median), around the loop
        List<Double> jobMs = new ArrayList<>();
        jobMs.add(noOpJob(ctx, pool, db, size + 1));
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
        jobMs.add(noOpJob(ctx, pool, db, size + 1));
        jobMs.add(noOpJob(ctx, pool, db, size + 1));
        double oursPerSchema = Stats.median(jobMs) / size;
        String workload =
            "no-op migrate, "
                + String.format("%,d", size)
                + " up-to-date schemas"
                + (sample.size() < size ? " (loop timed on " + sample.size() + ")" : "");
        boolean at10k = size == 10_000;
        ctx.results()
            .add(
                new Results.Row(
                    "B6",
                    workload,
                    "ms/schema",
                    Results.Kind.TIME,
                    oursPerSchema,
                    msPerSchema,
                    "one Flyway migrate() per schema",
                    "≤ 5 ms/schema" + (at10k ? "; ≥ 100x the loop" : ""),
                    oursPerSchema <= 5 && (!at10k || msPerSchema / oursPerSchema >= 100)));
        System.out.printf(
            "   (%d schemas made in %.0f s; the job run that checked and recorded the new ones: %.0f"
                + " ms)%n",
            size, makeS, recordMs);
      }
      ctx.results()
          .note(
              "B6: ours is MigrationJob.migrate() over the whole database (median of 3 runs),"
                  + " checked to report every schema current, to run Flyway 0 times and to send 2"
                  + " statements (the state table read, no schema checked); the schemas are made by"
                  + " running the domain scripts and copying the template's Flyway history, then one"
                  + " unmeasured job run checks and records them (as the deploy that made them"
                  + " would); the loop is timed on an even sample where the set is large");
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
      ledger.domains(); // the directory exists before the loop and the job run
      int n = ctx.size(12, 200);
      AtomicInteger next = new AtomicInteger();
      List<Double> loop = new ArrayList<>();
      loop.add(loop(pool, n, next));
      double[] ours = new double[4];
      int[] parallel = {1, 2, 4, 8};
      for (int i = 0; i < parallel.length; i++) {
        int p = parallel[i];
        int base = next.getAndAdd(n);
        // n new domains: routes without schemas, as a deploy that provisions ahead of time leaves
        StringBuilder routes = new StringBuilder();
        for (int k = 0; k < n; k++) {
          String domain = "b7-ours-" + (base + k);
          routes
              .append(routes.length() == 0 ? "" : ", ")
              .append("('")
              .append(domain)
              .append("', '")
              .append(DomainSchemas.quotedSchemaName(domain))
              .append("')");
        }
        Context.execute(
            pool, "INSERT INTO public.ledger_domains (domain, schema) VALUES " + routes);
        long t0 = System.nanoTime();
        MigrationReport r =
            MigrationJob.builder()
                .dataSource(pool)
                .lockConnections(Dsn.parse(ctx.server().url(db))::connect)
                .parallelism(p)
                .build()
                .migrate();
        ours[i] = n / ((System.nanoTime() - t0) / 1e9);
        Context.check(
            r.ok() && r.counts().created() == n,
            "B7: the job at parallelism "
                + p
                + " made "
                + r.counts().created()
                + " of "
                + n
                + " schemas (ok="
                + r.ok()
                + ")");
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
                    n + " new domains, migrate job at parallelism " + parallel[i],
                    "schemas/s",
                    Results.Kind.RATE,
                    ours[i],
                    baseline,
                    "sequential Flyway loop",
                    parallel[i] == 8 ? "≥ 2x" : "",
                    parallel[i] == 8 ? ours[i] / baseline >= 2 : null));
      }
      long current =
          Context.count(pool, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'ledger_b7_%'");
      long expected = (long) parallel.length * n + (long) loop.size() * n;
      Context.check(current == expected, "B7: " + current + " schemas, expected " + expected);
      ctx.results()
          .note(
              "B7: ours is MigrationJob.migrate() making "
                  + n
                  + " new domain schemas (routes inserted ahead, as a deploy that provisions"
                  + " domains leaves them) at parallelism 1 to 8; the loop is one Flyway migrate()"
                  + " per new schema, measured 3 times between them (median)");
    } finally {
      ctx.server().dropDatabase(db);
    }
  }

  /**
   * B8: a fleet of tenant databases, each a current ledger with a few domains, gets one new domain
   * migration (an extra location, {@code db/bench/fleet}); ours is {@link Fleet#migrate()} at
   * parallelism 8, the baseline the same reconciler at parallelism 1 (a sequential per-tenant run)
   * on a second, identical fleet. Every tenant must end active with the migration applied to each
   * of its domain schemas.
   *
   * @param ctx the run
   * @throws Exception on failure
   */
  static void fleet(Context ctx) throws Exception {
    int tenants = ctx.size(3, 20);
    int domains = 3;
    int p = Math.min(8, tenants);
    String target = "≥ 0.7 x " + p + " = " + String.format(java.util.Locale.ROOT, "%.1fx", 0.7 * p);
    // on this machine's server: the parallel side first, then the sequential one
    FleetSide local8 = fleetSide(ctx, tenants, domains, 8, null);
    FleetSide local1 = fleetSide(ctx, tenants, domains, 1, null);
    ctx.results()
        .add(
            new Results.Row(
                "B8",
                "fleet: " + tenants + " tenant databases, one new migration each, parallelism 8",
                "s",
                Results.Kind.TIME,
                local8.seconds(),
                local1.seconds(),
                "same reconciler, parallelism 1",
                target,
                local1.seconds() / local8.seconds() >= 0.7 * p));
    // the tenants as if on other hosts: every tenant connection through a proxy adding delay
    StringBuilder remoteBusy = new StringBuilder();
    for (long oneWayMicros : REMOTE_ONE_WAY_MICROS) {
      try (LatencyProxy proxy = LatencyProxy.start(ctx.server().address(), oneWayMicros)) {
        FleetSide remote8 = fleetSide(ctx, tenants, domains, 8, proxy);
        FleetSide remote1 = fleetSide(ctx, tenants, domains, 1, proxy);
        String rtt = String.format(java.util.Locale.ROOT, "%.0f ms", 2 * oneWayMicros / 1000.0);
        ctx.results()
            .add(
                new Results.Row(
                    "B8",
                    "fleet: "
                        + tenants
                        + " tenant databases at "
                        + rtt
                        + " round trip (proxy), parallelism 8",
                    "s",
                    Results.Kind.TIME,
                    remote8.seconds(),
                    remote1.seconds(),
                    "same reconciler, parallelism 1",
                    target,
                    remote1.seconds() / remote8.seconds() >= 0.7 * p));
        remoteBusy.append(
            String.format(
                java.util.Locale.ROOT,
                "%s at %s: %.2f at parallelism 1, %.2f at 8",
                remoteBusy.length() == 0 ? "" : ";",
                rtt,
                remote1.busyCores(),
                remote8.busyCores()));
      }
    }
    ctx.results()
        .note(
            "B8: each tenant is its own database holding a current ledger with "
                + domains
                + " domain schemas; the new migration (db/bench/fleet, an index) is applied to"
                + " every domain schema of every tenant; a fresh, identical fleet per"
                + " measurement, each measured once. "
                + String.format(
                    java.util.Locale.ROOT,
                    "Machine busy cores (of %d): %.2f at parallelism 1, %.2f at 8; with every"
                        + " tenant on this machine's one server, parallelism can speed it up"
                        + " at most %d / %.2f = %.2fx. The round-trip rows reach each tenant"
                        + " through a local TCP proxy that holds every packet half the round"
                        + " trip in each direction (tenants on other hosts); busy cores%s",
                    CpuMeter.cores(),
                    local1.busyCores(),
                    local8.busyCores(),
                    CpuMeter.cores(),
                    local1.busyCores(),
                    CpuMeter.cores() / local1.busyCores(),
                    remoteBusy));
  }

  /** One fleet measurement: how long it took and how busy the machine was. */
  private record FleetSide(double seconds, double busyCores) {}

  /**
   * Makes a fleet (a control database and {@code tenants} tenant databases, each a current ledger
   * with {@code domains} domain schemas), migrates it once with the fleet migration added at the
   * given parallelism, checks every tenant ended active with the migration applied to each domain
   * schema, and drops it.
   *
   * @param proxy when set, the tenants' DSNs point at it (the control database does not)
   */
  private static FleetSide fleetSide(
      Context ctx, int tenants, int domains, int parallelism, LatencyProxy proxy) throws Exception {
    List<String> made = new ArrayList<>();
    try {
      String control = ctx.server().createDatabase("b8control");
      made.add(control);
      List<String> dbs = new ArrayList<>();
      for (int t = 0; t < tenants; t++) {
        String db = ctx.server().createDatabase("b8t");
        made.add(db);
        dbs.add(db);
        try (HikariDataSource pool = ctx.server().pool(db, 4)) {
          Ledger ledger = Context.ledger(pool);
          for (int d = 0; d < domains; d++) {
            ledger.provision("tenant-domain-" + d);
          }
        }
      }
      try (HikariDataSource controlPool = ctx.server().pool(control, 4)) {
        Fleet fleet =
            Fleet.builder()
                .control(controlPool)
                .parallelism(parallelism)
                .extraDomainLocations(List.of(FLEET_MIGRATION))
                .build();
        for (int t = 0; t < dbs.size(); t++) {
          fleet.register(
              "tenant-" + t,
              proxy == null
                  ? ctx.server().url(dbs.get(t))
                  : ctx.server().urlVia(dbs.get(t), proxy.port()));
        }
        CpuMeter cpu = CpuMeter.start();
        long t0 = System.nanoTime();
        FleetReport report = fleet.migrate();
        double seconds = (System.nanoTime() - t0) / 1e9;
        double busy = cpu.busyCores();
        int applied = report.tenants().stream().mapToInt(TenantReport::applied).sum();
        Context.check(
            report.ok() && report.tenants().size() == tenants && applied == tenants * domains,
            "B8 at parallelism "
                + parallelism
                + (proxy == null ? "" : " through the proxy")
                + ": ok="
                + report.ok()
                + ", "
                + report.tenants().size()
                + " tenants, "
                + applied
                + " migrations applied, expected "
                + tenants * domains);
        return new FleetSide(seconds, busy);
      }
    } finally {
      for (String db : made) {
        ctx.server().dropDatabase(db);
      }
    }
  }

  /**
   * B6: the job run after new schemas were made (not measured as the no-op): it checks the schemas
   * not yet recorded in full, finds them current, and records them.
   *
   * @param domains the routed domain schemas
   * @param made how many of them were made since the last job run
   */
  private static double recordingJob(
      Context ctx, HikariDataSource pool, String db, int domains, int made) {
    long t0 = System.nanoTime();
    MigrationReport r = migrateOnce(ctx, pool, db);
    double ms = (System.nanoTime() - t0) / 1e6;
    Context.check(
        r.ok()
            && r.counts().flywayRuns() == 0
            && r.domains().size() == domains
            && r.counts().current() == domains + 1
            && r.counts().recorded() >= made,
        "B6: the job run recording "
            + domains
            + " schemas: ok="
            + r.ok()
            + ", "
            + r.counts().flywayRuns()
            + " Flyway runs, "
            + r.counts().checked()
            + " checked, "
            + r.counts().recorded()
            + " recorded");
    return ms;
  }

  /** One run of the migration job over the database, its lock on a connection of its own. */
  private static MigrationReport migrateOnce(Context ctx, HikariDataSource pool, String db) {
    return MigrationJob.builder()
        .dataSource(pool)
        .lockConnections(Dsn.parse(ctx.server().url(db))::connect)
        .build()
        .migrate();
  }

  /** B6: one no-op run of the migration job; checks every schema was current, none read. */
  private static double noOpJob(Context ctx, HikariDataSource pool, String db, int domains) {
    long t0 = System.nanoTime();
    MigrationReport r = migrateOnce(ctx, pool, db);
    double ms = (System.nanoTime() - t0) / 1e6;
    Context.check(
        r.ok()
            && r.counts().flywayRuns() == 0
            && r.domains().size() == domains
            && r.counts().current() == domains + 1
            && r.counts().checked() == 0
            && r.counts().catalogQueries() == 2,
        "B6: the no-op job over "
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

package dev.ledger.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Claimer;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.TaskSpec;
import dev.ledger.migrate.Fleet;
import dev.ledger.migrate.FleetReport;
import dev.ledger.migrate.TenantReport;
import dev.ledger.tenants.TenantDirectory;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * B11 (the cost of routing: 200 tenants served by one {@link TenantDirectory} against one {@link
 * Ledger} of one database) and B8's row with its tenants spread over 3 PostgreSQL servers.
 */
final class TenantBench {

  private static final String DOMAIN = "b11";
  private static final int TENANTS = 200;
  private static final int THREADS = 8;
  private static final int WARM_CYCLES = 10;

  private TenantBench() {}

  /**
   * B11: 200 tenants registered in a control database and served by one directory; 8 threads run
   * file+admit+claim+complete cycles, each on a tenant drawn at random, against the same cycles on
   * one ledger of one database. Every tenant is warmed (its pool and ledger opened) before the
   * measurement. Target ≥ 0.8x.
   *
   * @param ctx the run
   * @throws Exception on failure
   */
  static void routing(Context ctx) throws Exception {
    int databases = ctx.size(10, TENANTS);
    int cycles = ctx.size(2_000, 20_000);
    int rounds = ctx.size(1, 3);
    List<String> made = new ArrayList<>();
    try (HikariDataSource admin = ctx.server().pool("postgres", 1)) {
      String template = ctx.server().createDatabase("b11tmpl");
      made.add(template);
      try (HikariDataSource pool = ctx.server().pool(template, 2)) {
        Context.ledger(pool).provision(DOMAIN);
      }
      List<String> dbs = new ArrayList<>();
      for (int i = 0; i <= databases; i++) {
        String db = template.replace("b11tmpl", "b11t" + i);
        Context.execute(admin, "CREATE DATABASE " + db + " TEMPLATE " + template);
        made.add(db);
        dbs.add(db);
      }
      String single = dbs.remove(databases);
      String control = ctx.server().createDatabase("b11control");
      made.add(control);
      long maxConnections = Context.count(admin, "SELECT current_setting('max_connections')::int");
      // one connection per tenant and a quarter more for tenants called twice at once; below one
      // per tenant, calls to a tenant without a connection evict another's (measured in the note)
      int budget =
          Integer.getInteger(
              "bench.b11.budget",
              (int) Math.max(16, Math.min(TENANTS + TENANTS / 4, maxConnections - 40)));
      try (HikariDataSource controlPool = ctx.server().pool(control, 3);
          HikariDataSource singlePool = ctx.server().pool(single, THREADS + 2)) {
        Fleet fleet = Fleet.builder().control(controlPool).build();
        for (int t = 0; t < TENANTS; t++) {
          String url = ctx.server().url(dbs.get(t % databases));
          fleet.register(
              tenant(t), url + (url.contains("?") ? "&" : "?") + "ApplicationName=" + tenant(t));
        }
        FleetReport report = fleet.migrate();
        Context.check(
            report.active() == TENANTS, "B11: " + report.active() + " of " + TENANTS + " active");
        LedgerConfig config = LedgerConfig.builder().runtimeDdl(false).build();
        Ledger one = Ledger.open(singlePool, config);
        try (TenantDirectory directory =
            TenantDirectory.builder()
                .control(controlPool)
                .refreshInterval(Duration.ZERO)
                .connectionBudget(budget)
                .connectionsPerTenant(2)
                .connectTimeout(Duration.ofSeconds(30))
                .idleTimeout(Duration.ofMinutes(10))
                .ledgerConfig(config)
                .open()) {
          // steady state on both sides: every tenant's connection past pgjdbc's prepareThreshold
          // (5) and the server's custom-plan count (5), the baseline's pool the same cycles
          Workers.fixed(
              THREADS,
              (long) TENANTS / THREADS * WARM_CYCLES,
              (w, i) -> {
                String t = tenant((int) (i / WARM_CYCLES) * THREADS + w);
                directory.run(t, l -> cycle(l, "warm"));
                return 1;
              });
          Workers.fixed(
              THREADS,
              (long) TENANTS / THREADS * WARM_CYCLES,
              (w, i) -> {
                cycle(one, "warm");
                return 1;
              });
          // then one measurement's worth of random cycles, unmeasured, on both sides: tenants
          // called
          // twice at once open their second connections here (the budget's margin), not in the
          // first measured round
          Workers.fixed(
              THREADS,
              cycles / THREADS,
              (w, i) -> {
                String t = tenant(ThreadLocalRandom.current().nextInt(TENANTS));
                directory.run(t, l -> cycle(l, "warm"));
                return 1;
              });
          Workers.fixed(
              THREADS,
              cycles / THREADS,
              (w, i) -> {
                cycle(one, "warm");
                return 1;
              });
          System.err.printf(
              Locale.ROOT,
              "B11 diag: warmed, %d connects, %d evictions, %d open%n",
              directory.connectionsOpened(),
              directory.budgetEvictions(),
              directory.openConnections());
          long[] churn = new long[2];
          double[] m =
              Context.alternate(
                  rounds,
                  () -> {
                    long opened = directory.connectionsOpened();
                    long evicted = directory.budgetEvictions();
                    double rate =
                        Workers.fixed(
                            THREADS,
                            cycles / THREADS,
                            (w, i) -> {
                              String t = tenant(ThreadLocalRandom.current().nextInt(TENANTS));
                              directory.run(t, l -> cycle(l, "w" + w));
                              return 1;
                            });
                    churn[0] += directory.connectionsOpened() - opened;
                    churn[1] += directory.budgetEvictions() - evicted;
                    System.err.printf(
                        Locale.ROOT,
                        "B11 diag: %.1f cycles/s, %d connects, %d evictions, %d open%n",
                        rate,
                        directory.connectionsOpened() - opened,
                        directory.budgetEvictions() - evicted,
                        directory.openConnections());
                    return rate;
                  },
                  () ->
                      Workers.fixed(
                          THREADS,
                          cycles / THREADS,
                          (w, i) -> {
                            cycle(one, "w" + w);
                            return 1;
                          }));
          ctx.results()
              .add(
                  new Results.Row(
                      "B11",
                      "200 tenants, one directory: file+claim+complete on a random tenant, "
                          + THREADS
                          + " threads",
                      "cycles/s",
                      Results.Kind.RATE,
                      m[0],
                      m[1],
                      "one Ledger on one database",
                      "≥ 0.8x",
                      m[0] / m[1] >= 0.8));
          ctx.results()
              .note(
                  String.format(
                      Locale.ROOT,
                      "B11: %d tenants registered in a control database over %d databases made"
                          + " from one migrated template (%d tenants per database, each its own"
                          + " DSN, pool and ledger), served by one TenantDirectory (budget %d"
                          + " connections, 2 per tenant, runtime DDL off, every tenant warmed"
                          + " first with 10 cycles, then one unmeasured round of random cycles on"
                          + " both sides); %d cycles per measurement, each on a tenant drawn at"
                          + " random; the baseline runs the same cycles on one Ledger over a pool"
                          + " of %d on one database made from the same template.",
                      TENANTS,
                      databases,
                      TENANTS / databases,
                      budget,
                      cycles,
                      THREADS + 2));
        }
      }
    } finally {
      for (String db : made) {
        ctx.server().dropDatabase(db);
      }
    }
  }

  private static String tenant(int t) {
    return String.format(Locale.ROOT, "b11-%03d", t);
  }

  /** One file+admit+claim+complete cycle; a claim that finds its task skip-locked tries again. */
  private static int cycle(Ledger ledger, String holder) {
    String id = ledger.file(TaskSpec.builder(DOMAIN, "cycle").build());
    ledger.admit(id);
    for (int attempt = 0; attempt < 1_000; attempt++) {
      Optional<Lease> lease =
          ledger.claimNext(DOMAIN, Claimer.of(holder).lease(Duration.ofMinutes(10)));
      if (lease.isPresent()) {
        ledger.complete(lease.get(), null);
        return 1;
      }
    }
    throw new BenchFailure("B11: nothing claimable in 1,000 tries right after an admit");
  }

  /**
   * B8 over 3 servers: the fleet of {@code tenants} tenant databases spread round-robin over the
   * bench's server and two embedded servers started for it, each a current ledger with 3 domain
   * schemas, gets one new domain migration; parallelism 8 against 1, a fresh fleet per side.
   *
   * @param ctx the run
   * @throws Exception on failure
   */
  static void fleetOverServers(Context ctx) throws Exception {
    int tenants = ctx.size(6, 20);
    int p = Math.min(8, tenants);
    try (EmbeddedPostgres b = EmbeddedPostgres.builder().start();
        EmbeddedPostgres c = EmbeddedPostgres.builder().start()) {
      List<String> servers =
          List.of("", b.getJdbcUrl("postgres", "postgres"), c.getJdbcUrl("postgres", "postgres"));
      double parallel = fleetRun(ctx, servers, tenants, 8);
      double sequential = fleetRun(ctx, servers, tenants, 1);
      ctx.results()
          .add(
              new Results.Row(
                  "B8",
                  "fleet: " + tenants + " tenant databases over 3 servers, parallelism 8",
                  "s",
                  Results.Kind.TIME,
                  parallel,
                  sequential,
                  "same reconciler, parallelism 1",
                  String.format(Locale.ROOT, "≥ 0.7 x %d = %.1fx", p, 0.7 * p),
                  sequential / parallel >= 0.7 * p));
      ctx.results()
          .note(
              "B8 over 3 servers: tenants round-robin over the bench's server and two embedded"
                  + " PostgreSQL servers started for the row, all on this machine (so its cores"
                  + " are shared as in the one-server row).");
    }
  }

  /**
   * One fleet run over several servers: makes the tenant databases ({@code ""} is the bench's
   * server, else an admin JDBC URL), migrates them with the fleet migration added, checks, drops.
   */
  private static double fleetRun(Context ctx, List<String> servers, int tenants, int parallelism)
      throws Exception {
    List<String[]> made = new ArrayList<>();
    String control = ctx.server().createDatabase("b8scontrol");
    try {
      List<String> urls = new ArrayList<>();
      for (int t = 0; t < tenants; t++) {
        String admin = servers.get(t % servers.size());
        String db;
        String url;
        if (admin.isEmpty()) {
          db = ctx.server().createDatabase("b8s");
          url = ctx.server().url(db);
        } else {
          db = "b8s_" + parallelism + "_" + t;
          try (Connection conn = DriverManager.getConnection(admin);
              Statement s = conn.createStatement()) {
            s.execute("CREATE DATABASE " + db);
          }
          url = admin.replace("/postgres?", "/" + db + "?");
        }
        made.add(new String[] {admin, db});
        urls.add(url);
        try (HikariDataSource pool = pool(url)) {
          Ledger ledger = Context.ledger(pool);
          for (int d = 0; d < 3; d++) {
            ledger.provision("tenant-domain-" + d);
          }
        }
      }
      try (HikariDataSource controlPool = ctx.server().pool(control, 4)) {
        Fleet fleet =
            Fleet.builder()
                .control(controlPool)
                .parallelism(parallelism)
                .extraDomainLocations(List.of("classpath:db/bench/fleet"))
                .build();
        for (int t = 0; t < tenants; t++) {
          fleet.register("tenant-" + t, urls.get(t));
        }
        long t0 = System.nanoTime();
        FleetReport report = fleet.migrate();
        double seconds = (System.nanoTime() - t0) / 1e9;
        int applied = report.tenants().stream().mapToInt(TenantReport::applied).sum();
        Context.check(
            report.ok() && report.tenants().size() == tenants && applied == tenants * 3,
            "B8 over 3 servers at parallelism "
                + parallelism
                + ": ok="
                + report.ok()
                + ", "
                + applied
                + " migrations applied, expected "
                + tenants * 3);
        return seconds;
      }
    } finally {
      ctx.server().dropDatabase(control);
      for (String[] m : made) {
        if (m[0].isEmpty()) {
          ctx.server().dropDatabase(m[1]);
        } else {
          try (Connection conn = DriverManager.getConnection(m[0]);
              Statement s = conn.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + m[1] + " WITH (FORCE)");
          }
        }
      }
    }
  }

  private static HikariDataSource pool(String url) {
    com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
    config.setJdbcUrl(url);
    config.setMaximumPoolSize(4);
    config.setMinimumIdle(0);
    return new HikariDataSource(config);
  }
}

package dev.ledger.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Claimer;
import dev.ledger.Completion;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import dev.ledger.event.Event;
import dev.ledger.retention.PurgeReport;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * B18 (issue 25, retention): the purge's rate in tasks per second over a domain of old completed
 * tasks, and the claim rate of workers claiming and completing the domain's open tasks while the
 * purge runs, against the same workers without it (ratio). Checked every run, quick or full: the
 * purge removes exactly the old tasks, no open task and no task completed during it; no task is
 * claimed twice; replay equals the live projection before and after. Quick mode checks those only;
 * its rates mean nothing on a loaded machine.
 */
final class RetentionBench {

  private static final String DOMAIN = "b18";
  private static final int WORKERS = 2;

  private RetentionBench() {}

  static void run(Context ctx) throws Exception {
    String db = ctx.server().createDatabase("b18");
    try (HikariDataSource pool = ctx.server().pool(db, 8)) {
      Ledger ledger = Ledger.open(pool);
      int old = ctx.size(5_000, 1_000_000);
      // enough for 5 s of claims before the purge's run at well over CI's 6,000 tasks/s (30,000 ran
      // dry there before the purge began)
      int open = ctx.size(80_000, 400_000);
      String schema = ledger.provision(DOMAIN);
      // seeded with COPY (the ledger's own events and fold, as B5 checks): the old tasks filed,
      // admitted, claimed and completed three days ago, past the 1-day retention; the open ones
      // admitted, a day ago (the API filed them in 9 minutes per 100,000 on a loaded machine)
      Instant threeDaysAgo = Instant.now().minus(Duration.ofDays(3));
      try (Seeder seeder = new Seeder(pool, DOMAIN, schema, threeDaysAgo)) {
        for (int i = 0; i < old; i++) {
          seeder.add(
              TaskSpec.builder(DOMAIN, "old " + i).createdBy("bench").build(),
              new Event.Admitted(),
              new Event.Claimed("seed", threeDaysAgo.plus(Duration.ofHours(1))),
              new Event.Completed("ok"));
        }
      }
      try (Seeder seeder = new Seeder(pool, DOMAIN, schema)) {
        for (int i = 0; i < open; i++) {
          seeder.add(
              TaskSpec.builder(DOMAIN, "open " + i).createdBy("bench").build(),
              new Event.Admitted());
        }
      }
      Context.execute(pool, "ANALYZE");
      Context.check(
          replayEqual(pool, schema), "B18: replay differs from the live projection before");
      ledger.retention().set(DOMAIN, Duration.ofDays(1));

      Set<String> seen = ConcurrentHashMap.newKeySet();
      // warm-up (the JIT, the pool's connections, the claim's plan): seeded tasks are claimed cold
      claimRate(ledger, seen, () -> sleep(Duration.ofSeconds(ctx.size(2, 5))));
      Duration alone = Duration.ofSeconds(ctx.size(3, 20));
      double without = claimRate(ledger, seen, () -> sleep(alone));
      double[] purgeRate = new double[1];
      long[] removed = new long[2];
      double during =
          claimRate(
              ledger,
              seen,
              () -> {
                PurgeReport r = ledger.retention().purge(DOMAIN, 1000, p -> {});
                purgeRate[0] = r.tasksRemoved() / (r.elapsed().toNanos() / 1e9);
                removed[0] = r.tasksRemoved();
                removed[1] = r.eventsRemoved();
              });

      Context.check(removed[0] == old, "B18: removed " + removed[0] + " tasks, not " + old);
      Context.check(removed[1] == 4L * old, "B18: removed " + removed[1] + " events");
      long left = Context.count(pool, "SELECT count(*) FROM \"" + schema + "\".tasks");
      Context.check(left == open, "B18: " + left + " tasks left, not the " + open + " open ones");
      long claimed =
          Context.count(
              pool, "SELECT count(*) FROM \"" + schema + "\".tasks WHERE status = 'completed'");
      Context.check(claimed == seen.size(), "B18: completed " + claimed + " != " + seen.size());
      Context.check(
          replayEqual(pool, schema), "B18: replay differs from the live projection after");

      ctx.results()
          .add(
              new Results.Row(
                  "B18",
                  "purge of " + old + " completed tasks",
                  "tasks/s",
                  Results.Kind.RATE,
                  purgeRate[0],
                  Double.NaN,
                  "",
                  "",
                  null));
      ctx.results()
          .add(
              new Results.Row(
                  "B18",
                  "claim+complete, " + WORKERS + " workers, during the purge",
                  "tasks/s",
                  Results.Kind.RATE,
                  during,
                  without,
                  "the same workers, no purge",
                  "",
                  null));
      ctx.results()
          .note(
              "B18: "
                  + old
                  + " old completed and "
                  + open
                  + " open tasks; the purge removed "
                  + removed[0]
                  + " tasks and "
                  + removed[1]
                  + " events, none open; "
                  + seen.size()
                  + " claimed, none twice, "
                  + (open - seen.size())
                  + " open left when the purge ended (0: the workers ran dry first; each rate is"
                  + " taken up to the first empty claim); replay equal before and after");
    } finally {
      ctx.server().dropDatabase(db);
    }
  }

  /**
   * Claims and completes with {@link #WORKERS} threads while {@code beside} runs on this one.
   *
   * @return tasks per second over {@code beside}'s run
   */
  private static double claimRate(Ledger ledger, Set<String> seen, Body beside) throws Exception {
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong claims = new AtomicLong();
    // when a worker first found nothing to claim: the rate is taken up to then (a drained queue
    // measures the sleep, not the claim)
    AtomicLong dryAt = new AtomicLong();
    ExecutorService pool = Executors.newFixedThreadPool(WORKERS);
    List<Future<?>> running = new ArrayList<>();
    for (int w = 0; w < WORKERS; w++) {
      Claimer me = Claimer.of("b18-" + w).lease(Duration.ofHours(1));
      running.add(
          pool.submit(
              () -> {
                while (!stop.get()) {
                  List<Lease> got = ledger.claimBatch(DOMAIN, me, 10);
                  for (Lease l : got) {
                    if (!seen.add(l.taskId())) {
                      throw new BenchFailure("B18: task " + l.taskId() + " was claimed twice");
                    }
                  }
                  if (got.isEmpty()) {
                    dryAt.compareAndSet(0, System.nanoTime());
                    Thread.sleep(2);
                  } else {
                    Context.check(
                        ledger.completeAll(DOMAIN, done(got)).isEmpty(),
                        "B18: a completion was refused");
                    claims.addAndGet(got.size());
                  }
                }
                return null;
              }));
    }
    long t0 = System.nanoTime();
    long c0 = claims.get();
    try {
      beside.run();
    } finally {
      stop.set(true);
    }
    long dry = dryAt.get();
    long end = dry == 0 ? System.nanoTime() : dry;
    long c1 = claims.get();
    if (dry != 0 && end - t0 < 1_000_000_000L) {
      throw new BenchFailure(
          "B18: the workers ran dry "
              + (end - t0) / 1_000_000
              + " ms into a measured run: seed more open tasks");
    }
    double rate = (c1 - c0) / ((end - t0) / 1e9);
    for (Future<?> f : running) {
      f.get(5, TimeUnit.MINUTES);
    }
    pool.shutdown();
    return rate;
  }

  /**
   * Whether a rebuild leaves the domain's rows and derived state as they are. The rebuild runs on a
   * ledger of its own whose statement bound is 30 minutes: it streams the domain's whole log in one
   * {@code COPY} (over 4,000,000 events at 1,000,000 tasks), which on a loaded machine outlasted
   * the default 30 s bound.
   */
  private static boolean replayEqual(DataSource pool, String schema) throws SQLException {
    String before = digest(pool, schema);
    dev.ledger.Timeouts longer =
        dev.ledger.Timeouts.defaults()
            .withStatement(Duration.ofMinutes(30))
            .withNetwork(Duration.ofMinutes(31));
    Ledger.open(pool, dev.ledger.LedgerConfig.builder().timeouts(longer).build()).rebuild();
    return before.equals(digest(pool, schema));
  }

  private static String digest(DataSource pool, String schema) throws SQLException {
    String s = "\"" + schema + "\"";
    String sql =
        "SELECT (SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t.id), '')) FROM "
            + s
            + ".tasks t) || (SELECT md5(coalesce(string_agg(c::text, '|' ORDER BY"
            + " c.label_rank, c.requirements_md5), '')) FROM "
            + s
            + ".claim_classes c) || (SELECT md5(coalesce(string_agg(r::text, '|' ORDER BY r.id),"
            + " '')) FROM public.ledger_tasks r WHERE r.domain = '"
            + DOMAIN
            + "') || (SELECT md5(coalesce(string_agg(e::text, '|' ORDER BY e.depends_on,"
            + " e.task_id), '')) FROM public.ledger_dependencies e)";
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static List<Completion> done(List<Lease> leases) {
    return leases.stream().map(l -> new Completion(l, "ok")).toList();
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** What runs beside the workers. */
  @FunctionalInterface
  private interface Body {
    void run() throws Exception;
  }
}

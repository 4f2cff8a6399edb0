package dev.ledger.bench;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.SchedulerClient;
import com.github.kagkarlsson.scheduler.task.TaskInstance;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.worker.Outcome;
import dev.ledger.worker.WorkerMetrics;
import dev.ledger.worker.WorkerPool;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The worker benchmarks against db-scheduler ({@code com.github.kagkarlsson:db-scheduler}, the Java
 * peer), same PostgreSQL, side by side:
 *
 * <ul>
 *   <li>B9 throughput: 8 worker threads drain N no-op tasks (20,000; 4,000 with --quick), tasks
 *       executed per second from start to the last completion; ours a {@link WorkerPool} (batch
 *       claims, batched completions), db-scheduler with its best strategy, lock-and-fetch;
 *   <li>B10 pickup latency: one task admitted every 20 ms by another session (its own connection
 *       pool) to idle workers; p50 and p99 from the admitting commit to handler start (the
 *       admitting thread waits blocked, not spinning, so it leaves both cores to the workers and
 *       the server); ours woken by LISTEN/NOTIFY (poll every 10 s), db-scheduler polling every 100
 *       ms, and db-scheduler's same-JVM immediate execution.
 * </ul>
 */
final class WorkerBench {

  private static final String TASK = "b9";

  /** B9's prefetch: the tasks a pool of 8 threads holds beyond its running ones. */
  private static final int PREFETCH = 24;

  private WorkerBench() {}

  /**
   * B9.
   *
   * @param ctx the run
   * @return the plot's points: each round, then the medians
   * @throws Exception on failure
   */
  static List<Charts.Point> throughput(Context ctx) throws Exception {
    int n = ctx.size(4_000, 20_000);
    int rounds = ctx.size(1, 3);
    String db = ctx.server().createDatabase("b9");
    try (HikariDataSource pool = ctx.server().pool(db, 16)) {
      Ledger ledger = Context.ledger(pool);
      createSchedulerTable(pool);
      List<Double> ours = new ArrayList<>();
      List<Double> theirs = new ArrayList<>();
      List<Double> floor = new ArrayList<>();
      for (int r = 0; r < rounds; r++) {
        if (r % 2 == 0) {
          ours.add(oursThroughput(pool, ledger, "b9-ours-" + r, n));
          theirs.add(schedulerThroughput(pool, n));
          floor.add(floorThroughput(pool, ledger, "b9-floor-" + r, n));
        } else {
          floor.add(floorThroughput(pool, ledger, "b9-floor-" + r, n));
          theirs.add(schedulerThroughput(pool, n));
          ours.add(oursThroughput(pool, ledger, "b9-ours-" + r, n));
        }
      }
      double o = Stats.median(ours);
      double t = Stats.median(theirs);
      double f = Stats.median(floor);
      ctx.results()
          .add(
              new Results.Row(
                  "B9",
                  "drain " + n + " no-op tasks, 8 threads",
                  "tasks/s",
                  Results.Kind.RATE,
                  o,
                  t,
                  "db-scheduler lock-and-fetch",
                  "≥ 1.5x",
                  o / t >= 1.5));
      ctx.results()
          .add(
              new Results.Row(
                  "B9",
                  "floor: the reference's writes alone, raw SQL, no triggers",
                  "tasks/s",
                  Results.Kind.RATE,
                  f,
                  t,
                  "db-scheduler lock-and-fetch",
                  "",
                  null));
      ctx.results()
          .note(
              "B9: "
                  + rounds
                  + " rounds of "
                  + n
                  + " tasks each side, medians; ours WorkerPool(concurrency 8, prefetch "
                  + PREFETCH
                  + ", batch "
                  + (8 + PREFETCH)
                  + ") with claimTasks + completeAll, every task completed once (checked);"
                  + " db-scheduler"
                  + " threads(8).pollUsingLockAndFetch(0.5, 3.0), polling 100 ms; the floor"
                  + " (WriteFloor.drain) writes per task only the reference's rows (2 row versions,"
                  + " 2 events, the route), 2 connections claiming 16 at a time, no trigger: what"
                  + " any ledger keeping the reference's log must write, at no cost beyond it");
      List<Charts.Point> points = new ArrayList<>();
      for (int r = 0; r < rounds; r++) {
        points.add(new Charts.Point("round " + (r + 1), ours.get(r), theirs.get(r)));
      }
      points.add(new Charts.Point("median", o, t));
      points.add(new Charts.Point("floor, median", f, t));
      return points;
    } finally {
      ctx.server().dropDatabase(db);
    }
  }

  private static double oursThroughput(HikariDataSource pool, Ledger ledger, String domain, int n)
      throws Exception {
    String schema = ledger.provision(domain);
    CycleBench.seed(pool, domain, schema, n);
    Context.execute(pool, "ANALYZE");
    AtomicLong completed = new AtomicLong();
    CountDownLatch all = new CountDownLatch(1);
    Set seen = new Set();
    WorkerMetrics count =
        new WorkerMetrics() {
          @Override
          public void completed(String d) {
            if (completed.incrementAndGet() == n) {
              all.countDown();
            }
          }
        };
    long t0 = System.nanoTime();
    WorkerPool workers =
        WorkerPool.builder(ledger)
            .dataSource(pool)
            .holder("b9")
            .concurrency(8)
            // at most 8 + 24 tasks held, as db-scheduler's lock-and-fetch below holds up to
            // upperLimitFractionOfThreads (3.0) x 8 threads fetched executions
            .prefetch(PREFETCH)
            .lease(Duration.ofMinutes(5))
            .pollInterval(Duration.ofMillis(100))
            .metrics(count)
            .domain(
                domain,
                (task, c) -> {
                  seen.once(task.id());
                  return Outcome.done();
                })
            .start();
    boolean done = all.await(10, TimeUnit.MINUTES);
    double rate = n / ((System.nanoTime() - t0) / 1e9);
    workers.close();
    seen.check("B9 ours");
    Context.check(done, "B9 ours: " + completed.get() + " of " + n + " completed in 10 minutes");
    long c = ledger.countByStatus(domain).get(Status.COMPLETED);
    Context.check(c == n, "B9 ours: " + c + " completed rows, expected " + n);
    return rate;
  }

  private static double floorThroughput(HikariDataSource pool, Ledger ledger, String domain, int n)
      throws Exception {
    String schema = ledger.provision(domain);
    CycleBench.seed(pool, domain, schema, n);
    Context.execute(pool, "ANALYZE");
    return WriteFloor.drain(pool, schema, n);
  }

  private static double schedulerThroughput(HikariDataSource pool, int n) throws Exception {
    Context.execute(pool, "TRUNCATE scheduled_tasks");
    CountDownLatch all = new CountDownLatch(n);
    Set seen = new Set();
    OneTimeTask<Void> task =
        Tasks.oneTime(TASK)
            .execute(
                (inst, c) -> {
                  seen.once(inst.getId());
                  all.countDown();
                });
    SchedulerClient client = SchedulerClient.Builder.create(pool, task).build();
    List<TaskInstance<?>> instances = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      instances.add(task.instance("t" + i));
    }
    client.scheduleBatch(instances, Instant.now().minusSeconds(1));
    Context.execute(pool, "ANALYZE scheduled_tasks");
    Scheduler s =
        Scheduler.create(pool, task)
            .threads(8)
            .pollUsingLockAndFetch(0.5, 3.0)
            .pollingInterval(Duration.ofMillis(100))
            .build();
    long t0 = System.nanoTime();
    s.start();
    boolean done = all.await(10, TimeUnit.MINUTES);
    double rate = n / ((System.nanoTime() - t0) / 1e9);
    s.stop();
    seen.check("B9 db-scheduler");
    Context.check(done, "B9 db-scheduler: " + (n - all.getCount()) + " of " + n + " executed");
    return rate;
  }

  /**
   * B12: enqueue throughput, ours through {@code fileAll} against db-scheduler's {@code
   * scheduleBatch}.
   *
   * @return one point per round, then the medians, for the chart
   */
  static List<Charts.Point> enqueue(Context ctx) throws Exception {
    int n = ctx.size(4_000, 20_000);
    int rounds = ctx.size(1, 3);
    int batch = 1000;
    String db = ctx.server().createDatabase("b12");
    try (HikariDataSource pool = ctx.server().pool(db, 4)) {
      Ledger ledger = Context.ledger(pool);
      createSchedulerTable(pool);
      OneTimeTask<Void> task = Tasks.oneTime("b12").execute((inst, c) -> {});
      SchedulerClient client = SchedulerClient.Builder.create(pool, task).build();
      List<Double> ours = new ArrayList<>();
      List<Double> theirs = new ArrayList<>();
      List<Double> floor = new ArrayList<>();
      for (int r = 0; r < rounds; r++) {
        String domain = "b12-" + r;
        ledger.provision(domain);
        Context.execute(pool, "TRUNCATE scheduled_tasks");
        int round = r;
        Context.Measurement oursRun =
            () -> {
              long t0 = System.nanoTime();
              for (int i = 0; i < n; i += batch) {
                List<TaskSpec> specs = new ArrayList<>(batch);
                for (int j = i; j < Math.min(n, i + batch); j++) {
                  specs.add(
                      TaskSpec.builder(domain, "enqueue " + j)
                          .origin("bench:b12", round + "-" + j)
                          .createdBy("bench")
                          .build());
                }
                ledger.fileAll(specs);
              }
              return n / ((System.nanoTime() - t0) / 1e9);
            };
        Context.Measurement theirsRun =
            () -> {
              List<TaskInstance<?>> instances = new ArrayList<>(n);
              for (int j = 0; j < n; j++) {
                instances.add(task.instance(round + "-" + j));
              }
              long t0 = System.nanoTime();
              client.scheduleBatch(instances, Instant.now());
              return n / ((System.nanoTime() - t0) / 1e9);
            };
        double[] m = Context.alternate(1, oursRun, theirsRun);
        ours.add(m[0]);
        theirs.add(m[1]);
        String floorDomain = "b12-floor-" + r;
        floor.add(
            WriteFloor.enqueue(pool, floorDomain, ledger.provision(floorDomain), n, batch, r));
        long filed = ledger.countByStatus(domain).get(Status.ADMITTED);
        Context.check(filed == n, "B12 ours: " + filed + " admitted, expected " + n);
        long scheduled = Context.count(pool, "SELECT count(*) FROM scheduled_tasks");
        Context.check(scheduled == n, "B12 db-scheduler: " + scheduled + " rows, expected " + n);
      }
      double o = Stats.median(ours);
      double t = Stats.median(theirs);
      List<Charts.Point> points = new ArrayList<>();
      for (int r = 0; r < rounds; r++) {
        points.add(new Charts.Point("round " + (r + 1), ours.get(r), theirs.get(r)));
      }
      points.add(new Charts.Point("median", o, t));
      double f = Stats.median(floor);
      points.add(new Charts.Point("floor, median", f, t));
      ctx.results()
          .add(
              new Results.Row(
                  "B12",
                  "enqueue " + n + " tasks (file+admit)",
                  "tasks/s",
                  Results.Kind.RATE,
                  o,
                  t,
                  "db-scheduler scheduleBatch",
                  "≥ 1x",
                  o / t >= 1));
      ctx.results()
          .add(
              new Results.Row(
                  "B12",
                  "floor: the reference's rows alone, raw SQL, no triggers",
                  "tasks/s",
                  Results.Kind.RATE,
                  f,
                  t,
                  "db-scheduler scheduleBatch",
                  "",
                  null));
      ctx.results()
          .note(
              "B12: "
                  + rounds
                  + " rounds, medians; ours fileAll in calls of "
                  + batch
                  + " (one transaction each, every task with an origin and upstream event, so"
                  + " idempotent), db-scheduler one scheduleBatch of all "
                  + n
                  + " instances; the floor (WriteFloor.enqueue) writes per task only the"
                  + " reference's rows (the admitted row, its filed and admitted events, its route)"
                  + " from array binds, "
                  + batch
                  + " tasks per statement, no trigger, no origin check");
      return points;
    } finally {
      ctx.server().dropDatabase(db);
    }
  }

  /**
   * B10.
   *
   * @param ctx the run
   * @return the plot's points: p50 and p99 against each db-scheduler mode
   * @throws Exception on failure
   */
  static List<Charts.Point> pickup(Context ctx) throws Exception {
    int n = ctx.size(100, 500);
    String db = ctx.server().createDatabase("b10");
    try (HikariDataSource pool = ctx.server().pool(db, 12);
        HikariDataSource other = ctx.server().pool(db, 2)) {
      Ledger ledger = Context.ledger(pool);
      Ledger admitter = Context.ledger(other);
      createSchedulerTable(pool);
      String domain = "b10";
      ledger.provision(domain);
      // ours: idle pool woken by NOTIFY, polling only every 10 s
      ConcurrentHashMap<String, Long> started = new ConcurrentHashMap<>();
      List<Double> ours = new ArrayList<>();
      try (WorkerPool workers =
          WorkerPool.builder(ledger)
              .dataSource(pool)
              .holder("b10")
              .concurrency(8)
              .pollInterval(Duration.ofSeconds(10))
              .domain(
                  domain,
                  (task, c) -> {
                    started.put(task.id(), System.nanoTime());
                    wakeWaiter(started);
                    return Outcome.done();
                  })
              .start()) {
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!workers.listening() && System.nanoTime() < end) {
          Thread.sleep(10);
        }
        Context.check(workers.listening(), "B10 ours: the pool is not listening");
        Thread.sleep(300); // settled, as db-scheduler's side below
        for (int i = 0; i < n; i++) {
          String id = admitter.file(TaskSpec.builder(domain, "pickup " + i).build());
          admitter.admit(id);
          long committed = System.nanoTime();
          awaitStart(started, id, committed);
          Context.check(started.containsKey(id), "B10 ours: task " + id + " never started");
          ours.add(Math.max(0, started.get(id) - committed) / 1e6);
          Thread.sleep(20);
        }
      }
      List<Double> polling = schedulerPickup(pool, other, n, false);
      List<Double> immediate = schedulerPickup(pool, other, n, true);
      double o50 = Stats.percentile(ours.stream().mapToDouble(Double::doubleValue).toArray(), 50);
      double o99 = Stats.percentile(ours.stream().mapToDouble(Double::doubleValue).toArray(), 99);
      double[] pollingMs = polling.stream().mapToDouble(Double::doubleValue).toArray();
      double[] immediateMs = immediate.stream().mapToDouble(Double::doubleValue).toArray();
      List<Charts.Point> points =
          List.of(
              new Charts.Point("p50 vs polling 100 ms", o50, Stats.percentile(pollingMs, 50)),
              new Charts.Point("p99 vs polling 100 ms", o99, Stats.percentile(pollingMs, 99)),
              new Charts.Point("p50 vs immediate", o50, Stats.percentile(immediateMs, 50)),
              new Charts.Point("p99 vs immediate", o99, Stats.percentile(immediateMs, 99)));
      ctx.results()
          .add(
              new Results.Row(
                  "B10",
                  "pickup p50, one task every 20 ms",
                  "ms",
                  Results.Kind.TIME,
                  o50,
                  Stats.percentile(polling.stream().mapToDouble(Double::doubleValue).toArray(), 50),
                  "db-scheduler polling 100 ms",
                  "",
                  null));
      ctx.results()
          .add(
              new Results.Row(
                  "B10",
                  "pickup p99, one task every 20 ms",
                  "ms",
                  Results.Kind.TIME,
                  o99,
                  Stats.percentile(polling.stream().mapToDouble(Double::doubleValue).toArray(), 99),
                  "db-scheduler polling 100 ms",
                  "p99 ≤ 10 ms",
                  o99 <= 10));
      ctx.results()
          .add(
              new Results.Row(
                  "B10",
                  "pickup p99 vs same-JVM immediate execution",
                  "ms",
                  Results.Kind.TIME,
                  o99,
                  Stats.percentile(
                      immediate.stream().mapToDouble(Double::doubleValue).toArray(), 99),
                  "db-scheduler immediate (p50 "
                      + String.format(
                          "%.2f",
                          Stats.percentile(
                              immediate.stream().mapToDouble(Double::doubleValue).toArray(), 50))
                      + " ms)",
                  "",
                  null));
      ctx.results()
          .note(
              "B10: "
                  + n
                  + " tasks per side, each filed and admitted (ours) or scheduled (db-scheduler) by"
                  + " another connection pool of this JVM, then 20 ms idle; latency from the"
                  + " admitting call's return (its commit) to handler start. Immediate execution"
                  + " schedules through the running scheduler itself");
      return points;
    } finally {
      ctx.server().dropDatabase(db);
    }
  }

  private static List<Double> schedulerPickup(
      HikariDataSource pool, HikariDataSource other, int n, boolean immediate) throws Exception {
    Context.execute(pool, "TRUNCATE scheduled_tasks");
    ConcurrentHashMap<String, Long> started = new ConcurrentHashMap<>();
    OneTimeTask<Void> task =
        Tasks.oneTime("b10")
            .execute(
                (inst, c) -> {
                  started.put(inst.getId(), System.nanoTime());
                  wakeWaiter(started);
                });
    var b =
        Scheduler.create(pool, task)
            .threads(8)
            .pollUsingLockAndFetch(0.5, 3.0)
            .pollingInterval(Duration.ofMillis(100));
    if (immediate) {
      b.enableImmediateExecution();
    }
    Scheduler s = b.build();
    SchedulerClient client = immediate ? s : SchedulerClient.Builder.create(other, task).build();
    s.start();
    List<Double> out = new ArrayList<>();
    try {
      Thread.sleep(300);
      for (int i = 0; i < n; i++) {
        String id = "p" + i;
        client.schedule(task.instance(id), Instant.now());
        long committed = System.nanoTime();
        awaitStart(started, id, committed);
        Context.check(started.containsKey(id), "B10 db-scheduler: " + id + " never started");
        out.add(Math.max(0, started.get(id) - committed) / 1e6);
        Thread.sleep(20);
      }
    } finally {
      s.stop();
    }
    return out;
  }

  /**
   * Waits (blocked, not spinning: a spinning waiter takes one of this machine's two cores from the
   * threads and server processes being measured) until the handler of {@code id} has recorded its
   * start, at most 15 s.
   */
  private static void awaitStart(ConcurrentHashMap<String, Long> started, String id, long from)
      throws InterruptedException {
    long deadline = from + Duration.ofSeconds(15).toNanos();
    synchronized (started) {
      long left;
      while (!started.containsKey(id) && (left = deadline - System.nanoTime()) > 0) {
        TimeUnit.NANOSECONDS.timedWait(started, left);
      }
    }
  }

  /** Wakes {@link #awaitStart}; called by a handler after it recorded its start time. */
  private static void wakeWaiter(ConcurrentHashMap<String, Long> started) {
    synchronized (started) {
      started.notifyAll();
    }
  }

  static void createSchedulerTable(HikariDataSource pool) throws Exception {
    try (InputStream in =
        WorkerBench.class.getResourceAsStream("/db/bench/dbscheduler/scheduled_tasks.sql")) {
      String ddl = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      Context.execute(pool, ddl);
    }
  }

  /** Counts tasks handled twice; checked after the run. */
  private static final class Set {
    private final java.util.Set<String> seen = ConcurrentHashMap.newKeySet();
    private final AtomicLong twice = new AtomicLong();

    void once(String id) {
      if (!seen.add(id)) {
        twice.incrementAndGet();
      }
    }

    void check(String who) {
      Context.check(twice.get() == 0, who + ": " + twice.get() + " tasks were run twice");
    }
  }
}

package dev.ledger.bench;

import com.github.kagkarlsson.scheduler.SchedulerClient;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import org.jobrunr.configuration.JobRunr;
import org.jobrunr.scheduling.JobScheduler;
import org.jobrunr.storage.sql.postgres.PostgresStorageProvider;
import org.jobrunr.utils.mapper.jackson.JacksonJsonMapper;

/**
 * B13, one task filed and admitted per transaction (issue 26): the outbox path, one client filing
 * in a loop, each task in a transaction of its own. Four rows: the caller's transaction ({@code
 * ledger.in(connection).fileAndAdmit}, the bench begins and commits it) and the ledger's own
 * ({@code ledger.fileAndAdmit}), each with {@code synchronous_commit} on and off (set on every
 * connection of the pool). Ours files with an origin and upstream event (an outbox filing is
 * idempotent, as db-scheduler's instance id is). The peer: db-scheduler's {@code schedule()} in a
 * loop, joining the same kind of transaction (the bench's, through {@link
 * ProducerBench.ThreadBound}) or in its own (autocommit); and, beside the ledger's own transaction,
 * JobRunr's {@code enqueue()} (it keeps each job's state history, the closest peer to an event
 * log), in the same rounds. Tasks per second; target ours ≥ 0.8x.
 *
 * <p>{@code --quick} checks correctness only: every task filed once, admitted, with its {@code
 * created} and {@code admitted} events; every db-scheduler instance scheduled once; every JobRunr
 * job stored once.
 */
final class OutboxBench {

  private static final String ORIGIN = "bench:b13";

  private OutboxBench() {}

  static void run(Context ctx) throws Exception {
    // -Dbench.b13.filings=N: fewer filings per side and round than the full run's, on a loaded
    // machine (the run's report names the command; RESULTS.md the size)
    int n = Integer.getInteger("bench.b13.filings", ctx.size(100, 2_000));
    int rounds = ctx.size(1, 3);
    for (boolean sync : new boolean[] {true, false}) {
      String db = ctx.server().createDatabase(sync ? "b13s" : "b13a");
      try (HikariDataSource pool = pool(ctx, db, sync)) {
        Ledger ledger = Context.ledger(pool);
        WorkerBench.createSchedulerTable(pool);
        String domain = "b13";
        String schema = ledger.provision(domain);
        ledger.fileAndAdmit(TaskSpec.builder(domain, "seed").createdBy("bench").build());
        ProducerBench.ThreadBound bound = new ProducerBench.ThreadBound(pool);
        OneTimeTask<Void> task = Tasks.oneTime("b13").execute((inst, c) -> {});
        SchedulerClient joined = SchedulerClient.Builder.create(bound, task).build();
        SchedulerClient own = SchedulerClient.Builder.create(pool, task).build();
        AtomicLong ours = new AtomicLong();
        AtomicLong theirs = new AtomicLong();
        // warm-up, not measured: the JIT, the pool, both tables' caches
        int warm = ctx.size(50, 500);
        loop(warm, () -> oursCaller(pool, ledger, domain, ours));
        loop(warm, () -> oursOwn(ledger, domain, ours));
        loop(warm, () -> theirsJoined(pool, bound, joined, task, theirs));
        loop(warm, () -> theirsOwn(own, task, theirs));
        double[] caller =
            Context.alternate(
                rounds,
                () -> loop(n, () -> oursCaller(pool, ledger, domain, ours)),
                () -> loop(n, () -> theirsJoined(pool, bound, joined, task, theirs)));
        JobScheduler jobrunr = jobRunr(pool);
        AtomicLong jobs = new AtomicLong();
        loop(warm, () -> jobrunrOwn(jobrunr, jobs));
        // three sides, each round in another order, so none always runs first on a warmer cache
        List<Double> oursOwned = new ArrayList<>();
        List<Double> theirsOwned = new ArrayList<>();
        List<Double> jobrunrOwned = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
          for (int k = 0; k < 3; k++) {
            switch ((r + k) % 3) {
              case 0 -> oursOwned.add(loop(n, () -> oursOwn(ledger, domain, ours)));
              case 1 -> theirsOwned.add(loop(n, () -> theirsOwn(own, task, theirs)));
              default -> jobrunrOwned.add(loop(n, () -> jobrunrOwn(jobrunr, jobs)));
            }
          }
        }
        double[] owned = {Stats.median(oursOwned), Stats.median(theirsOwned)};
        check(pool, schema, ours.get(), theirs.get());
        long enqueued = Context.count(pool, "SELECT count(*) FROM jobrunr_jobs");
        Context.check(enqueued == jobs.get(), "B13 JobRunr: " + jobs + " enqueued, " + enqueued);
        String s = "synchronous_commit " + (sync ? "on" : "off");
        row(ctx, "caller's transaction, " + s, caller, "in the same transaction");
        row(ctx, "ledger's own transaction, " + s, owned, "in its own transaction");
        ctx.results()
            .add(
                new Results.Row(
                    "B13",
                    "1 task per transaction, ledger's own transaction, " + s + ", vs JobRunr",
                    "tasks/s",
                    Results.Kind.RATE,
                    owned[0],
                    Stats.median(jobrunrOwned),
                    "JobRunr " + JOBRUNR_VERSION + " enqueue() in its own transaction",
                    "≥ 0.8x",
                    owned[0] / Stats.median(jobrunrOwned) >= 0.8));
        ctx.results()
            .note(
                String.format(
                    Locale.ROOT,
                    "B13 (%s): %d alternating rounds of %d filings per side, one client, one task"
                        + " per transaction, medians; ours fileAndAdmit with an origin and upstream"
                        + " event; %d and %d tasks filed, each once, admitted, with both events",
                    s,
                    rounds,
                    n,
                    ours.get(),
                    theirs.get()));
      } finally {
        ctx.server().dropDatabase(db);
      }
    }
  }

  private static final String JOBRUNR_VERSION = "8.0.2";

  /**
   * JobRunr on the same database, with no background server (nothing is processed): its tables made
   * by its own migrations on first use, jobs enqueued through its {@link JobScheduler}.
   */
  private static JobScheduler jobRunr(HikariDataSource pool) {
    return JobRunr.configure()
        .useJsonMapper(new JacksonJsonMapper())
        .useStorageProvider(new PostgresStorageProvider(pool))
        .initialize()
        .getJobScheduler();
  }

  /** JobRunr's {@code enqueue()} of a job that does nothing, in its own transaction. */
  private static void jobrunrOwn(JobScheduler scheduler, AtomicLong seq) {
    long n = seq.incrementAndGet();
    scheduler.enqueue(() -> OutboxNoopJob.run(n));
  }

  private static HikariDataSource pool(Context ctx, String db, boolean sync) {
    return ctx.server().pool(db, 4, "SET synchronous_commit = " + (sync ? "on" : "off"));
  }

  private static void row(Context ctx, String workload, double[] m, String peer) {
    ctx.results()
        .add(
            new Results.Row(
                "B13",
                "1 task per transaction, " + workload,
                "tasks/s",
                Results.Kind.RATE,
                m[0],
                m[1],
                "db-scheduler schedule() " + peer,
                "≥ 0.8x",
                m[0] / m[1] >= 0.8));
  }

  @FunctionalInterface
  private interface Filing {
    void run() throws Exception;
  }

  /** {@code count} filings one after the other; tasks per second. */
  private static double loop(int count, Filing filing) throws Exception {
    long t0 = System.nanoTime();
    for (int i = 0; i < count; i++) {
      filing.run();
    }
    return count / ((System.nanoTime() - t0) / 1e9);
  }

  private static TaskSpec spec(String domain, long n) {
    return TaskSpec.builder(domain, "order " + n)
        .origin(ORIGIN, "order-" + n)
        .createdBy("bench")
        .build();
  }

  /** Ours in the bench's transaction: begin, file and admit, commit. */
  private static void oursCaller(
      HikariDataSource pool, Ledger ledger, String domain, AtomicLong seq) throws Exception {
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      try {
        ledger.in(c).fileAndAdmit(spec(domain, seq.incrementAndGet()));
        c.commit();
      } catch (Exception | Error e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
  }

  /** Ours in the ledger's own transaction. */
  private static void oursOwn(Ledger ledger, String domain, AtomicLong seq) {
    ledger.fileAndAdmit(spec(domain, seq.incrementAndGet()));
  }

  /** db-scheduler in the bench's transaction: begin, schedule, commit. */
  private static void theirsJoined(
      HikariDataSource pool,
      ProducerBench.ThreadBound bound,
      SchedulerClient client,
      OneTimeTask<Void> task,
      AtomicLong seq)
      throws Exception {
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      bound.bind(c);
      try {
        client.schedule(task.instance("order-" + seq.incrementAndGet()), Instant.now());
        c.commit();
      } catch (Exception | Error e) {
        c.rollback();
        throw e;
      } finally {
        bound.unbind();
        c.setAutoCommit(true);
      }
    }
  }

  /** db-scheduler in its own transaction (autocommit). */
  private static void theirsOwn(SchedulerClient client, OneTimeTask<Void> task, AtomicLong seq) {
    client.schedule(task.instance("order-" + seq.incrementAndGet()), Instant.now());
  }

  /** Every task filed once, admitted, with both events; every instance scheduled once. */
  private static void check(HikariDataSource pool, String schema, long ours, long theirs)
      throws SQLException {
    String s = "\"" + schema + "\"";
    long admitted =
        Context.count(
            pool,
            "SELECT count(DISTINCT upstream_event) FROM "
                + s
                + ".tasks WHERE origin = '"
                + ORIGIN
                + "' AND status = 'admitted'");
    long rows =
        Context.count(pool, "SELECT count(*) FROM " + s + ".tasks WHERE origin = '" + ORIGIN + "'");
    String events =
        "SELECT count(*) FROM "
            + s
            + ".events e JOIN "
            + s
            + ".tasks t ON t.id = e.task_id WHERE t.origin = '"
            + ORIGIN
            + "' AND e.kind = ";
    long created = Context.count(pool, events + "'created'");
    long admittedEvents = Context.count(pool, events + "'admitted'");
    long routes =
        Context.count(
            pool,
            "SELECT count(*) FROM ledger_tasks r JOIN "
                + s
                + ".tasks t ON t.id = r.id WHERE t.origin = '"
                + ORIGIN
                + "'");
    Context.check(
        admitted == ours
            && rows == ours
            && created == ours
            && admittedEvents == ours
            && routes == ours,
        "B13 ours: "
            + ours
            + " filings, but "
            + rows
            + " rows, "
            + admitted
            + " admitted, "
            + created
            + " created and "
            + admittedEvents
            + " admitted events, "
            + routes
            + " routes");
    long scheduled =
        Context.count(
            pool,
            "SELECT count(DISTINCT task_instance) FROM scheduled_tasks WHERE task_name = 'b13'");
    Context.check(
        scheduled == theirs, "B13 db-scheduler: " + theirs + " schedules, " + scheduled + " rows");
  }
}

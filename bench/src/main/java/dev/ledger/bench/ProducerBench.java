package dev.ledger.bench;

import com.github.kagkarlsson.scheduler.SchedulerClient;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * B14, producers that do not wait for each other (issue 26): 8 producer threads, each filing one
 * task per transaction of its own that stays open {@value #HOLD_MS} ms after the filing (the outbox
 * path: a service's transaction that does more work after it enqueued), into one domain. Ours
 * {@code ledger.in(connection).fileAndAdmit} with an origin and upstream event (idempotent, as an
 * outbox filing is), against db-scheduler's {@code schedule()} joining the same kind of transaction
 * (a data source that hands it the producer's connection, autocommit off, which db-scheduler then
 * neither commits nor closes). Tasks filed per second over the wall time; target ours ≥ 0.8x. The
 * ceiling of either is {@code 8 × 1000 / 50} = 160 tasks/s: a side whose producers waited for each
 * other's transactions would reach 20.
 *
 * <p>{@code --quick} checks correctness only: every task filed exactly once on both sides.
 */
final class ProducerBench {

  /** How long each producer's transaction stays open after its filing, in ms. */
  static final long HOLD_MS = 50;

  private static final int PRODUCERS = 8;

  private static final String ORIGIN = "bench:b14";

  private ProducerBench() {}

  static void run(Context ctx) throws Exception {
    int perProducer = ctx.size(5, 40);
    int rounds = ctx.size(1, 3);
    String db = ctx.server().createDatabase("b14");
    try (HikariDataSource pool = ctx.server().pool(db, PRODUCERS + 4)) {
      Ledger ledger = Context.ledger(pool);
      WorkerBench.createSchedulerTable(pool);
      String domain = "b14";
      String schema = ledger.provision(domain);
      // a committed task of the class the producers file: the first filing of a new claim class
      // makes its row, and a concurrent first filing of the same class waits for that commit
      ledger.fileAndAdmit(TaskSpec.builder(domain, "seed").createdBy("bench").build());
      ThreadBound bound = new ThreadBound(pool);
      OneTimeTask<Void> task = Tasks.oneTime("b14").execute((inst, c) -> {});
      SchedulerClient client = SchedulerClient.Builder.create(bound, task).build();
      AtomicLong oursSeq = new AtomicLong();
      AtomicLong theirsSeq = new AtomicLong();
      // warm-up, not measured: the JIT, the pool, both tables' caches
      Workers.fixed(PRODUCERS, 2, (w, i) -> oursFiling(pool, ledger, domain, oursSeq));
      Workers.fixed(PRODUCERS, 2, (w, i) -> theirsFiling(pool, bound, client, task, theirsSeq));
      double[] m =
          Context.alternate(
              rounds,
              () ->
                  Workers.fixed(
                      PRODUCERS, perProducer, (w, i) -> oursFiling(pool, ledger, domain, oursSeq)),
              () ->
                  Workers.fixed(
                      PRODUCERS,
                      perProducer,
                      (w, i) -> theirsFiling(pool, bound, client, task, theirsSeq)));
      check(pool, schema, oursSeq.get(), theirsSeq.get());
      ctx.results()
          .add(
              new Results.Row(
                  "B14",
                  PRODUCERS + " producers, 1 task per transaction open " + HOLD_MS + " ms",
                  "tasks/s",
                  Results.Kind.RATE,
                  m[0],
                  m[1],
                  "db-scheduler schedule() in the same transaction",
                  "≥ 0.8x",
                  m[0] / m[1] >= 0.8));
      ctx.results()
          .note(
              "B14: "
                  + rounds
                  + " alternating rounds of "
                  + PRODUCERS
                  + " × "
                  + perProducer
                  + " filings, medians; each filing in a transaction of its producer that stays"
                  + " open "
                  + HOLD_MS
                  + " ms after it (ceiling "
                  + (PRODUCERS * 1000 / HOLD_MS)
                  + " tasks/s; producers serialized on a lock would reach "
                  + (1000 / HOLD_MS)
                  + "); ours fileAndAdmit with an origin and upstream event in the caller's"
                  + " transaction, db-scheduler schedule() on the same connection. "
                  + oursSeq.get()
                  + " and "
                  + theirsSeq.get()
                  + " tasks filed, each exactly once");
    } finally {
      ctx.server().dropDatabase(db);
    }
  }

  /** One producer transaction of ours: file and admit one task, stay open, commit. */
  private static long oursFiling(
      HikariDataSource pool, Ledger ledger, String domain, AtomicLong seq) throws Exception {
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      try {
        long n = seq.incrementAndGet();
        ledger
            .in(c)
            .fileAndAdmit(
                TaskSpec.builder(domain, "order " + n)
                    .origin(ORIGIN, "order-" + n)
                    .createdBy("bench")
                    .build());
        Thread.sleep(HOLD_MS);
        c.commit();
      } catch (Exception | Error e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
    return 1;
  }

  /** One producer transaction of db-scheduler's: schedule one instance, stay open, commit. */
  private static long theirsFiling(
      HikariDataSource pool,
      ThreadBound bound,
      SchedulerClient client,
      OneTimeTask<Void> task,
      AtomicLong seq)
      throws Exception {
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      bound.bind(c);
      try {
        client.schedule(task.instance("order-" + seq.incrementAndGet()), Instant.now());
        Thread.sleep(HOLD_MS);
        c.commit();
      } catch (Exception | Error e) {
        c.rollback();
        throw e;
      } finally {
        bound.unbind();
        c.setAutoCommit(true);
      }
    }
    return 1;
  }

  /** Every task filed exactly once, on both sides. */
  private static void check(HikariDataSource pool, String schema, long ours, long theirs)
      throws SQLException {
    String s = "\"" + schema + "\"";
    long tasks =
        Context.count(
            pool,
            "SELECT count(DISTINCT upstream_event) FROM "
                + s
                + ".tasks WHERE origin = '"
                + ORIGIN
                + "' AND status = 'admitted'");
    long created =
        Context.count(
            pool,
            "SELECT count(*) FROM "
                + s
                + ".events e JOIN "
                + s
                + ".tasks t ON t.id = e.task_id WHERE t.origin = '"
                + ORIGIN
                + "' AND e.kind = 'created'");
    Context.check(
        tasks == ours && created == ours,
        "B14 ours: "
            + ours
            + " filings, but "
            + tasks
            + " admitted tasks and "
            + created
            + " created events");
    long scheduled =
        Context.count(
            pool,
            "SELECT count(DISTINCT task_instance) FROM scheduled_tasks WHERE task_name = 'b14'");
    Context.check(
        scheduled == theirs, "B14 db-scheduler: " + theirs + " schedules, " + scheduled + " rows");
  }

  /**
   * A data source that hands out the connection bound to the calling thread, so a library that
   * takes a {@link DataSource} (db-scheduler) runs in the producer's transaction; its {@code
   * close()} does nothing: the producer closes the real one. With no connection bound, a pooled one
   * of its own.
   */
  static final class ThreadBound implements DataSource {

    private final DataSource unbound;
    private final ThreadLocal<Connection> bound = new ThreadLocal<>();

    ThreadBound(DataSource unbound) {
      this.unbound = unbound;
    }

    void bind(Connection c) {
      bound.set(c);
    }

    void unbind() {
      bound.remove();
    }

    @Override
    public Connection getConnection() throws SQLException {
      Connection c = bound.get();
      if (c == null) {
        // outside a producer's transaction (db-scheduler reads the database's product at build)
        return unbound.getConnection();
      }
      return (Connection)
          Proxy.newProxyInstance(
              Connection.class.getClassLoader(),
              new Class<?>[] {Connection.class},
              (proxy, method, args) -> {
                if (method.getName().equals("close")) {
                  return null;
                }
                try {
                  return method.invoke(c, args);
                } catch (InvocationTargetException e) {
                  throw e.getCause();
                }
              });
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
      return getConnection();
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
      return unbound.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
      unbound.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
      unbound.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
      return unbound.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
      return unbound.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
      return unbound.unwrap(type);
    }

    @Override
    public boolean isWrapperFor(Class<?> type) throws SQLException {
      return unbound.isWrapperFor(type);
    }
  }
}

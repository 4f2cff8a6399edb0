package dev.ledger.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * One side of B20's comparison (issue 29): a database, its pool and ledger, its {@value
 * CitusBench#DOMAINS} domains, what its workers counted, and the busy cores of its measured runs.
 * The counters are safe for the bench's worker threads; the pool is closed by {@link #close}.
 */
final class CitusSide implements AutoCloseable {
  final String name;
  final HikariDataSource pool;
  final Ledger ledger;
  final List<String> domains = new ArrayList<>();
  final List<String> schemas = new ArrayList<>();
  final AtomicLong filed = new AtomicLong();
  final AtomicLongArray claims = new AtomicLongArray(CitusBench.DOMAINS);
  final Set<String> seen = ConcurrentHashMap.newKeySet();
  final List<Double> busy = new ArrayList<>();

  /**
   * Opens the side and provisions its domains, {@code b20-00} to {@code b20-15}.
   *
   * @param name the side's name in failures
   * @param url its database
   * @param poolSize its pool's size
   */
  CitusSide(String name, String url, int poolSize) {
    this.name = name;
    this.pool = CitusFixtures.pool(url, poolSize);
    this.ledger = Context.ledger(pool);
    for (int d = 0; d < CitusBench.DOMAINS; d++) {
      String domain = String.format(Locale.ROOT, "b20-%02d", d);
      domains.add(domain);
      schemas.add(ledger.provision(domain));
    }
  }

  /** Runs a measurement, keeping the machine's busy cores over it. */
  double measured(Context.Measurement m) throws Exception {
    CpuMeter cpu = CpuMeter.start();
    double v = m.run();
    synchronized (busy) {
      busy.add(cpu.busyCores());
    }
    return v;
  }

  /** The median busy cores of the measured runs, two decimals. */
  String busyCores() {
    return String.format(Locale.ROOT, "%.2f", Stats.median(busy));
  }

  /**
   * Records the claim of the lease's task; fails the run when the task was claimed before.
   *
   * @param lease a lease one of the side's workers got
   * @throws BenchFailure when the task was claimed twice
   */
  void claimedOnce(Lease lease) {
    if (!seen.add(lease.taskId())) {
      throw new BenchFailure("B20 " + name + ": task " + lease.taskId() + " claimed twice");
    }
  }

  /**
   * Files and admits tasks (batches through {@code fileAll}) until each domain has {@code depth}.
   */
  void topUp(int depth) throws Exception {
    for (int d = 0; d < CitusBench.DOMAINS; d++) {
      long admitted =
          Context.count(
              pool,
              "SELECT count(*) FROM \"" + schemas.get(d) + "\".tasks WHERE status = 'admitted'");
      List<TaskSpec> batch = new ArrayList<>();
      for (long n = admitted; n < depth; n++) {
        batch.add(
            TaskSpec.builder(domains.get(d), "b20 seed " + d + "/" + n)
                .body("seeded by B20")
                .priority(n % 10)
                .createdBy("bench")
                .build());
        if (batch.size() == 500) {
          ledger.fileAll(batch);
          filed.addAndGet(batch.size());
          batch.clear();
        }
      }
      if (!batch.isEmpty()) {
        ledger.fileAll(batch);
        filed.addAndGet(batch.size());
      }
    }
  }

  /**
   * Every domain of the side: one claimed and one completed event per task its workers claimed, no
   * task claimed twice, every task admitted or completed (none lost, none left leased), as many
   * tasks as were filed.
   */
  void check() throws Exception {
    long tasks = 0;
    for (int d = 0; d < CitusBench.DOMAINS; d++) {
      String schema = schemas.get(d);
      Context.checkClaims(pool, schema, "B20 " + name + " " + domains.get(d), claims.get(d), true);
      String t = "\"" + schema + "\".tasks";
      long open =
          Context.count(
              pool,
              "SELECT count(*) FROM "
                  + t
                  + " WHERE status NOT IN ('admitted', 'completed')"
                  + " OR (status = 'completed' AND lease_until IS NOT NULL)");
      Context.check(
          open == 0,
          "B20 "
              + name
              + " "
              + domains.get(d)
              + ": "
              + open
              + " tasks neither admitted nor completed, or left leased");
      long completed =
          Context.count(pool, "SELECT count(*) FROM " + t + " WHERE status = 'completed'");
      Context.check(
          completed == claims.get(d),
          "B20 "
              + name
              + " "
              + domains.get(d)
              + ": "
              + completed
              + " completed, "
              + claims.get(d)
              + " claims");
      tasks += Context.count(pool, "SELECT count(*) FROM " + t);
    }
    Context.check(
        tasks == filed.get(), "B20 " + name + ": " + tasks + " tasks, " + filed.get() + " filed");
  }

  /** Closes the side's pool. */
  @Override
  public void close() {
    pool.close();
  }
}

package dev.ledger.worker;

import dev.ledger.Ledger;
import dev.ledger.retention.PurgeReport;
import dev.ledger.retention.Retention;
import dev.ledger.retention.RetentionSetting;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * A worker pool's optional retention job ({@link WorkerPool.Builder#purgeEvery}): every period, on
 * a daemon thread of its own (never the pool's timers, whose heartbeats must not wait behind a
 * purge), purges each of the pool's domains that has a retention ({@link Retention#purge}). Several
 * pools purging one domain at once are safe: all but one find it busy. A failed run is logged and
 * the next one tries again. Closing stops a running purge after its current batch. Thread-safe.
 */
final class PoolPurger {

  /** The shortest period: a purge walks a domain's whole table. */
  static final Duration MIN_PERIOD = Duration.ofSeconds(1);

  /** The longest period. */
  static final Duration MAX_PERIOD = Duration.ofDays(1);

  /**
   * One domain to purge in one ledger.
   *
   * @param where how log lines name the ledger ({@code tenant acme}), or empty for a pool's own
   * @param ledger the ledger, or null when it could not be had (then {@code failure} says why)
   * @param domain the domain
   * @param failure why the ledger could not be had, or null
   */
  record Target(String where, Ledger ledger, String domain, RuntimeException failure) {}

  private final Logger log;
  private final java.util.function.Supplier<List<Target>> targets;
  private final Duration every;
  private volatile boolean closing;
  private ScheduledExecutorService timer;

  /** Stops a purge between two batches when the pool closes. */
  private static final class Stopped extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Stopped() {
      super(null, null, false, false);
    }
  }

  /**
   * @param every the period; null for no purging (the default)
   */
  PoolPurger(Logger log, Ledger ledger, List<String> domains, Duration every) {
    this(log, () -> domains.stream().map(d -> new Target("", ledger, d, null)).toList(), every);
  }

  /**
   * @param targets what to purge, asked at each run (a tenant pool's tenants change)
   * @param every the period; null for no purging (the default)
   */
  PoolPurger(Logger log, java.util.function.Supplier<List<Target>> targets, Duration every) {
    this.log = log;
    this.targets = targets;
    this.every = every;
  }

  /** Starts the timer; the first purge runs one period after the start. */
  synchronized void start(String threadPrefix) {
    if (every == null || timer != null) {
      return;
    }
    timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, threadPrefix + "-purge");
              t.setDaemon(true);
              return t;
            });
    timer.scheduleWithFixedDelay(
        this::runOnce, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** One round over the pool's domains. */
  void runOnce() {
    List<Target> round;
    try {
      round = targets.get();
    } catch (RuntimeException e) {
      log.warn(
          "ledger retention: listing what to purge failed, tried again in {}: {}",
          every,
          e.toString());
      return;
    }
    for (Target target : round) {
      if (closing) {
        return;
      }
      String domain = target.domain();
      try {
        if (target.failure() != null) {
          throw target.failure();
        }
        Retention retention = target.ledger().retention();
        boolean set = retention.get(domain).flatMap(RetentionSetting::retention).isPresent();
        if (!set) {
          continue;
        }
        PurgeReport r =
            retention.purge(
                domain,
                Retention.DEFAULT_BATCH,
                p -> {
                  if (closing) {
                    throw new Stopped();
                  }
                });
        if (r.tasksRemoved() > 0) {
          log.info(
              "ledger retention: domain {}{}: {} tasks, {} events removed in {} batches, {} ms",
              domain,
              target.where().isEmpty() ? "" : " of " + target.where(),
              r.tasksRemoved(),
              r.eventsRemoved(),
              r.batches(),
              r.elapsed().toMillis());
        }
      } catch (Stopped s) {
        return;
      } catch (RuntimeException e) {
        log.warn(
            "ledger retention: the purge of domain {}{} failed, tried again in {}: {}",
            domain,
            target.where().isEmpty() ? "" : " of " + target.where(),
            every,
            e.toString());
      }
    }
  }

  /** Stops the timer, waiting at most 30 s for a running purge to end its batch. */
  void close() {
    closing = true;
    ScheduledExecutorService t;
    synchronized (this) {
      t = timer;
    }
    if (t == null) {
      return;
    }
    t.shutdown();
    try {
      if (!t.awaitTermination(30, TimeUnit.SECONDS)) {
        t.shutdownNow();
      }
    } catch (InterruptedException e) {
      t.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}

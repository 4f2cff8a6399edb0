package dev.ledger.worker;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;

/**
 * A pool's view of its database going away and coming back: the first failed claim of an outage is
 * logged once at WARN (the error's class and its message, which names no task text and no DSN), the
 * ones after it at DEBUG, and the first claim that works again once at INFO with how long it
 * lasted; {@link #since()} and the {@link WorkerMetrics#outage} hook make it visible. The pool's
 * threads are kept throughout. Thread-safe.
 */
final class Outage {

  private final Logger log;
  private final String holder;
  private final WorkerMetrics metrics;
  private final Clock clock;
  private Instant since;
  private long failures;

  Outage(Logger log, String holder, WorkerMetrics metrics, Clock clock) {
    this.log = log;
    this.holder = holder;
    this.metrics = metrics;
    this.clock = clock;
  }

  /**
   * Records a failed claim.
   *
   * @param e the failure
   * @param retryIn when the pool tries again
   */
  void failed(RuntimeException e, Duration retryIn) {
    boolean first;
    synchronized (this) {
      first = since == null;
      if (first) {
        since = clock.instant();
      }
      failures++;
    }
    if (first) {
      metrics.outage(true);
      log.warn(
          "ledger worker {}: claiming failed ({}: {}); the pool keeps its threads and tries again"
              + " every {} until the database answers",
          holder,
          e.getClass().getSimpleName(),
          e.getMessage(),
          retryIn);
      log.debug("ledger worker {}: the failure", holder, e);
    } else {
      log.debug("ledger worker {}: claiming failed again", holder, e);
    }
  }

  /** Records a claim that worked: ends an outage, if one was going on. */
  void succeeded() {
    Instant began;
    long failed;
    synchronized (this) {
      if (since == null) {
        return;
      }
      began = since;
      failed = failures;
      since = null;
      failures = 0;
    }
    metrics.outage(false);
    log.info(
        "ledger worker {}: the database answers again after {} ms ({} failed claims); claiming"
            + " resumed",
        holder,
        Duration.between(began, clock.instant()).toMillis(),
        failed);
  }

  /**
   * Since when claims have been failing.
   *
   * @return the first failure's time, or empty when the last claim worked
   */
  synchronized Optional<Instant> since() {
    return Optional.ofNullable(since);
  }
}

package dev.ledger.worker;

import dev.ledger.InvalidInputException;
import dev.ledger.Label;
import dev.ledger.Validation;
import java.time.Duration;
import java.util.List;

/**
 * The options both pool builders share ({@link WorkerPool.Builder}, {@link
 * TenantWorkerPool.Builder}): the settings every pool has, with the setters whose rule is the same
 * for both; a builder keeps the setters whose range or default is its own (concurrency, lease, poll
 * interval, shutdown timeout, manifest). {@link #settings} hands the values to the pool.
 *
 * @param <B> the builder's own type, returned by each setter
 */
abstract class PoolBuilder<B extends PoolBuilder<B>> {

  String holder;
  List<String> manifest = List.of();
  Label handling = Label.PUBLIC;
  int concurrency = 4;
  Duration lease = Duration.ofSeconds(30);
  Duration pollInterval;
  RetryPolicy retry = RetryPolicy.DEFAULT;
  Duration shutdownTimeout = Duration.ofSeconds(30);
  WorkerMetrics metrics = WorkerMetrics.NONE;
  boolean logTaskText;

  PoolBuilder(Duration pollInterval) {
    this.pollInterval = pollInterval;
  }

  /** This builder, as its own type. */
  abstract B self();

  /**
   * The holder name leases are taken in; unique per pool. Default: for a {@link WorkerPool}, host,
   * process id and a random part; for a {@link TenantWorkerPool}, {@code tenants-<pid>}.
   *
   * @param holder 1 to {@value Validation#MAX_NAME} characters
   * @return this
   */
  public B holder(String holder) {
    Validation.required("holder", holder, Validation.MAX_NAME);
    this.holder = holder;
    return self();
  }

  /**
   * The highest label the pool may handle; {@code public} by default.
   *
   * @param handling the label, not null
   * @return this
   */
  public B handling(Label handling) {
    if (handling == null) {
      throw new InvalidInputException("handling", "must not be null");
    }
    this.handling = handling;
    return self();
  }

  /**
   * How failures are retried; {@link RetryPolicy#DEFAULT} by default. A task's own {@code
   * max_attempts} takes the place of the policy's maximum.
   *
   * @param retry the policy, not null
   * @return this
   */
  public B retry(RetryPolicy retry) {
    if (retry == null) {
      throw new InvalidInputException("retry", "must not be null");
    }
    this.retry = retry;
    return self();
  }

  /**
   * Where the pool reports (claims, handler times, completions, failures, retries, dead letters,
   * lost leases, pickup latencies); {@link WorkerMetrics#NONE} by default. For Micrometer: {@code
   * MicrometerWorkerMetrics.of(registry)}.
   *
   * @param metrics the sink, not null
   * @return this
   */
  public B metrics(WorkerMetrics metrics) {
    if (metrics == null) {
      throw new InvalidInputException("metrics", "must not be null");
    }
    this.metrics = metrics;
    return self();
  }

  /**
   * Whether the pool's log lines may carry text from the task or its handler: a failed attempt's
   * error (the handler's message, an exception's message), which can hold personal data (an address
   * from the task's body, say). Off by default: the lines then carry task ids, attempts and the
   * error's class ({@code Outcome.failed} for a returned failure), and the error itself stays where
   * the ledger keeps it (the failed task's {@code reason}, which a scrub reaches).
   *
   * @param on true to log the errors' text
   * @return this
   */
  public B logTaskText(boolean on) {
    this.logTaskText = on;
    return self();
  }

  /**
   * The settings as given.
   *
   * @param defaultHolder the holder when none was given
   * @return the settings
   */
  PoolSettings settings(String defaultHolder) {
    return new PoolSettings(
        holder != null ? holder : defaultHolder,
        List.copyOf(manifest),
        handling,
        concurrency,
        lease,
        pollInterval,
        retry,
        shutdownTimeout,
        metrics,
        logTaskText);
  }
}

package dev.ledger.worker;

import dev.ledger.InvalidInputException;
import dev.ledger.Label;
import dev.ledger.Validation;
import java.time.Duration;
import java.util.Collection;
import java.util.List;

/**
 * The options both pool builders share ({@link WorkerPool.Builder}, {@link
 * TenantWorkerPool.Builder}): the settings every pool has, each with one setter, one rule and one
 * field name in its {@link InvalidInputException}, so the two pools refuse a bad value alike
 * ({@code PoolBuildersTest}). Only the defaults differ (a pool's poll interval, its holder), given
 * by the builder; the options one pool alone has stay on its builder. {@link #settings} hands the
 * values to the pool.
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
  Duration handlerTimeout;
  java.util.function.Function<? super dev.ledger.Task, Duration> handlerTimeoutOf;

  /** Shortest handler timeout. */
  static final Duration MIN_HANDLER_TIMEOUT = Duration.ofMillis(10);

  /** Longest handler timeout. */
  static final Duration MAX_HANDLER_TIMEOUT = Duration.ofDays(1);

  /** Fewest and most worker threads of a pool. */
  static final int MIN_CONCURRENCY = 1;

  /** Most worker threads of a pool. */
  static final int MAX_CONCURRENCY = 1000;

  /** Shortest lease a pool takes: its heartbeats run every third of it. */
  static final Duration MIN_LEASE = Duration.ofMillis(300);

  /** Shortest poll interval. */
  static final Duration MIN_POLL = Duration.ofMillis(10);

  /** Longest poll interval. */
  static final Duration MAX_POLL = Duration.ofHours(1);

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
   * What the pool's workers can do: a task is claimed only when its requirements are all in it.
   * None by default.
   *
   * @param manifest the requirements met, not null (an empty collection for none); each 1 to
   *     {@value Validation#MAX_NAME} characters
   * @return this
   * @throws InvalidInputException naming {@code manifest}
   */
  public B manifest(Collection<String> manifest) {
    if (manifest == null) {
      throw new InvalidInputException("manifest", "must not be null (use an empty list)");
    }
    manifest.forEach(m -> Validation.required("manifest", m, Validation.MAX_NAME));
    this.manifest = List.copyOf(manifest);
    return self();
  }

  /**
   * How many tasks run at once (worker threads; a {@link TenantWorkerPool}'s are shared by all
   * tenants); 4 by default.
   *
   * @param threads {@value #MIN_CONCURRENCY} to {@value #MAX_CONCURRENCY}
   * @return this
   * @throws InvalidInputException naming {@code concurrency}
   */
  public B concurrency(int threads) {
    this.concurrency = range("concurrency", threads, MIN_CONCURRENCY, MAX_CONCURRENCY);
    return self();
  }

  /**
   * How long each lease lasts; the pool extends a running task's lease every third of it. 30 s by
   * default.
   *
   * @param lease 300 ms to {@link Validation#MAX_LEASE}
   * @return this
   * @throws InvalidInputException naming {@code lease}
   */
  public B lease(Duration lease) {
    Validation.leaseDuration("lease", lease);
    if (lease.compareTo(MIN_LEASE) < 0) {
      throw new InvalidInputException("lease", "must be at least 300 ms, was " + lease);
    }
    this.lease = lease;
    return self();
  }

  /**
   * How often the pool claims when no wake-up came: a {@link WorkerPool}'s fallback for lost
   * notifications, and what finds tasks whose lease expired (5 s by default); for a {@link
   * TenantWorkerPool}, how soon a tenant whose last claim found nothing (or was refused) is asked
   * again (1 s by default).
   *
   * @param interval 10 ms to 1 hour
   * @return this
   * @throws InvalidInputException naming {@code poll_interval}
   */
  public B pollInterval(Duration interval) {
    if (interval == null || interval.compareTo(MIN_POLL) < 0 || interval.compareTo(MAX_POLL) > 0) {
      throw new InvalidInputException("poll_interval", "must be 10 ms to 1 hour");
    }
    this.pollInterval = interval;
    return self();
  }

  /**
   * How long the pool's {@code close()} waits for running handlers before it interrupts them and
   * releases their leases; 30 s by default.
   *
   * @param timeout zero or more
   * @return this
   * @throws InvalidInputException naming {@code shutdown_timeout}
   */
  public B shutdownTimeout(Duration timeout) {
    if (timeout == null || timeout.isNegative()) {
      throw new InvalidInputException("shutdown_timeout", "must be zero or more");
    }
    this.shutdownTimeout = timeout;
    return self();
  }

  /**
   * Checks a whole number of a pool option, in the words every pool option uses.
   *
   * @param field the option's name in the error, e.g. {@code batch_size}
   * @param value the value given
   * @param min the least allowed
   * @param max the most allowed
   * @return the value
   * @throws InvalidInputException naming {@code field}: {@code must be <min> to <max>, was <value>}
   */
  static int range(String field, int value, int min, int max) {
    if (value < min || value > max) {
      throw new InvalidInputException(field, "must be " + min + " to " + max + ", was " + value);
    }
    return value;
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
   * How long a handler may run: past it, the handler's thread is interrupted, its lease no longer
   * heartbeaten, and the attempt fails with the error {@code timed out after <timeout> (the handler
   * was interrupted)}, retried after its backoff like any failure and a dead letter at the last
   * attempt. The failure is recorded when the handler returns or throws (an interrupted blocking
   * call throws at once); a handler that ignores interrupts keeps its thread, and once its lease
   * runs out another claim takes the task over as a failed attempt. No limit by default.
   *
   * @param timeout 10 ms to 1 day, or null for no limit
   * @return this
   * @throws InvalidInputException naming {@code handler_timeout}
   */
  public B handlerTimeout(Duration timeout) {
    if (timeout != null) {
      checkHandlerTimeout(timeout);
    }
    this.handlerTimeout = timeout;
    return self();
  }

  /**
   * A handler timeout per task: {@code choose} is called on the worker thread with each claimed
   * task just before its handler runs, and returns that task's timeout (10 ms to 1 day) or null for
   * the pool's {@link #handlerTimeout} (which may be none). Past it the run ends as {@link
   * #handlerTimeout} describes, with the chosen timeout in the error ({@code timed out after PT2S
   * (the handler was interrupted)}): retried after its backoff, a dead letter at the task's last
   * attempt. Choose from what the task carries: its requirements, label, title, origin (a
   * schedule's tasks are filed from {@code schedule:<name>}). When {@code choose} throws, or
   * returns a timeout out of range, the attempt fails without running the handler, with the error
   * {@code handler timeout: ...} (a bug in {@code choose} is retried like any failure). Called on
   * several worker threads at once: it must be thread-safe and quick (no I/O).
   *
   * @param choose the timeout of each task, or null to use the pool's for every task (the default)
   * @return this
   */
  public B handlerTimeoutOf(java.util.function.Function<? super dev.ledger.Task, Duration> choose) {
    this.handlerTimeoutOf = choose;
    return self();
  }

  /**
   * Checks a handler timeout against its bounds.
   *
   * @param timeout the timeout, not null
   * @throws InvalidInputException naming {@code handler_timeout} when out of range
   */
  static void checkHandlerTimeout(Duration timeout) {
    if (timeout.compareTo(MIN_HANDLER_TIMEOUT) < 0 || timeout.compareTo(MAX_HANDLER_TIMEOUT) > 0) {
      throw new InvalidInputException(
          "handler_timeout",
          "must be " + MIN_HANDLER_TIMEOUT + " to " + MAX_HANDLER_TIMEOUT + ", was " + timeout);
    }
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
        logTaskText,
        handlerTimeout,
        handlerTimeoutOf);
  }
}

package dev.ledger.worker;

import dev.ledger.Label;
import java.time.Duration;
import java.util.List;

/**
 * A pool's settings once built, the ones every pool has ({@link PoolBuilder}); immutable.
 *
 * @param holder the holder name leases are taken in
 * @param manifest the requirements the pool's workers meet
 * @param handling the highest label the pool may handle
 * @param concurrency worker threads
 * @param lease how long each lease lasts (heartbeats every third of it)
 * @param pollInterval how often the pool claims without a wake-up
 * @param retry how failures are retried
 * @param shutdownTimeout how long close waits for running handlers
 * @param metrics where the pool reports
 * @param logTaskText whether log lines may carry a failure's text (the handler's message)
 * @param handlerTimeout how long a handler may run before it is interrupted and its attempt fails
 *     as timed out, or null for no limit
 * @param handlerTimeoutOf each task's own handler timeout (null from it: {@code handlerTimeout}),
 *     or null when every task takes {@code handlerTimeout}
 */
record PoolSettings(
    String holder,
    List<String> manifest,
    Label handling,
    int concurrency,
    Duration lease,
    Duration pollInterval,
    RetryPolicy retry,
    Duration shutdownTimeout,
    WorkerMetrics metrics,
    boolean logTaskText,
    Duration handlerTimeout,
    java.util.function.Function<? super dev.ledger.Task, Duration> handlerTimeoutOf) {}

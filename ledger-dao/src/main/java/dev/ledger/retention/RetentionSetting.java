package dev.ledger.retention;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * A domain's row of the retention table ({@code ledger_retention}, directory migration V8): its
 * retention, if any, and what purges removed so far.
 *
 * @param domain the domain
 * @param retention how long a completed or invalidated task is kept after its terminal event; empty
 *     when none is set (nothing of the domain is purged)
 * @param removedThroughSeq the largest {@code events.seq} of the domain's log a purge removed, 0
 *     when none: a reader of the log resuming at or below it may have missed removed events
 * @param tasksRemoved how many tasks purges removed, in total
 * @param eventsRemoved how many events purges removed, in total
 * @param lastPurgeAt when a purge last removed something from the domain; null when never
 */
public record RetentionSetting(
    String domain,
    Optional<Duration> retention,
    long removedThroughSeq,
    long tasksRemoved,
    long eventsRemoved,
    Instant lastPurgeAt) {}

package dev.ledger.feed;

import java.time.Instant;

/**
 * One delivered event, as stored in its domain's {@code events} table (after any scrub: an event
 * scrubbed before delivery is delivered redacted).
 *
 * @param domain the domain, not null
 * @param seq the event's {@code seq} in its domain; increasing within one delivery window, not
 *     across windows (see docs/feed.md)
 * @param taskId the task's id ({@code promotion:<entry>} for a promotion's events), not null
 * @param kind the event's wire name, e.g. {@code completed}, not null
 * @param at when it was written (microseconds, UTC), not null
 * @param payload the payload, JSON text as stored (format v1), not null
 */
public record FeedEvent(
    String domain, long seq, String taskId, String kind, Instant at, String payload) {}

package dev.ledger;

import java.time.Instant;

/**
 * One event of a task's history, as stored.
 *
 * @param seq its position in the domain's log
 * @param taskId the task (or {@code promotion:<entry>}) it belongs to
 * @param kind e.g. {@code claimed}
 * @param at when it happened
 * @param payload its JSON payload, format v1, as stored
 */
public record LoggedEvent(long seq, String taskId, String kind, Instant at, String payload) {}

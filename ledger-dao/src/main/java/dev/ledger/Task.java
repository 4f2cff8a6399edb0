package dev.ledger;

import java.time.Instant;

/**
 * One task as the projection holds it: a row of the domain's {@code tasks} table. Ports the
 * reference's {@code Task}.
 *
 * @param id the task id
 * @param spec what it was filed with (title and body as they are now: a scrub redacts them)
 * @param created when it was filed, microsecond precision
 * @param status its status
 * @param holder the last claimer; kept after completion, cleared on release; null if never claimed
 * @param leaseUntil when the current lease expires; null unless claimed
 * @param attempts how many times it was claimed; the current lease's attempt number
 * @param handoff the last handoff left or completed with; null for none
 * @param reason why it was invalidated; null unless invalidated
 * @param supersededBy the task that replaces it; null for none
 * @param postedTo where its result was posted; null until posted
 */
public record Task(
    String id,
    TaskSpec spec,
    Instant created,
    Status status,
    String holder,
    Instant leaseUntil,
    long attempts,
    String handoff,
    String reason,
    String supersededBy,
    String postedTo) {}

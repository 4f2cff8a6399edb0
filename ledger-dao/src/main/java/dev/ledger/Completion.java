package dev.ledger;

/**
 * One task to complete in {@link dev.ledger.worker.WorkerPort#completeAll}: its lease and its
 * result note.
 *
 * @param lease the task's current lease, not null
 * @param handoff the result note, or null; at most {@value Validation#MAX_BODY} characters
 */
public record Completion(Lease lease, String handoff) {}

package dev.ledger;

import java.time.Instant;

/**
 * What {@link dev.ledger.worker.WorkerPort#fail} recorded: the failed attempt, and either the retry
 * filed for it or the dead letter the task became.
 *
 * @param taskId the task whose attempt failed; now {@code invalidated}, its reason the error
 * @param attempt which attempt of the task's retry chain failed, from 1 (the root is attempt 1, the
 *     retry filed after attempt {@code n} is attempt {@code n + 1})
 * @param maxAttempts how many attempts the chain has in all
 * @param reason the reason stored on the task: {@code attempt <n> of <max> failed at <time>:
 *     <error>}, or the same after {@value #DEAD_LETTER} for a dead letter; a scrub of the task
 *     keeps everything before {@code <error>} and replaces the error
 * @param at when the failure was recorded
 * @param retryId the retry's task id ({@code retries:<root>}), or null for a dead letter
 * @param retryAt when the retry may run (its {@code not_before}), or null for a dead letter
 */
public record FailureRecord(
    String taskId,
    int attempt,
    int maxAttempts,
    String reason,
    Instant at,
    String retryId,
    Instant retryAt) {

  /** The prefix of a dead letter's reason: {@code dead letter: attempt 3 of 3 failed at ...}. */
  public static final String DEAD_LETTER = "dead letter:";

  /**
   * Whether the task ended as a dead letter (no retry was filed).
   *
   * @return true after the last attempt
   */
  public boolean deadLetter() {
    return retryId == null;
  }
}

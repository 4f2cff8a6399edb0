package dev.ledger.worker;

import java.time.Duration;

/**
 * What a {@link WorkerPool} reports as it works. {@link #NONE} ignores it all; {@link
 * MicrometerWorkerMetrics} records it in a Micrometer {@code MeterRegistry}. Implementations must
 * be thread-safe and cheap: they are called on the pool's threads.
 */
public interface WorkerMetrics {

  /** Reports nothing. */
  WorkerMetrics NONE = new WorkerMetrics() {};

  /**
   * A claim ran.
   *
   * @param domain the domain
   * @param claimed how many tasks it claimed
   * @param took how long the claim took
   */
  default void claimed(String domain, int claimed, Duration took) {}

  /**
   * A claimed task reached its handler (called only when {@link #wantsPickup()}).
   *
   * @param domain the domain
   * @param pickup from when it became claimable (its {@code admitted} or {@code released} event, a
   *     delayed task's admission at its time included) to its claim, as the ledger's clock recorded
   *     both
   */
  default void pickedUp(String domain, Duration pickup) {}

  /**
   * A handler finished.
   *
   * @param domain the domain
   * @param outcome {@code completed}, {@code failed} or {@code lost}
   * @param took how long the handler ran
   */
  default void handled(String domain, String outcome, Duration took) {}

  /**
   * A task was completed.
   *
   * @param domain the domain
   */
  default void completed(String domain) {}

  /**
   * A failure was recorded and a retry filed.
   *
   * @param domain the domain
   */
  default void retried(String domain) {}

  /**
   * A task's completion is tried again: its row was held by another transaction, or the database
   * failed the write (a dropped connection, a restart), and its lease still lasts. Once per retry.
   *
   * @param domain the domain
   */
  default void completionRetried(String domain) {}

  /**
   * The recording of a failed attempt is tried again: the database failed the write, and the task's
   * lease still lasts. Once per retry.
   *
   * @param domain the domain
   */
  default void failureRetried(String domain) {}

  /**
   * A failure was recorded.
   *
   * @param domain the domain
   */
  default void failed(String domain) {}

  /**
   * A task became a dead letter.
   *
   * @param domain the domain
   */
  default void dead(String domain) {}

  /**
   * A lease was lost while its task ran (or before its result was recorded).
   *
   * @param domain the domain
   */
  default void leaseLost(String domain) {}

  /**
   * A pool's claims began failing (its database is unreachable or refuses), or worked again.
   *
   * @param ongoing true when an outage begins, false when it ends
   */
  default void outage(boolean ongoing) {}

  /**
   * A domain's task counts by status, sampled. Their sum is the number of tasks the domain holds
   * now: a retention purge removes tasks (see {@link #filed} for every task ever filed).
   *
   * @param domain the domain
   * @param counts the count per status wire name ({@code admitted}, ...)
   */
  default void depth(String domain, java.util.Map<String, Long> counts) {}

  /**
   * How many tasks were filed in a domain so far, by anyone, sampled with {@link #depth}: the tasks
   * it holds now and those retention purges removed (whichever process purged: each purge adds what
   * it removed to the domain's retention row, {@code RetentionSetting.tasksRemoved}, in its own
   * transaction), which {@link MicrometerWorkerMetrics} reports as {@code ledger.tasks.filed}. The
   * removed count is read before the tasks are counted, so a purge that commits between the two
   * reads makes one sample short by what it removed, never larger than the truth.
   *
   * @param domain the domain
   * @param tasks the tasks filed so far, 0 or more
   */
  default void filed(String domain, long tasks) {}

  /**
   * A domain's queue controls as set, sampled with {@link #depth} (when {@link #wantsDepth}).
   *
   * @param controls the domain's controls and its tasks claimed now, not null
   */
  default void controls(dev.ledger.DomainControls controls) {}

  /**
   * After each claim of a domain: whether the domain's queue controls held it back, and by which
   * (see {@link WorkerPort#heldBack}).
   *
   * @param domain the domain
   * @param control {@code paused}, {@code concurrency} or {@code rate}; null when not held back
   */
  default void heldBack(String domain, String control) {}

  /**
   * Whether {@link #pickedUp} is wanted: the pool reads when each claimed task became claimable
   * (one query per claimed batch) only then.
   *
   * @return true to be told pickup latencies
   */
  default boolean wantsPickup() {
    return false;
  }

  /**
   * Whether {@link #depth} is wanted: the pool samples the counts only then.
   *
   * @return true to sample
   */
  default boolean wantsDepth() {
    return false;
  }
}

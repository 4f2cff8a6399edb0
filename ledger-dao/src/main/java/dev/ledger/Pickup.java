package dev.ledger;

import java.time.Instant;

/**
 * How a claimed task came to be claimable, read from its events ({@link
 * dev.ledger.worker.WorkerPort#pickups}): when it became claimable for its current claim, and
 * whether that claim took it from an expired lease (the worker that held it stopped heartbeating:
 * it died, or stalled longer than its lease).
 *
 * @param taskId the task
 * @param readyAt when it became claimable: its last {@code admitted} or {@code released} event, or
 *     the end of the expired lease the current claim took it from
 * @param claimedAt the time of its current {@code claimed} event
 * @param expiredHolder the holder of the expired lease the current claim took over, or null when
 *     the task was claimable because it was admitted or released
 */
public record Pickup(String taskId, Instant readyAt, Instant claimedAt, String expiredHolder) {

  /**
   * From becoming claimable to the claim, as the ledger's clock recorded both.
   *
   * @return the latency; zero when the times are out of order
   */
  public java.time.Duration latency() {
    java.time.Duration d = java.time.Duration.between(readyAt, claimedAt);
    return d.isNegative() ? java.time.Duration.ZERO : d;
  }

  /**
   * Whether the current claim took the task from an expired lease.
   *
   * @return true after an expiry
   */
  public boolean afterExpiry() {
    return expiredHolder != null;
  }
}

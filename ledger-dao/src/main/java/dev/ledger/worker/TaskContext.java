package dev.ledger.worker;

import dev.ledger.Lease;
import dev.ledger.LeaseLostException;
import dev.ledger.Task;

/**
 * What a {@link TaskHandler} knows about the task it runs: the current lease (extended by the
 * pool's heartbeats), the attempt, and whether the lease is lost. Thread-safe: the pool's heartbeat
 * thread updates it while the handler reads it.
 */
public final class TaskContext {

  private final Task task;
  private final int attempt;
  private final int maxAttempts;
  private volatile Lease lease;
  private volatile LeaseLostException lost;

  TaskContext(Task task, Lease lease, int attempt, int maxAttempts) {
    this.task = task;
    this.lease = lease;
    this.attempt = attempt;
    this.maxAttempts = maxAttempts;
  }

  /**
   * The task as claimed.
   *
   * @return the task
   */
  public Task task() {
    return task;
  }

  /**
   * The current lease; its {@code until} moves on with each heartbeat.
   *
   * @return the lease
   */
  public Lease lease() {
    return lease;
  }

  /**
   * Which attempt of the task's retry chain this is, from 1.
   *
   * @return the attempt
   */
  public int attempt() {
    return attempt;
  }

  /**
   * How many attempts the chain has in all: the task's {@code max_attempts}, or the pool's default.
   *
   * @return the maximum
   */
  public int maxAttempts() {
    return maxAttempts;
  }

  /**
   * Whether the lease is lost (a heartbeat was refused: the lease expired and the task was claimed
   * again, or it was released, invalidated or the pool is closing). The pool also interrupts the
   * handler's thread then. Once lost, the handler's outcome is discarded.
   *
   * @return true when lost
   */
  public boolean leaseLost() {
    return lost != null;
  }

  /**
   * Throws when the lease is lost: for handlers that check between steps.
   *
   * @throws LeaseLostException the refusal that showed the loss
   */
  public void checkLease() {
    LeaseLostException e = lost;
    if (e != null) {
      throw e;
    }
  }

  void extended(Lease next) {
    this.lease = next;
  }

  void lost(LeaseLostException e) {
    this.lost = e;
  }
}

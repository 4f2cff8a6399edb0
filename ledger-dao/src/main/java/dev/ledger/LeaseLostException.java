package dev.ledger;

/**
 * The lease is no longer the task's current one: it was released, the task was completed or
 * invalidated, or it expired and another claimer took the task (fencing, docs/state-machine.md).
 * The holder must stop working on the task.
 */
public final class LeaseLostException extends LedgerException {

  private static final long serialVersionUID = 1L;

  private final Lease lease;

  /**
   * Creates the error.
   *
   * @param lease the stale lease
   * @param operation the operation refused, e.g. {@code complete}
   * @param now what the task holds now, e.g. {@code claimed by worker-2 (attempt 3)}
   */
  public LeaseLostException(Lease lease, String operation, String now) {
    super(
        "cannot "
            + operation
            + " task '"
            + lease.taskId()
            + "': lease of "
            + lease.holder()
            + " (attempt "
            + lease.attempt()
            + ") is no longer current; the task is "
            + now
            + ". Stop working on it; claim again to continue");
    this.lease = lease;
  }

  /**
   * The stale lease.
   *
   * @return the lease
   */
  public Lease lease() {
    return lease;
  }
}

package dev.ledger;

import java.util.List;

/**
 * What {@link dev.ledger.worker.WorkerPort#completeAvailable} did with a batch: every completion
 * given is in exactly one of the three lists.
 *
 * @param completed the leases whose tasks are completed: now, or before under this very lease (a
 *     completion retried after its commit's outcome was unknown), in the order given
 * @param refused the leases that are not their task's current one (expired and claimed again,
 *     released, invalidated, completed under another lease), given twice, or of a task not in the
 *     domain: nothing written for them
 * @param busy the completions whose task row (or its route) another transaction holds: nothing
 *     written for them, to be tried again while their lease lasts
 */
public record CompletedBatch(List<Lease> completed, List<Lease> refused, List<Completion> busy) {

  /**
   * Copies the lists.
   *
   * @throws NullPointerException when a list is null
   */
  public CompletedBatch {
    completed = List.copyOf(completed);
    refused = List.copyOf(refused);
    busy = List.copyOf(busy);
  }
}

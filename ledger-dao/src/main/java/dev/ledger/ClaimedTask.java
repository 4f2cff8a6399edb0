package dev.ledger;

/**
 * One task of {@link dev.ledger.worker.WorkerPort#claimTasks}: its new lease and the task as the
 * claim left it (claimed by the lease's holder, its attempts counted), read by the claiming
 * statement itself.
 *
 * @param lease the lease, as {@link Ledger#claimBatch(String, Claimer, int)} returns it
 * @param task the task's row after the claim
 */
public record ClaimedTask(Lease lease, Task task) {}

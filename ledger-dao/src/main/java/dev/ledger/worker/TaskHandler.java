package dev.ledger.worker;

import dev.ledger.Task;

/**
 * What a {@link WorkerPool} runs for each task it claims. Called on one of the pool's worker
 * threads, one task per call; a handler serving several threads must be thread-safe.
 *
 * <pre>{@code
 * TaskHandler sendMail = (task, ctx) -> {
 *   mailer.send(task.spec().body());
 *   return Outcome.done("sent");
 * };
 * }</pre>
 *
 * <p>Returning {@link Outcome#done()} completes the task under its lease. Returning {@link
 * Outcome#failed(String)} or throwing records the failure on the task and files a retry after a
 * backoff, until the task's maximum attempts; then the task ends as a dead letter (see {@link
 * WorkerPool}). A handler should check {@link TaskContext#leaseLost()} (or react to the interrupt
 * the pool sends) and stop when its lease is lost: its result is then discarded.
 */
@FunctionalInterface
public interface TaskHandler {

  /**
   * Handles one task.
   *
   * @param task the task as claimed (its row as of the claim), not null
   * @param context the lease, the attempt number and the lease-lost flag, not null
   * @return the outcome, not null (null is taken as a failure)
   * @throws Exception any failure; recorded on the task as {@code ClassName: message}
   */
  Outcome handle(Task task, TaskContext context) throws Exception;
}

package dev.ledger.worker;

import dev.ledger.Task;

/**
 * Runs one task of one tenant for a {@link TenantWorkerPool}: a {@link TaskHandler} that is told
 * whose task it is.
 */
@FunctionalInterface
public interface TenantTaskHandler {

  /**
   * Handles one task.
   *
   * @param tenant the tenant whose database holds the task
   * @param task the task as claimed, not null
   * @param context the lease, the attempt number and the lease-lost flag, not null
   * @return the outcome, not null (null is taken as a failure)
   * @throws Exception any failure; recorded on the task as {@code ClassName: message}
   */
  Outcome handle(String tenant, Task task, TaskContext context) throws Exception;
}

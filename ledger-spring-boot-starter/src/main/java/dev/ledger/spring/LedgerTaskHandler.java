package dev.ledger.spring;

import dev.ledger.worker.TaskHandler;

/**
 * A {@link TaskHandler} bean for one ledger domain. When the worker runtime ({@code
 * dev.ledger.worker}) is on the class path and {@code ledger.worker.enabled} is not false, the
 * starter runs one {@link dev.ledger.worker.WorkerPool} serving every such bean's domain (see
 * {@link LedgerWorkerAutoConfiguration}). At most one bean per domain.
 *
 * <pre>{@code
 * @Component
 * class ShipOrder implements LedgerTaskHandler {
 *   public String domain() { return "orders"; }
 *   public Outcome handle(Task task, TaskContext context) {
 *     shipping.send(task.title());
 *     return Outcome.done("shipped");
 *   }
 * }
 * }</pre>
 *
 * <p>Called on the pool's worker threads: an implementation must be thread-safe.
 */
public interface LedgerTaskHandler extends TaskHandler {

  /**
   * The domain whose tasks this handler runs.
   *
   * @return a domain name, e.g. {@code orders}; constant for the bean's life
   */
  String domain();
}

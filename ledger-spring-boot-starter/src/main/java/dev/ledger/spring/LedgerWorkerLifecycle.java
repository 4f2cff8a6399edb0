package dev.ledger.spring;

import dev.ledger.worker.WorkerPool;
import java.util.function.Supplier;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the worker pool when the application context has started and closes it when the context
 * stops. It is in the last phase, so it starts after every other lifecycle bean and stops before
 * them: no handler runs on a half-started or half-stopped service, and running tasks' leases are
 * released before the {@code DataSource} closes. Thread-safe.
 */
public class LedgerWorkerLifecycle implements SmartLifecycle {

  private final Supplier<WorkerPool> factory;
  private WorkerPool pool;

  /**
   * Creates the lifecycle; nothing runs before {@link #start()}.
   *
   * @param factory builds the pool, not yet started; called by each {@link #start()}
   */
  public LedgerWorkerLifecycle(Supplier<WorkerPool> factory) {
    this.factory = factory;
  }

  /**
   * Builds and starts the pool.
   *
   * @throws dev.ledger.InvalidInputException naming the setting when the pool's configuration is
   *     invalid, or {@code domains} when a served domain has no schema (unless awaited)
   */
  @Override
  public synchronized void start() {
    if (pool == null) {
      WorkerPool p = factory.get();
      p.start();
      pool = p;
    }
  }

  /** Closes the pool: stops claiming, waits for running handlers up to the shutdown timeout. */
  @Override
  public synchronized void stop() {
    if (pool != null) {
      try {
        pool.close();
      } finally {
        pool = null;
      }
    }
  }

  @Override
  public synchronized boolean isRunning() {
    return pool != null;
  }

  /**
   * The running pool.
   *
   * @return the pool, or null when not running
   */
  public synchronized WorkerPool pool() {
    return pool;
  }
}

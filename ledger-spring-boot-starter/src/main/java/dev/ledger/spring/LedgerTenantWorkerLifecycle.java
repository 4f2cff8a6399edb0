package dev.ledger.spring;

import dev.ledger.worker.TenantWorkerPool;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the cross-tenant worker pools when the application context has started and closes them
 * when it stops, in the last phase (as {@link LedgerWorkerLifecycle}): they stop before the tenant
 * directory closes, so running tasks' leases are released while the tenants' pools are open.
 * Thread-safe.
 */
public class LedgerTenantWorkerLifecycle implements SmartLifecycle {

  private final List<Supplier<TenantWorkerPool>> factories;
  private final List<TenantWorkerPool> pools = new ArrayList<>();
  private boolean running;

  /**
   * Creates the lifecycle; nothing runs before {@link #start()}.
   *
   * @param factories each starts one pool; called by each {@link #start()}
   */
  public LedgerTenantWorkerLifecycle(List<Supplier<TenantWorkerPool>> factories) {
    this.factories = List.copyOf(factories);
  }

  /** Starts every pool. */
  @Override
  public synchronized void start() {
    if (running) {
      return;
    }
    try {
      for (Supplier<TenantWorkerPool> f : factories) {
        pools.add(f.get());
      }
    } catch (RuntimeException e) {
      stop();
      throw e;
    }
    running = true;
  }

  /** Closes every pool: stops claiming, waits for running handlers up to the shutdown timeout. */
  @Override
  public synchronized void stop() {
    try {
      for (TenantWorkerPool p : pools) {
        p.close();
      }
    } finally {
      pools.clear();
      running = false;
    }
  }

  @Override
  public synchronized boolean isRunning() {
    return running;
  }

  /**
   * The running pools, one per handler bean.
   *
   * @return the pools; empty when not running
   */
  public synchronized List<TenantWorkerPool> pools() {
    return List.copyOf(pools);
  }
}

package dev.ledger.tenants;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The most physical connections all tenants' pools may hold together. A pool takes a permit for
 * each connection it opens ({@link BudgetedDataSource}) and gives it back when the connection
 * closes. When none is free, the tenant pool holding the most idle connections is told to close
 * them ({@link ServedTenant#evictIdle()}), and the opener waits for a permit up to the connect
 * timeout. Thread-safe.
 */
final class ConnectionBudget {

  private static final long RELIEF_STEP_NANOS = TimeUnit.MILLISECONDS.toNanos(25);

  private final int limit;
  private final Semaphore permits;
  private final AtomicInteger open = new AtomicInteger();
  private final Set<ServedTenant> pools = ConcurrentHashMap.newKeySet();

  ConnectionBudget(int limit) {
    this.limit = limit;
    this.permits = new Semaphore(limit, true);
  }

  /** The budget. */
  int limit() {
    return limit;
  }

  /** Physical tenant connections open now. */
  int open() {
    return open.get();
  }

  /** A pool whose idle connections may be closed to make room. */
  void add(ServedTenant tenant) {
    pools.add(tenant);
  }

  /** A pool that is closing or closed. */
  void remove(ServedTenant tenant) {
    pools.remove(tenant);
  }

  /**
   * Takes a permit for a new connection.
   *
   * @param timeout how long to wait at most
   * @param requester the pool that wants it (its own idle connections are not evicted)
   * @return true when taken (the caller must {@link #release()} it once), false on timeout
   * @throws InterruptedException when interrupted while waiting
   */
  boolean acquire(Duration timeout, ServedTenant requester) throws InterruptedException {
    // a timed try honours the fair queue: a new request does not overtake one that waits
    if (permits.tryAcquire(0, TimeUnit.NANOSECONDS)) {
      open.incrementAndGet();
      return true;
    }
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      relieve(requester);
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      if (permits.tryAcquire(Math.min(left, RELIEF_STEP_NANOS), TimeUnit.NANOSECONDS)) {
        open.incrementAndGet();
        return true;
      }
    }
  }

  /** Gives back a permit taken by {@link #acquire}. */
  void release() {
    open.decrementAndGet();
    permits.release();
  }

  /**
   * The budget's state, for the message of a spent budget.
   *
   * @return e.g. {@code 12 open: 8 in use, 4 idle, over 9 pools}
   */
  String describe() {
    int active = 0;
    int idle = 0;
    int count = 0;
    for (ServedTenant t : pools) {
      active += t.activeConnections();
      idle += t.idleConnections();
      count++;
    }
    return open.get() + " open: " + active + " in use, " + idle + " idle, over " + count + " pools";
  }

  /**
   * Asks the pool with the most idle connections (not the requester's, none with a caller waiting)
   * to close them.
   */
  private void relieve(ServedTenant requester) {
    ServedTenant most = null;
    int mostIdle = 0;
    for (ServedTenant t : pools) {
      if (t == requester) {
        continue;
      }
      int idle = t.evictableConnections();
      if (idle > mostIdle) {
        most = t;
        mostIdle = idle;
      }
    }
    if (most != null) {
      most.evictIdle();
    }
  }
}

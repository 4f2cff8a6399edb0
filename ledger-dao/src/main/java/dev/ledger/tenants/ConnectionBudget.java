package dev.ledger.tenants;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The most physical connections all tenants' pools may hold together. A pool takes a permit for
 * each connection it opens ({@link BudgetedDataSource}) and gives it back when the connection
 * closes. When none is free, the least recently used tenant pool with idle connections is told to
 * close them ({@link ServedTenant#evictIdle()}), and the opener waits for a permit up to the
 * connect timeout. A pool that already holds a connection does not grow while the budget is spent:
 * its caller waits for one of the pool's own connections instead ({@link TenantDataSource}), so a
 * busy tenant's second connection never costs another tenant its only one. Thread-safe.
 */
final class ConnectionBudget {

  private static final long RELIEF_STEP_NANOS = TimeUnit.MILLISECONDS.toNanos(25);

  /** How long a wait that made a pool close its idle connections waits before it asks again. */
  private static final long RELIEF_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  /** How long a pool that holds connections waits for a free permit before evicting another's. */
  static final long GROWTH_GRACE_MILLIS = 250;

  /** How long a closed connection's permit is kept while others wait (its server process exits). */
  static final long LINGER_MILLIS = 50;

  private static final long GROWTH_STEP_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  private final int limit;
  private final Semaphore permits;
  private final AtomicInteger open = new AtomicInteger();
  private final AtomicLong connected = new AtomicLong();
  private final AtomicLong evictions = new AtomicLong();
  private final Set<ServedTenant> pools = ConcurrentHashMap.newKeySet();
  private final AtomicInteger waiting = new AtomicInteger();
  private final ScheduledExecutorService later;
  private final Set<Object> lingering = ConcurrentHashMap.newKeySet();

  ConnectionBudget(int limit, ScheduledExecutorService later) {
    this.limit = limit;
    this.permits = new Semaphore(limit, true);
    this.later = later;
  }

  /** The budget. */
  int limit() {
    return limit;
  }

  /** Physical tenant connections open now. */
  int open() {
    return open.get();
  }

  /** Records a physical connect that succeeded. */
  void connected() {
    connected.incrementAndGet();
  }

  /** Physical connects that succeeded since the budget was made. */
  long connects() {
    return connected.get();
  }

  /** How many times a pool was told to close its idle connections to make room. */
  long evictions() {
    return evictions.get();
  }

  /** Whether a permit is free now (a new connection would not have to evict another's). */
  boolean hasRoom() {
    return permits.availablePermits() > 0;
  }

  /** A pool whose idle connections may be closed to make room. */
  void add(ServedTenant tenant) {
    pools.add(tenant);
  }

  /** A pool that is closing or closed. */
  void remove(ServedTenant tenant) {
    pools.remove(tenant);
  }

  /** What {@link #acquire} got. */
  enum Grant {
    /** A permit: the caller must {@link #release()} it once. */
    TAKEN,
    /** No permit, none needed: the pool's callers were served by its own connections. */
    NOT_NEEDED,
    /** No permit within the timeout. */
    TIMED_OUT
  }

  /**
   * Takes a permit for a new connection. When none is free and the requesting pool already holds a
   * connection (and no caller that holds one of them asks for another: that one would wait for
   * itself), it first waits up to {@value #GROWTH_GRACE_MILLIS} ms for a permit without evicting
   * anyone, giving up as soon as its callers were served by the pool's own connections (a returned
   * one usually serves a second caller within milliseconds); only after that grace, or for a pool
   * with no connection at all, does it make another pool close its idle ones.
   *
   * @param timeout how long to wait at most
   * @param requester the pool that wants it (its own idle connections are not evicted)
   * @return what was got
   * @throws InterruptedException when interrupted while waiting
   */
  Grant acquire(Duration timeout, ServedTenant requester) throws InterruptedException {
    // a timed try honours the fair queue: a new request does not overtake one that waits
    if (permits.tryAcquire(0, TimeUnit.NANOSECONDS)) {
      open.incrementAndGet();
      return Grant.TAKEN;
    }
    waiting.incrementAndGet();
    try {
      return awaitPermit(timeout, requester);
    } finally {
      waiting.decrementAndGet();
    }
  }

  private Grant awaitPermit(Duration timeout, ServedTenant requester) throws InterruptedException {
    long start = System.nanoTime();
    long deadline = start + timeout.toNanos();
    if (requester.openConnections() > 0 && !requester.nestedWaiting()) {
      long graceEnd = start + TimeUnit.MILLISECONDS.toNanos(GROWTH_GRACE_MILLIS);
      while (graceEnd - System.nanoTime() > 0 && deadline - System.nanoTime() > 0) {
        if (!requester.awaitsConnection()) {
          return Grant.NOT_NEEDED;
        }
        if (permits.tryAcquire(GROWTH_STEP_NANOS, TimeUnit.NANOSECONDS)) {
          open.incrementAndGet();
          return Grant.TAKEN;
        }
      }
    }
    long nextRelief = System.nanoTime();
    while (true) {
      long now = System.nanoTime();
      if (now - nextRelief >= 0) {
        // one eviction per wait: its connection's permit comes back when the connection has
        // closed (and lingered); evicting again before that would close a second tenant's
        nextRelief = now + (relieve(requester) ? RELIEF_RETRY_NANOS : RELIEF_STEP_NANOS);
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return Grant.TIMED_OUT;
      }
      if (permits.tryAcquire(Math.min(left, RELIEF_STEP_NANOS), TimeUnit.NANOSECONDS)) {
        open.incrementAndGet();
        return Grant.TAKEN;
      }
    }
  }

  /**
   * Gives back a permit taken by {@link #acquire}, once its connection is closed. While another
   * pool waits for one, the permit is given back {@value #LINGER_MILLIS} ms later: the server
   * process of the closed connection is still exiting for a moment, and a connect made at once
   * would have the server hold one process more than the budget.
   */
  void release() {
    if (waiting.get() > 0) {
      Object token = new Object();
      lingering.add(token);
      try {
        later.schedule(
            () -> {
              if (lingering.remove(token)) {
                releaseNow();
              }
            },
            LINGER_MILLIS,
            TimeUnit.MILLISECONDS);
        return;
      } catch (RejectedExecutionException closing) {
        lingering.remove(token); // the directory is closing: no one will connect
      }
    }
    releaseNow();
  }

  /** Gives back at once the permits still lingering (the directory closed its scheduler). */
  void flush() {
    for (Object token : lingering) {
      if (lingering.remove(token)) {
        releaseNow();
      }
    }
  }

  private void releaseNow() {
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
   * Asks the least recently used pool with idle connections (not the requester's, none with a
   * caller waiting) to close them: under a budget smaller than the tenants in use, the tenants
   * called most keep their connections. Returns whether one was asked.
   */
  private boolean relieve(ServedTenant requester) {
    ServedTenant lru = null;
    long lruUsed = Long.MAX_VALUE;
    for (ServedTenant t : pools) {
      if (t == requester || t.evictableConnections() == 0) {
        continue;
      }
      long used = t.lastUsed();
      if (lru == null || used - lruUsed < 0) {
        lru = t;
        lruUsed = used;
      }
    }
    if (lru == null) {
      return false;
    }
    evictions.incrementAndGet();
    lru.evictIdle();
    return true;
  }
}

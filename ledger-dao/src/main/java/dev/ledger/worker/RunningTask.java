package dev.ledger.worker;

import dev.ledger.Lease;
import dev.ledger.LeaseLostException;
import dev.ledger.Pickup;
import dev.ledger.Task;

/**
 * One claimed task of a pool, from its claim to its recorded outcome (or its release at close):
 * what was claimed, the handler's thread while it runs, when its next heartbeat is due, and the
 * context the handler sees. Guards the handler's thread against a late interrupt: {@link #lose}
 * interrupts only while the handler runs, and {@link #finish} clears an interrupt the pool sent.
 */
final class RunningTask {

  /** The tenant the task is of, or null in a pool over one ledger. */
  final String tenant;

  final String domain;
  final Lease claimed;

  /** The task as claimed, or null when the worker must read it. */
  final Task task;

  /** How the task came to be claimable, when it was read (else null). */
  final Pickup pickup;

  volatile TaskContext context;
  private Thread thread;
  private boolean finished;

  /**
   * While the task waits for a thread: the lease the last heartbeat returned (null before the
   * first), so a prefetched task keeps its lease however long it waits.
   */
  private volatile Lease queuedLease;

  /** Set when a heartbeat found the lease lost while the task waited for a thread. */
  volatile LeaseLostException lostWhileQueued;

  /** While the handler runs: heartbeats due from {@link #nextBeat} (System.nanoTime). */
  volatile boolean beating;

  volatile long nextBeat;

  RunningTask(String tenant, String domain, Lease claimed, Task task, Pickup pickup) {
    this.tenant = tenant;
    this.domain = domain;
    this.claimed = claimed;
    this.task = task;
    this.pickup = pickup;
  }

  /** The current lease: the claim's, or the one the last heartbeat returned. */
  Lease lease() {
    TaskContext c = context;
    if (c != null) {
      return c.lease();
    }
    Lease q = queuedLease;
    return q != null ? q : claimed;
  }

  /** Keeps a heartbeat's lease: in the context once the handler started, else here. */
  void extended(Lease next) {
    TaskContext c = context;
    if (c != null) {
      c.extended(next);
    } else {
      queuedLease = next;
    }
  }

  /** For log lines: {@code " of tenant <id>"}, or nothing in a pool over one ledger. */
  String of() {
    return tenant == null ? "" : " of tenant " + tenant;
  }

  /** Starts the handler's run on this thread; false when the task was given up before. */
  synchronized boolean begin() {
    if (finished) {
      return false;
    }
    thread = Thread.currentThread();
    return true;
  }

  /** Ends the handler's run; clears an interrupt the pool sent. */
  synchronized void finish() {
    finished = true;
    thread = null;
    Thread.interrupted();
  }

  /** Whether the handler's run has ended (or was given up before it began). */
  synchronized boolean finished() {
    return finished;
  }

  /** Marks the lease lost and interrupts the handler if it still runs. */
  synchronized void lose(LeaseLostException e) {
    TaskContext c = context;
    if (c != null) {
      c.lost(e);
    }
    if (thread != null && !finished) {
      thread.interrupt();
    }
  }
}

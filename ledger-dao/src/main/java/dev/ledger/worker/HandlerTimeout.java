package dev.ledger.worker;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One handler run's timeout ({@link PoolBuilder#handlerTimeout}): armed on the worker thread before
 * the handler starts, it interrupts that thread when the time is up (and stops the task's
 * heartbeats); disarmed by the same thread when the handler returns, which then learns whether it
 * fired and loses the interrupt it set. Firing and disarming hold this object's lock, so an
 * interrupt never reaches the thread after the handler's run ended (it would hit the next task).
 * Thread-safe.
 */
final class HandlerTimeout {

  private final Thread thread;
  private final RunningTask task;
  private boolean armed = true;
  private boolean fired;
  private ScheduledFuture<?> timer;

  private HandlerTimeout(Thread thread, RunningTask task) {
    this.thread = thread;
    this.task = task;
  }

  /**
   * Arms a timeout for the calling thread's handler run.
   *
   * @param timers the scheduler that fires it
   * @param after the timeout
   * @param task the task run (its heartbeats stop when it fires)
   * @return the armed timeout
   */
  static HandlerTimeout arm(ScheduledExecutorService timers, Duration after, RunningTask task) {
    HandlerTimeout t = new HandlerTimeout(Thread.currentThread(), task);
    ScheduledFuture<?> f = timers.schedule(t::fire, after.toNanos(), TimeUnit.NANOSECONDS);
    synchronized (t) {
      t.timer = f;
    }
    return t;
  }

  private synchronized void fire() {
    if (armed) {
      armed = false;
      fired = true;
      // a handler that ignores the interrupt keeps its thread, but not the task: its lease runs
      // out and another claim takes it over as a failed attempt
      task.beating = false;
      thread.interrupt();
    }
  }

  /**
   * Disarms the timeout; on the thread that armed it, after the handler's run.
   *
   * @return whether it fired (the run timed out); its interrupt is then cleared
   */
  synchronized boolean disarm() {
    armed = false;
    if (timer != null) {
      timer.cancel(false);
    }
    if (fired) {
      Thread.interrupted(); // the interrupt was ours, not the pool's stop
    }
    return fired;
  }
}

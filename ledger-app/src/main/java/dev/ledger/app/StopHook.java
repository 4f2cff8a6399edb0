package dev.ledger.app;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * How the long-running commands ({@code work}, {@code feed}) stop on SIGTERM or Ctrl-C: a JVM
 * shutdown hook that asks the command to stop and waits, bounded, for it to finish what it has in
 * hand; the JVM then exits with its status for the signal (143 for SIGTERM).
 *
 * <pre>{@code
 * StopHook.untilStopped("ledger-work-shutdown", () -> {}, pool::close);  // until SIGTERM
 *
 * try (StopHook stop = StopHook.install("ledger-feed-shutdown", lease)) {
 *   while (!stop.requested()) { ... one batch ... }
 * }
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class StopHook implements AutoCloseable {

  private final AtomicBoolean requested = new AtomicBoolean();
  private final CountDownLatch done = new CountDownLatch(1);
  private final Thread hook;

  private StopHook(String name, java.time.Duration wait) {
    this.hook =
        new Thread(
            () -> {
              requested.set(true);
              try {
                done.await(wait.toMillis(), TimeUnit.MILLISECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            name);
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /**
   * Installs a hook that, on SIGTERM, sets {@link #requested()} and waits for {@link #close()} (at
   * most {@code wait}) before the JVM goes on shutting down.
   *
   * @param name the hook thread's name
   * @param wait how long the hook waits for the command to finish its step, positive
   * @return the hook; close it when the command ends (it is then removed)
   */
  public static StopHook install(String name, java.time.Duration wait) {
    return new StopHook(name, wait);
  }

  /**
   * Installs the hook, runs {@code start}, and blocks until SIGTERM (or Ctrl-C): the hook then runs
   * {@code stop}, which finishes what is in hand (closing a pool, a runner), and the JVM exits with
   * the signal's status.
   *
   * @param name the hook thread's name
   * @param start what to run once the hook is installed (start a runner, print a line)
   * @param stop what the hook runs, on the hook's thread
   * @throws InterruptedException when this thread is interrupted while it waits
   */
  public static void untilStopped(String name, Runnable start, Runnable stop)
      throws InterruptedException {
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    stop.run();
                  } finally {
                    stopped.countDown();
                  }
                },
                name));
    start.run();
    stopped.await();
  }

  /**
   * Whether a stop was asked for.
   *
   * @return true after SIGTERM (or Ctrl-C)
   */
  public boolean requested() {
    return requested.get();
  }

  /** The command's step is done: the hook may let the JVM go on; the hook is removed. */
  @Override
  public void close() {
    done.countDown();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // the JVM is shutting down: the hook is running
    }
  }
}

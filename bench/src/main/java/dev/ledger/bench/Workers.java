package dev.ledger.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/** Runs a body on several threads at once and times it; the first failure fails the run. */
final class Workers {

  /** One unit of work of one worker. */
  @FunctionalInterface
  interface Step {
    /**
     * Does one step.
     *
     * @param worker the worker's number, 0 based
     * @param i the step's number within the worker, 0 based
     * @return how many items the step did (tasks, cycles), 0 when it found nothing to do
     * @throws Exception any failure, which stops the run
     */
    long run(int worker, long i) throws Exception;
  }

  private Workers() {}

  /**
   * Runs {@code steps} steps on each of {@code workers} threads.
   *
   * @param workers threads
   * @param steps steps per thread
   * @param step the body
   * @return items per second over the wall time of the whole run
   * @throws Exception the first failure of any worker
   */
  static double fixed(int workers, long steps, Step step) throws Exception {
    AtomicLong items = new AtomicLong();
    long t0 = System.nanoTime();
    run(
        workers,
        w -> {
          for (long i = 0; i < steps; i++) {
            items.addAndGet(step.run(w, i));
          }
        });
    return items.get() / ((System.nanoTime() - t0) / 1e9);
  }

  /**
   * Runs steps on each of {@code workers} threads until {@code duration} has passed.
   *
   * @param workers threads
   * @param duration how long
   * @param step the body; a step that returns 0 fails the run (the workload ran dry)
   * @return items per second
   * @throws Exception the first failure of any worker
   */
  static double timed(int workers, Duration duration, Step step) throws Exception {
    AtomicLong items = new AtomicLong();
    AtomicBoolean stop = new AtomicBoolean();
    long t0 = System.nanoTime();
    long end = t0 + duration.toNanos();
    run(
        workers,
        w -> {
          for (long i = 0; !stop.get(); i++) {
            long n = step.run(w, i);
            if (n == 0) {
              stop.set(true);
              throw new BenchFailure("the workload ran dry: seed more tasks for this benchmark");
            }
            items.addAndGet(n);
            if (System.nanoTime() >= end) {
              stop.set(true);
            }
          }
        });
    return items.get() / ((System.nanoTime() - t0) / 1e9);
  }

  @FunctionalInterface
  private interface Body {
    void run(int worker) throws Exception;
  }

  private static void run(int workers, Body body) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(workers);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int w = 0; w < workers; w++) {
        int worker = w;
        futures.add(
            pool.submit(
                () -> {
                  body.run(worker);
                  return null;
                }));
      }
      for (Future<?> f : futures) {
        try {
          f.get();
        } catch (ExecutionException e) {
          if (e.getCause() instanceof Exception x) {
            throw x;
          }
          throw e;
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }
}

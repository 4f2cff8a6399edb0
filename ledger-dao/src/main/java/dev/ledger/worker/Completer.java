package dev.ledger.worker;

import dev.ledger.CompletedBatch;
import dev.ledger.Completion;
import dev.ledger.InvalidInputException;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.LedgerStorageException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;

/**
 * The completion of a pool's finished tasks (handlers that returned {@link Outcome.Done}), on a
 * thread of its own, in batches: one {@link WorkerPort#completeAvailable} (one transaction) per
 * ledger and domain per batch, so the completions of one pool share a commit while each task still
 * gets its own fenced {@code completed} event. A task whose lease was lost meanwhile is counted
 * lost, its result dropped. A batch never waits for a row another transaction holds ({@link
 * WorkerPort#completeAvailable}): such a task is tried again on its own later, and so is every task
 * of a batch the database failed (a dropped connection, a restart), with a doubling backoff while
 * its lease lasts; a retry that finds the task completed under its own lease (the first commit went
 * through after all) counts it completed. When a batch is refused otherwise, each of its tasks is
 * completed on its own, so one bad completion (a handoff the ledger refuses, recorded as that
 * attempt's failure) does not sink the others. Each task is handed back (no longer held) once its
 * completion is settled.
 */
final class Completer {

  /** Records a finished task's attempt as failed (its result was refused). */
  interface Failure {

    /**
     * Records the failure.
     *
     * @param r the task
     * @param error the attempt's error
     * @param took how long the handler ran
     */
    void record(RunningTask r, String error, Duration took);
  }

  /**
   * A handler that returned {@link Outcome.Done}, waiting for its completion.
   *
   * @param tries how many times its completion was tried and must be tried again
   * @param dueNanos when to try it again ({@link System#nanoTime()}); 0 for a first try
   */
  private record Finished(
      RunningTask running, String handoff, Duration took, int tries, long dueNanos) {}

  /** How long the thread waits for finished tasks before it looks at the pool's state again. */
  private static final Duration IDLE_WAIT = Duration.ofMillis(100);

  /** The wait before a completion's first retry; it doubles with each retry. */
  static final Duration FIRST_RETRY = Duration.ofMillis(100);

  /** The longest wait between two tries of a completion. */
  static final Duration LAST_RETRY = Duration.ofSeconds(2);

  /** What one {@link WorkerPort#completeAvailable} covers: a tenant (or none) and a domain. */
  private record Group(String tenant, String domain) {}

  private final Logger log;
  private final String label;
  private final String holder;
  private final WorkerMetrics metrics;
  private final Function<RunningTask, Ledger> ledgers;
  private final Consumer<RunningTask> handBack;
  private final Failure failure;
  private final BlockingQueue<Finished> finished = new LinkedBlockingQueue<>();

  /** Completions to try again, soonest first: the completer thread's own. */
  private final PriorityQueue<Finished> deferred =
      new PriorityQueue<>(Comparator.comparingLong(Finished::dueNanos));

  /**
   * Tasks whose handler returned done and whose completion is not yet written (queued, or in the
   * batch being completed): a closing pool waits for these and never releases them.
   */
  private final AtomicInteger awaiting = new AtomicInteger();

  private Thread thread;

  Completer(
      Logger log,
      String label,
      String holder,
      WorkerMetrics metrics,
      Function<RunningTask, Ledger> ledgers,
      Consumer<RunningTask> handBack,
      Failure failure) {
    this.log = log;
    this.label = label;
    this.holder = holder;
    this.metrics = metrics;
    this.ledgers = ledgers;
    this.handBack = handBack;
    this.failure = failure;
  }

  /**
   * Starts the thread; it runs until {@code closed} says so and nothing waits.
   *
   * @param name the thread's name
   * @param closed whether the pool is closed
   */
  void start(String name, BooleanSupplier closed) {
    thread = new Thread(() -> complete(closed), name);
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * Queues a finished task for completion.
   *
   * @param r the task
   * @param handoff the handler's handoff
   * @param took how long the handler ran
   */
  void add(RunningTask r, String handoff, Duration took) {
    awaiting.incrementAndGet();
    finished.add(new Finished(r, handoff, took, 0, 0));
  }

  /** Whether completions wait or are being written. */
  boolean busy() {
    return awaiting.get() > 0;
  }

  /** Interrupts the thread (it completes what waits, then ends) and waits up to the timeout. */
  void stop(Duration timeout) {
    TaskRunner.join(thread, timeout);
  }

  private void complete(BooleanSupplier closed) {
    List<Finished> batch = new ArrayList<>();
    boolean stopping = false;
    while (true) {
      batch.clear();
      long now = System.nanoTime();
      while (!deferred.isEmpty() && (stopping || deferred.peek().dueNanos() - now <= 0)) {
        batch.add(deferred.poll());
      }
      if (batch.isEmpty()) {
        long waitNanos =
            deferred.isEmpty()
                ? IDLE_WAIT.toNanos()
                : Math.min(IDLE_WAIT.toNanos(), Math.max(1, deferred.peek().dueNanos() - now));
        Finished first;
        try {
          first = finished.poll(waitNanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
          // stopped: what waits is tried once more, nothing is tried again after that
          stopping = true;
          first = finished.poll();
        }
        if (first == null) {
          if (deferred.isEmpty() && (stopping || closed.getAsBoolean())) {
            return;
          }
          continue;
        }
        batch.add(first);
      }
      finished.drainTo(batch, 255);
      Map<Group, List<Finished>> groups = new LinkedHashMap<>();
      for (Finished f : batch) {
        RunningTask r = f.running();
        groups.computeIfAbsent(new Group(r.tenant, r.domain), g -> new ArrayList<>()).add(f);
      }
      for (List<Finished> group : groups.values()) {
        completeGroup(group, stopping);
      }
    }
  }

  private void completeGroup(List<Finished> fs, boolean stopping) {
    RunningTask one = fs.get(0).running();
    String domain = one.domain;
    CompletedBatch result;
    try {
      List<Completion> cs = new ArrayList<>(fs.size());
      for (Finished f : fs) {
        cs.add(new Completion(f.running().lease(), f.handoff()));
      }
      result = ledgers.apply(one).worker().completeAvailable(domain, cs);
    } catch (LedgerStorageException ex) {
      // the database failed the batch (a dropped connection, a restart): nothing was written, or
      // the commit's outcome is unknown; both are tried again while the leases last, and a task
      // found completed under its own lease then counts as completed
      for (Finished f : fs) {
        again(f, ex.getMessage(), stopping);
      }
      return;
    } catch (RuntimeException ex) {
      // one bad completion (a handoff over the limit, say) must not sink the batch's others:
      // each is completed on its own, and a refused one is recorded as its failed attempt
      log.debug(
          "{} {}: completing {} tasks of {}{} together failed; one by one",
          label,
          holder,
          fs.size(),
          domain,
          one.of(),
          ex);
      for (Finished f : fs) {
        completeAlone(f, stopping);
      }
      return;
    }
    Map<String, Finished> byTask = new HashMap<>();
    for (Finished f : fs) {
      byTask.put(f.running().claimed.taskId(), f);
    }
    for (Lease l : result.completed()) {
      completed(byTask.get(l.taskId()));
    }
    for (Lease l : result.refused()) {
      lost(byTask.get(l.taskId()));
    }
    for (Completion c : result.busy()) {
      again(byTask.get(c.lease().taskId()), "its row is held by another transaction", stopping);
    }
  }

  /**
   * Completes one finished task on its own, after its batch failed: a handoff the ledger refuses
   * ({@link InvalidInputException}) becomes the attempt's error, retried or ended as a dead letter
   * like a handler's failure; a lost lease is counted; a busy row or a database failure is tried
   * again while the lease lasts; anything else leaves the lease to run out.
   */
  private void completeAlone(Finished f, boolean stopping) {
    RunningTask r = f.running();
    try {
      CompletedBatch result =
          ledgers
              .apply(r)
              .worker()
              .completeAvailable(r.domain, List.of(new Completion(r.lease(), f.handoff())));
      if (!result.completed().isEmpty()) {
        completed(f);
      } else if (!result.refused().isEmpty()) {
        lost(f);
      } else {
        again(f, "its row is held by another transaction", stopping);
      }
    } catch (LedgerStorageException e) {
      again(f, e.getMessage(), stopping);
    } catch (InvalidInputException e) {
      try {
        failure.record(r, "its result was refused: " + e.getMessage(), f.took());
      } catch (RuntimeException again) {
        log.warn(
            "{} {}: task {}{}'s result was refused ({}) and its failure could not be recorded;"
                + " its lease runs out",
            label,
            holder,
            r.claimed.taskId(),
            r.of(),
            e.getMessage(),
            again);
      } finally {
        done(f);
      }
    } catch (RuntimeException e) {
      log.warn(
          "{} {}: completing task {}{} failed; its lease runs out",
          label,
          holder,
          r.claimed.taskId(),
          r.of(),
          e);
      done(f);
    }
  }

  /**
   * Tries a completion again later, after a backoff that doubles from {@link #FIRST_RETRY} up to
   * {@link #LAST_RETRY}, while the lease lasts past that time; else (or when the pool stops) gives
   * it up: its lease runs out, and the task is claimed again as a new attempt.
   */
  private void again(Finished f, String why, boolean stopping) {
    RunningTask r = f.running();
    Duration backoff = FIRST_RETRY.multipliedBy(1L << Math.min(f.tries(), 10));
    if (backoff.compareTo(LAST_RETRY) > 0) {
      backoff = LAST_RETRY;
    }
    if (stopping || !Instant.now().plus(backoff).isBefore(r.lease().until())) {
      log.warn(
          "{} {}: completing task {}{} failed {} time(s), last because {}; its lease runs out"
              + " at {}",
          label,
          holder,
          r.claimed.taskId(),
          r.of(),
          f.tries() + 1,
          why,
          r.lease().until());
      done(f);
      return;
    }
    if (f.tries() == 0) {
      log.debug(
          "{} {}: completing task {}{} failed ({}); trying again while its lease lasts",
          label,
          holder,
          r.claimed.taskId(),
          r.of(),
          why);
    }
    metrics.completionRetried(r.domain);
    deferred.add(
        new Finished(
            r, f.handoff(), f.took(), f.tries() + 1, System.nanoTime() + backoff.toNanos()));
  }

  private void completed(Finished f) {
    metrics.handled(f.running().domain, "completed", f.took());
    metrics.completed(f.running().domain);
    done(f);
  }

  private void lost(Finished f) {
    String domain = f.running().domain;
    metrics.handled(domain, "lost", f.took());
    metrics.leaseLost(domain);
    log.warn(
        "{} {}: task {}{} finished after its lease was lost; result dropped",
        label,
        holder,
        f.running().claimed.taskId(),
        f.running().of());
    done(f);
  }

  /** The task's completion is settled (written, refused or given up): it is no longer held. */
  private void done(Finished f) {
    handBack.accept(f.running());
    awaiting.decrementAndGet();
  }
}

package dev.ledger.worker;

import dev.ledger.Completion;
import dev.ledger.InvalidInputException;
import dev.ledger.Lease;
import dev.ledger.LeaseLostException;
import dev.ledger.Ledger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * thread of its own, in batches: one {@link Ledger#completeAll} (one transaction) per ledger and
 * domain per batch, so the completions of one pool share a commit while each task still gets its
 * own fenced {@code completed} event. A task whose lease was lost meanwhile is counted lost, its
 * result dropped. When a batch fails, each of its tasks is completed on its own, so one bad
 * completion (a handoff the ledger refuses, recorded as that attempt's failure) does not sink the
 * others. Each task is handed back (no longer held) once its batch is done.
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

  /** A handler that returned {@link Outcome.Done}, waiting for its completion. */
  private record Finished(RunningTask running, String handoff, Duration took) {}

  /** What one {@link Ledger#completeAll} covers: a tenant (or none) and a domain. */
  private record Group(String tenant, String domain) {}

  private final Logger log;
  private final String label;
  private final String holder;
  private final WorkerMetrics metrics;
  private final Function<RunningTask, Ledger> ledgers;
  private final Consumer<RunningTask> handBack;
  private final Failure failure;
  private final BlockingQueue<Finished> finished = new LinkedBlockingQueue<>();

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
    finished.add(new Finished(r, handoff, took));
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
    while (true) {
      Finished first;
      try {
        first = finished.poll(100, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        first = finished.poll();
        if (first == null) {
          return;
        }
      }
      if (first == null) {
        if (closed.getAsBoolean()) {
          return;
        }
        continue;
      }
      batch.clear();
      batch.add(first);
      finished.drainTo(batch, 255);
      Map<Group, List<Finished>> groups = new LinkedHashMap<>();
      for (Finished f : batch) {
        RunningTask r = f.running();
        groups.computeIfAbsent(new Group(r.tenant, r.domain), g -> new ArrayList<>()).add(f);
      }
      groups.values().forEach(this::completeGroup);
    }
  }

  private void completeGroup(List<Finished> fs) {
    RunningTask one = fs.get(0).running();
    String domain = one.domain;
    try {
      List<Completion> cs = new ArrayList<>(fs.size());
      for (Finished f : fs) {
        cs.add(new Completion(f.running().lease(), f.handoff()));
      }
      Set<String> lost = new HashSet<>();
      for (Lease l : ledgers.apply(one).completeAll(domain, cs)) {
        lost.add(l.taskId());
      }
      for (Finished f : fs) {
        if (lost.contains(f.running().claimed.taskId())) {
          metrics.handled(domain, "lost", f.took());
          metrics.leaseLost(domain);
          log.warn(
              "{} {}: task {}{} finished after its lease was lost; result dropped",
              label,
              holder,
              f.running().claimed.taskId(),
              f.running().of());
        } else {
          metrics.handled(domain, "completed", f.took());
          metrics.completed(domain);
        }
      }
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
      fs.forEach(this::completeAlone);
    } finally {
      fs.forEach(f -> handBack.accept(f.running()));
      awaiting.addAndGet(-fs.size());
    }
  }

  /**
   * Completes one finished task in a transaction of its own, after its batch failed: a handoff the
   * ledger refuses ({@link InvalidInputException}) becomes the attempt's error, retried or ended as
   * a dead letter like a handler's failure; a lost lease is counted; anything else leaves the lease
   * to run out (a database that is down refuses the failure record too).
   */
  private void completeAlone(Finished f) {
    RunningTask r = f.running();
    try {
      ledgers.apply(r).complete(r.lease(), f.handoff());
      metrics.handled(r.domain, "completed", f.took());
      metrics.completed(r.domain);
    } catch (LeaseLostException e) {
      metrics.handled(r.domain, "lost", f.took());
      metrics.leaseLost(r.domain);
      log.warn("{} {}: {}", label, holder, e.getMessage());
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
      }
    } catch (RuntimeException e) {
      log.warn(
          "{} {}: completing task {}{} failed; its lease runs out",
          label,
          holder,
          r.claimed.taskId(),
          r.of(),
          e);
    }
  }
}

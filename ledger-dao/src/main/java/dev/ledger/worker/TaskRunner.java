package dev.ledger.worker;

import dev.ledger.ClaimedTask;
import dev.ledger.Claimer;
import dev.ledger.FailureRecord;
import dev.ledger.InvalidInputException;
import dev.ledger.Lease;
import dev.ledger.LeaseLostException;
import dev.ledger.Ledger;
import dev.ledger.LedgerStorageException;
import dev.ledger.Pickup;
import dev.ledger.Task;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;

/**
 * The task execution path both pools share ({@link WorkerPool}, {@link TenantWorkerPool}): the
 * claim of a batch (one statement, {@link WorkerPort#claimTasks}, timed for {@link
 * WorkerMetrics#claimed}) and, when needed, how each task came to be claimable ({@link
 * WorkerPort#pickups}), and after a claim whose commit outcome was unknown the give-back of the
 * tasks it may have claimed that never reached the pool (released at the domain's next claim, so
 * they run as the same attempt instead of waiting for their lease and counting as a crash); the
 * worker threads (prestarted) and the heartbeat sweep (one timer task beats every running task that
 * is due); per task the crash count (a claim that took over an expired lease is a failed attempt,
 * the handler not run), the handler's run under heartbeats (a refused one marks the lease lost and
 * interrupts the handler), the failure recorded with retry, backoff or dead letter ({@link
 * WorkerPort#fail}), the completion handed to the {@link Completer}, and the meters; at close, the
 * wait for running handlers and the release of what is left. What a pool decides itself (which
 * ledger a task is of, its handler, what a retry's time or a task's end means to its dispatcher) it
 * says through {@link Pool}.
 *
 * <p>Size: over 600 lines, one class on purpose: claiming, running, heartbeating, recording and
 * closing all read and change the same {@link RunningTask} states under one set of rules (a task is
 * run, released or dropped exactly once); split, those rules would be spread over classes.
 */
final class TaskRunner {

  /** What the runner asks of its pool. */
  interface Pool {

    /**
     * The ledger a task is of.
     *
     * @param r the task
     * @return its ledger
     */
    Ledger ledger(RunningTask r);

    /**
     * Runs the pool's handler of a task.
     *
     * @param r the task
     * @param task the task as claimed
     * @param ctx its context
     * @return the handler's outcome, null for none
     * @throws Exception what the handler threw
     */
    Outcome handle(RunningTask r, Task task, TaskContext ctx) throws Exception;

    /**
     * A failure filed a retry, to be admitted at its time.
     *
     * @param r the failed task
     * @param at when the retry may run
     */
    void retryFiled(RunningTask r, Instant at);

    /**
     * A task is no longer held (its outcome recorded, or given up): its thread is free.
     *
     * @param r the task
     */
    void done(RunningTask r);

    /**
     * Whether the pool still starts handlers: false once its close began, when a task that waited
     * for a thread is given back instead.
     *
     * @return true while the pool runs
     */
    boolean accepting();
  }

  private final Logger log;
  private final String label;
  private final String holder;
  private final Claimer claimer;
  private final Duration lease;
  private final Duration heartbeatEvery;
  private final RetryPolicy retry;
  private final WorkerMetrics metrics;
  private final Pool pool;
  private final Set<RunningTask> running = ConcurrentHashMap.newKeySet();

  /**
   * The ids of the last {@value #REMEMBERED} tasks handed to a thread: a task of ours among them
   * may have run, so it is never given back as a claim that did not reach the pool.
   */
  private final Set<String> submitted =
      java.util.Collections.synchronizedSet(
          java.util.Collections.newSetFromMap(
              new java.util.LinkedHashMap<String, Boolean>() {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                  return size() > REMEMBERED;
                }
              }));

  /** How many submitted task ids {@link #submitted} keeps. */
  static final int REMEMBERED = 10_000;

  /**
   * The domains (as {@link #key tenant and domain}) where a claim's commit outcome was unknown and
   * the tasks it may have claimed were not yet given back ({@link #giveBackUnreached}).
   */
  private final Set<String> unsettled = ConcurrentHashMap.newKeySet();

  private volatile boolean closed;
  private ThreadPoolExecutor workers;
  private ScheduledThreadPoolExecutor timers;
  private Completer completer;

  /**
   * A runner, not started.
   *
   * @param log the pool's logger
   * @param label how its log lines begin, e.g. {@code ledger worker}
   * @param settings the pool's settings
   * @param pool the pool
   */
  /** The error class of a failure the handler returned ({@link Outcome#failed}). */
  static final String RETURNED_FAILURE = "Outcome.failed";

  /** The error class of a run past the handler timeout ({@link PoolBuilder#handlerTimeout}). */
  static final String TIMED_OUT = "timed out";

  /** How long a handler may run, or null ({@link PoolBuilder#handlerTimeout}). */
  private final Duration handlerTimeout;

  /** Each task's own handler timeout, or null ({@link PoolBuilder#handlerTimeoutOf}). */
  private final java.util.function.Function<? super Task, Duration> handlerTimeoutOf;

  /** Whether log lines may carry a failure's text ({@link PoolBuilder#logTaskText}). */
  private final boolean logTaskText;

  TaskRunner(Logger log, String label, PoolSettings settings, Pool pool) {
    this.log = log;
    this.label = label;
    this.holder = settings.holder();
    // checked once here, taken whole by every claim
    this.claimer =
        Claimer.of(settings.holder())
            .lease(settings.lease())
            .manifest(settings.manifest())
            .handling(settings.handling());
    this.lease = settings.lease();
    this.heartbeatEvery = settings.lease().dividedBy(3);
    this.retry = settings.retry();
    this.metrics = settings.metrics();
    this.logTaskText = settings.logTaskText();
    this.handlerTimeout = settings.handlerTimeout();
    this.handlerTimeoutOf = settings.handlerTimeoutOf();
    this.pool = pool;
  }

  /**
   * Starts the worker threads ({@code prefix-1} ...), the heartbeat scheduler ({@code
   * prefix-heartbeat}) and the completer ({@code prefix-complete}).
   *
   * @param prefix the threads' name prefix
   * @param concurrency worker threads
   * @param queued tasks that may wait for a thread
   */
  void start(String prefix, int concurrency, int queued) {
    AtomicInteger n = new AtomicInteger();
    workers =
        new ThreadPoolExecutor(
            concurrency,
            concurrency,
            0,
            TimeUnit.MILLISECONDS,
            new LinkedBlockingQueue<>(Math.max(1, queued)),
            daemon(() -> prefix + "-" + n.incrementAndGet()));
    // started now, not on the first tasks: a thread's start is on the first pickups' path
    workers.prestartAllCoreThreads();
    ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(1, daemon(() -> prefix + "-heartbeat"));
    timer.setRemoveOnCancelPolicy(true);
    timers = timer;
    // one sweep beats every running task whose beat is due: no timer task (and no wake-up of the
    // timer thread) per task
    long sweep = Math.max(1, heartbeatEvery.toMillis() / 4);
    timers.scheduleWithFixedDelay(this::sweep, sweep, sweep, TimeUnit.MILLISECONDS);
    completer =
        new Completer(
            log,
            label,
            holder,
            metrics,
            pool::ledger,
            this::finished,
            (r, error, took) ->
                record(
                    r,
                    r.context,
                    Outcome.failed(error),
                    took,
                    InvalidInputException.class.getName()));
    completer.start(prefix + "-complete", () -> closed);
  }

  /**
   * The heartbeat scheduler, for a pool's own periodic work.
   *
   * @return the scheduler
   */
  ScheduledExecutorService timers() {
    return timers;
  }

  /**
   * How many tasks are held now (claimed: running, waiting for a thread, or being completed).
   *
   * @return the count
   */
  int inFlight() {
    return running.size();
  }

  /**
   * Claims up to {@code ask} tasks of a domain in one statement, and reads how they came to be
   * claimable when that is used (pickup latency wanted, or a task claimed before: is this claim
   * taking over an expired lease?).
   *
   * @param ledger the ledger
   * @param tenant the tenant, or null
   * @param domain the domain
   * @param ask at most this many
   * @return the claimed tasks, not yet submitted
   * @throws LedgerStorageException when the database fails the claim (or the give-back of an
   *     earlier claim whose commit outcome was unknown, which the next claim tries again)
   */
  List<RunningTask> claim(Ledger ledger, String tenant, String domain, int ask) {
    String key = key(tenant, domain);
    if (unsettled.contains(key)) {
      // a database failure here fails this claim too, and the next claim tries again
      giveBackUnreached(ledger, tenant, domain);
      unsettled.remove(key);
    }
    long t0 = System.nanoTime();
    List<ClaimedTask> claimed;
    try {
      // one statement claims, logs the claims and returns the rows: no second read
      claimed = ledger.worker().claimTasks(domain, claimer, ask);
    } catch (LedgerStorageException e) {
      if (e.outcomeUnknown()) {
        // the server may have committed the claims: tasks held by this pool that no thread runs,
        // which would wait for their lease and then count as a failed attempt
        unsettled.add(key);
      }
      throw e;
    }
    metrics.claimed(domain, claimed.size(), Duration.ofNanos(System.nanoTime() - t0));
    if (claimed.isEmpty()) {
      return List.of();
    }
    Map<String, Pickup> pickups =
        pickups(ledger, domain, claimed.stream().map(ClaimedTask::lease).toList());
    List<RunningTask> out = new ArrayList<>(claimed.size());
    for (ClaimedTask c : claimed) {
      out.add(
          new RunningTask(tenant, domain, c.lease(), c.task(), pickups.get(c.lease().taskId())));
    }
    return out;
  }

  /**
   * Gives back the tasks of a domain this pool's holder holds that no thread of this pool runs or
   * ran: claimed by a claim whose commit succeeded while its answer was lost. Each is released
   * under its lease (holder and attempt as the row holds them), so the next claim runs it as the
   * same attempt; a release refused because the task was completed, released or re-claimed
   * meanwhile is nothing to give back.
   *
   * @throws LedgerStorageException when the database fails the read or a release
   */
  private void giveBackUnreached(Ledger ledger, String tenant, String domain) {
    Set<String> held = new java.util.HashSet<>();
    for (RunningTask r : running) {
      held.add(r.claimed.taskId());
    }
    int given = 0;
    for (Task t : ledger.list(domain, dev.ledger.Status.CLAIMED)) {
      if (!holder.equals(t.holder()) || held.contains(t.id()) || submitted.contains(t.id())) {
        continue;
      }
      try {
        ledger.release(new Lease(t.id(), holder, t.attempts(), t.leaseUntil()));
        given++;
      } catch (LeaseLostException e) {
        // completed, released or claimed again since the read: not held by this pool
      }
    }
    if (given > 0) {
      log.info(
          "{} {}: released {} tasks of {}{} that a claim whose commit outcome was unknown had"
              + " claimed; they run as the same attempt",
          label,
          holder,
          given,
          domain,
          tenant == null ? "" : " of tenant " + tenant);
    }
  }

  /** A domain's key in {@link #unsettled}: its tenant (empty for none) and its name. */
  private static String key(String tenant, String domain) {
    return (tenant == null ? "" : tenant) + "\u0000" + domain;
  }

  private Map<String, Pickup> pickups(Ledger ledger, String domain, List<Lease> leases) {
    boolean reclaimed = leases.stream().anyMatch(l -> l.attempt() > 1);
    if (!metrics.wantsPickup() && !reclaimed) {
      return Map.of();
    }
    return ledger.worker().pickups(domain, leases.stream().map(Lease::taskId).toList());
  }

  /**
   * Hands a claimed task to a worker thread; on a refusal gives it up (released) and throws.
   *
   * @param r the task
   */
  void submit(RunningTask r) {
    // a prefetched task is beaten while it waits for a thread too: it may wait longer than its
    // lease when handlers are slow, and an expired lease would be claimed again (by this very
    // pool) and counted as a failed attempt
    r.nextBeat = System.nanoTime() + heartbeatEvery.toNanos();
    r.beating = true;
    running.add(r);
    submitted.add(r.claimed.taskId());
    try {
      workers.execute(() -> run(r));
    } catch (RuntimeException e) {
      finished(r);
      release(r);
      throw e;
    }
  }

  /** A task is no longer held. */
  private void finished(RunningTask r) {
    running.remove(r);
    pool.done(r);
  }

  private void run(RunningTask r) {
    boolean handedOver = false;
    try {
      if (!pool.accepting()) {
        // prefetched, not started, and the pool is stopping: give it back now instead of
        // starting work that close() would only wait for (or interrupt)
        if (r.begin()) {
          r.finish();
          release(r);
        }
        return;
      }
      if (!r.begin()) {
        return;
      }
      if (!stillHeld(r)) {
        r.finish();
        return;
      }
      Task task = r.task != null ? r.task : pool.ledger(r).get(r.claimed.taskId());
      int attempt = attemptOf(task);
      int max = task.spec().maxAttempts() > 0 ? task.spec().maxAttempts() : retry.maxAttempts();
      TaskContext ctx = new TaskContext(task, r.lease(), attempt, max);
      r.context = ctx;
      if (r.pickup != null && r.pickup.afterExpiry()) {
        // the previous holder stopped heartbeating (died or stalled) during this attempt: it
        // counts as a failed attempt, retried after its backoff or ended as a dead letter
        String error =
            "lease expired: "
                + r.pickup.expiredHolder()
                + " held the task until "
                + r.pickup.readyAt()
                + " without completing or releasing it (the worker died or stalled)";
        record(r, ctx, Outcome.failed(error), null, "lease expired");
        return;
      }
      if (r.pickup != null && metrics.wantsPickup()) {
        metrics.pickedUp(r.domain, r.pickup.latency());
      }
      // beaten by the sweep since its claim: no timer task per task on the way to the handler
      long t0 = System.nanoTime();
      Outcome outcome;
      String errorClass = RETURNED_FAILURE;
      Duration limit;
      try {
        limit = timeoutOf(task);
      } catch (RuntimeException e) {
        // the chooser's bug fails the attempt like a handler's, before the handler runs
        record(r, ctx, Outcome.failed("handler timeout: " + describe(e)), null, "handler timeout");
        return;
      }
      HandlerTimeout timeout = limit == null ? null : HandlerTimeout.arm(timers, limit, r);
      boolean timedOut = false;
      try {
        outcome = pool.handle(r, task, ctx);
        if (outcome == null) {
          outcome = Outcome.failed("the handler returned no outcome (null)");
        }
      } catch (Throwable t) {
        if (t instanceof Error
            && !(t instanceof AssertionError)
            && !(t instanceof StackOverflowError)) {
          if (logTaskText) {
            log.error("{} {}: handler of task {} threw", label, holder, task.id(), t);
          } else {
            log.error("{} {}: handler of task {} threw {}", label, holder, task.id(), t.getClass());
          }
        }
        outcome = Outcome.failed(describe(t));
        errorClass = t.getClass().getName();
      } finally {
        timedOut = timeout != null && timeout.disarm();
        r.beating = false;
        r.finish();
      }
      if (timedOut) {
        outcome = Outcome.failed("timed out after " + limit + " (the handler was interrupted)");
        errorClass = TIMED_OUT;
      }
      Duration took = Duration.ofNanos(System.nanoTime() - t0);
      if (ctx.leaseLost()) {
        metrics.handled(r.domain, "lost", took);
        return;
      }
      if (outcome instanceof Outcome.Done d) {
        completer.add(r, d.handoff(), took);
        handedOver = true;
        return;
      }
      record(r, ctx, outcome, took, errorClass);
    } catch (LeaseLostException e) {
      metrics.leaseLost(r.domain);
      log.warn("{} {}: {}", label, holder, e.getMessage());
    } catch (RuntimeException e) {
      log.warn(
          "{} {}: task {}{} could not be run or recorded; its lease runs out",
          label,
          holder,
          r.claimed.taskId(),
          r.of(),
          e);
    } finally {
      if (!handedOver) {
        finished(r);
      }
    }
  }

  /**
   * Whether a task about to start is still ours: not lost while it waited for a thread, and, when
   * its lease ran out meanwhile (heartbeats failing, say), extended now. A task that is not is
   * dropped without running: another claimer may hold it.
   */
  private boolean stillHeld(RunningTask r) {
    LeaseLostException lost = r.lostWhileQueued;
    if (lost == null && !r.lease().until().isAfter(java.time.Instant.now())) {
      try {
        r.extended(pool.ledger(r).heartbeat(r.lease(), lease));
      } catch (LeaseLostException e) {
        lost = e;
      }
    }
    if (lost == null) {
      return true;
    }
    metrics.leaseLost(r.domain);
    log.warn(
        "{} {}: task {}{} lost its lease while it waited for a thread; not run: {}",
        label,
        holder,
        r.claimed.taskId(),
        r.of(),
        lost.getMessage());
    return false;
  }

  /**
   * Records a failed attempt.
   *
   * @param errorClass what failed, for log lines without the error's text: the exception's class,
   *     {@link #RETURNED_FAILURE}, or a name of the pool's own failure
   */
  private void record(
      RunningTask r, TaskContext ctx, Outcome outcome, Duration took, String errorClass) {
    String error = ((Outcome.Failed) outcome).error();
    FailureRecord f =
        failWhileLeaseLasts(r, ctx, error.length() > 50_000 ? error.substring(0, 50_000) : error);
    if (took != null) {
      metrics.handled(r.domain, "failed", took);
    }
    metrics.failed(r.domain);
    if (f.deadLetter()) {
      metrics.dead(r.domain);
      log.warn(
          "{} {}: task {}{} is a dead letter after {} attempts: {}",
          label,
          holder,
          f.taskId(),
          r.of(),
          f.attempt(),
          logTaskText ? abbreviate(error) : errorClass + " (the error is the task's reason)");
    } else {
      metrics.retried(r.domain);
      log.debug(
          "{} {}: task {}{} attempt {} of {} failed; retry {} at {}",
          label,
          holder,
          f.taskId(),
          r.of(),
          f.attempt(),
          f.maxAttempts(),
          f.retryId(),
          f.retryAt());
      pool.retryFiled(r, f.retryAt());
    }
  }

  /**
   * Records a failed attempt, tried again after a database failure (a dropped connection, a
   * restart) with a doubling backoff while the lease lasts: the record is fenced by the lease, so a
   * retry is safe, and one that finds the lease gone because an earlier try committed after all
   * (its outcome unknown) takes that record as its own.
   *
   * @throws LeaseLostException when the lease was lost (not to an earlier try of this record)
   * @throws LedgerStorageException when the database still fails as the lease runs out
   */
  private FailureRecord failWhileLeaseLasts(RunningTask r, TaskContext ctx, String error) {
    Lease lease = ctx.lease();
    Duration backoff = Completer.FIRST_RETRY;
    boolean tried = false;
    while (true) {
      try {
        return pool.ledger(r)
            .worker()
            .fail(lease, error, retry.maxAttempts(), retry.delayAfter(ctx.attempt()));
      } catch (LeaseLostException e) {
        FailureRecord earlier = tried ? recordedBefore(r, ctx) : null;
        if (earlier == null) {
          throw e;
        }
        return earlier;
      } catch (LedgerStorageException e) {
        if (!Instant.now().plus(backoff).isBefore(lease.until())) {
          throw e;
        }
        log.debug(
            "{} {}: recording the failure of task {}{} failed ({}); trying again while its lease"
                + " lasts",
            label,
            holder,
            r.claimed.taskId(),
            r.of(),
            e.getMessage());
        metrics.failureRetried(r.domain);
        try {
          Thread.sleep(backoff.toMillis());
        } catch (InterruptedException stop) {
          Thread.currentThread().interrupt();
          throw e;
        }
        tried = true;
        backoff = backoff.multipliedBy(2);
        if (backoff.compareTo(Completer.LAST_RETRY) > 0) {
          backoff = Completer.LAST_RETRY;
        }
      }
    }
  }

  /**
   * The failure an earlier try of this attempt's record wrote, if it did: the task invalidated
   * while claimed under this lease (same holder, same attempt), with the reason a failure of this
   * attempt gets; else null.
   */
  private FailureRecord recordedBefore(RunningTask r, TaskContext ctx) {
    Lease lease = ctx.lease();
    Task t = pool.ledger(r).get(lease.taskId());
    String prefix = "attempt " + ctx.attempt() + " of ";
    if (t.status() != dev.ledger.Status.INVALIDATED
        || !lease.holder().equals(t.holder())
        || t.attempts() != lease.attempt()
        || t.reason() == null
        || !(t.reason().startsWith(prefix)
            || t.reason().startsWith(FailureRecord.DEAD_LETTER + " " + prefix))) {
      return null;
    }
    Instant retryAt =
        t.supersededBy() == null ? null : pool.ledger(r).get(t.supersededBy()).spec().notBefore();
    return new FailureRecord(
        t.id(),
        ctx.attempt(),
        ctx.maxAttempts(),
        t.reason(),
        Instant.now(),
        t.supersededBy(),
        retryAt);
  }

  /**
   * The heartbeat sweep, every quarter of the heartbeat interval on the timer thread: extends the
   * lease of each running task whose beat is due (a third of the lease after its start or its last
   * beat; at most a quarter of that late).
   */
  private void sweep() {
    try {
      long now = System.nanoTime();
      for (RunningTask r : running) {
        if (r.beating && now - r.nextBeat >= 0) {
          r.nextBeat = now + heartbeatEvery.toNanos();
          beat(r);
        }
      }
    } catch (RuntimeException e) {
      log.warn("{} {}: the heartbeat sweep failed; trying again", label, holder, e);
    }
  }

  private void beat(RunningTask r) {
    TaskContext ctx = r.context;
    if ((ctx != null && ctx.leaseLost()) || r.finished() || r.lostWhileQueued != null) {
      return;
    }
    try {
      r.extended(pool.ledger(r).heartbeat(r.lease(), lease));
    } catch (LeaseLostException e) {
      if (r.context == null) {
        // still waiting for a thread: the worker that takes it drops it (stillHeld)
        r.lostWhileQueued = e;
      } else if (!r.finished()) {
        metrics.leaseLost(r.domain);
        log.warn("{} {}: lease lost while running: {}", label, holder, e.getMessage());
        r.lose(e);
      }
      r.beating = false;
    } catch (RuntimeException e) {
      log.warn(
          "{} {}: heartbeat of task {}{} failed; trying again",
          label,
          holder,
          r.claimed.taskId(),
          r.of(),
          e);
    }
  }

  /**
   * Stops the threads: the tasks that wait for a thread are given back (the pool no longer {@link
   * Pool#accepting accepts}); waits up to {@code timeout} for the running handlers to finish and
   * their outcomes to be recorded (and at least 5 s for the completions of those that finished),
   * then interrupts the others, releases their leases and gives their threads 200 ms. The pool
   * stops claiming first.
   *
   * @param timeout how long to wait for running handlers
   * @return true when every task ended within the timeout (nothing had to be released)
   */
  boolean stop(Duration timeout) {
    workers.shutdown();
    long end = System.nanoTime() + timeout.toNanos();
    // an idle pool (nothing held) is clean however short the timeout: its threads only exit
    boolean clean = await(workers, timeout) || running.isEmpty();
    // the finished tasks' completions, in the time left (and at least a moment)
    long drainEnd = Math.max(end, System.nanoTime() + Duration.ofSeconds(5).toNanos());
    while (completer.busy() && System.nanoTime() < drainEnd) {
      pause(Duration.ofMillis(5));
    }
    // the handlers still running (a finished one awaiting its completion is the completer's)
    List<RunningTask> left = new ArrayList<>();
    int started = 0;
    for (RunningTask r : running) {
      if (!r.finished()) {
        left.add(r);
        started += r.context != null ? 1 : 0;
      }
    }
    if (!clean || !left.isEmpty()) {
      clean = false;
      log.warn(
          "{} {}: {} tasks still running and {} still waiting for a thread after {}; interrupting"
              + " them and releasing their leases",
          label,
          holder,
          started,
          left.size() - started,
          timeout);
      for (RunningTask r : left) {
        r.lose(new LeaseLostException(r.lease(), "finish", "released because its pool closed"));
        release(r);
      }
      workers.shutdownNow();
      // their leases are released: a short grace for the interrupted threads, not a second wait
      await(workers, Duration.ofMillis(200));
    }
    timers.shutdownNow();
    closed = true;
    completer.stop(Duration.ofSeconds(5));
    return clean;
  }

  /**
   * The handler timeout of one task: its own ({@link PoolBuilder#handlerTimeoutOf}), else the
   * pool's; null for none.
   *
   * @throws RuntimeException what the chooser threw, or {@link dev.ledger.InvalidInputException}
   *     naming {@code handler_timeout} when it chose a timeout out of range
   */
  private Duration timeoutOf(Task task) {
    if (handlerTimeoutOf == null) {
      return handlerTimeout;
    }
    Duration chosen = handlerTimeoutOf.apply(task);
    if (chosen == null) {
      return handlerTimeout;
    }
    PoolBuilder.checkHandlerTimeout(chosen);
    return chosen;
  }

  /**
   * Checks a close's timeout.
   *
   * @param timeout how long close waits for running handlers
   * @throws InvalidInputException naming {@code timeout} when it is null or negative
   */
  static void checkTimeout(Duration timeout) {
    if (timeout == null || timeout.isNegative()) {
      throw new dev.ledger.InvalidInputException("timeout", "must be zero or more, was " + timeout);
    }
  }

  private void release(RunningTask r) {
    try {
      pool.ledger(r).release(r.lease());
    } catch (LeaseLostException e) {
      // it finished (or was lost) meanwhile: nothing of ours is held
    } catch (RuntimeException e) {
      log.warn(
          "{} {}: releasing task {}{} failed; its lease runs out at {}",
          label,
          holder,
          r.claimed.taskId(),
          r.of(),
          r.lease().until(),
          e);
    }
  }

  /** Which attempt of its retry chain a task is ({@link dev.ledger.append.Retries#attemptOf}). */
  static int attemptOf(Task task) {
    return dev.ledger.append.Retries.attemptOf(task.spec().origin(), task.spec().upstreamEvent());
  }

  /** A throwable as the error stored: {@code ClassName: message}, with its causes. */
  static String describe(Throwable t) {
    StringBuilder b = new StringBuilder();
    int depth = 0;
    for (Throwable c = t; c != null && depth < 5; c = c.getCause(), depth++) {
      if (depth > 0) {
        b.append("; caused by ");
      }
      b.append(c.getClass().getName());
      if (c.getMessage() != null) {
        b.append(": ").append(c.getMessage());
      }
      if (c.getCause() == c) {
        break;
      }
    }
    return b.toString();
  }

  private static String abbreviate(String s) {
    return s.length() <= 300 ? s : s.substring(0, 300) + "...";
  }

  /** A factory of daemon threads named by the supplier. */
  static ThreadFactory daemon(java.util.function.Supplier<String> name) {
    return task -> {
      Thread t = new Thread(task, name.get());
      t.setDaemon(true);
      return t;
    };
  }

  private static boolean await(ExecutorService e, Duration timeout) {
    try {
      return e.awaitTermination(Math.max(0, timeout.toMillis()), TimeUnit.MILLISECONDS);
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
      return e.isTerminated();
    }
  }

  /** Interrupts a thread and waits up to {@code timeout} for it to end. */
  static void join(Thread t, Duration timeout) {
    if (t == null) {
      return;
    }
    t.interrupt();
    try {
      t.join(timeout.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Sleeps, keeping an interrupt. */
  static void pause(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

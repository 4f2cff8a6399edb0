package dev.ledger.worker;

import dev.ledger.ClaimedTask;
import dev.ledger.FailureRecord;
import dev.ledger.InvalidInputException;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.LeaseLostException;
import dev.ledger.Ledger;
import dev.ledger.Pickup;
import dev.ledger.Task;
import dev.ledger.Validation;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pool of worker threads that claims tasks of some domains, runs a {@link TaskHandler} per task,
 * and records each outcome under the task's lease. The one entry point for running tasks:
 *
 * <pre>{@code
 * WorkerPool pool = WorkerPool.builder(ledger)
 *     .dataSource(dataSource)                 // for LISTEN/NOTIFY wake-ups; polls without it
 *     .domain("payments", (task, ctx) -> {
 *       charge(task.spec().body());
 *       return Outcome.done();
 *     })
 *     .concurrency(8)
 *     .lease(Duration.ofSeconds(30))
 *     .retry(new RetryPolicy(5, Duration.ofSeconds(1), Duration.ofMinutes(5), 2.0, 0.2))
 *     .start();
 * ...
 * pool.close();                                // stops claiming, waits, releases what is left
 * }</pre>
 *
 * <p>How it runs: one dispatcher thread claims with {@link Ledger#claimBatch} as many tasks as
 * threads are free (at most {@link Builder#batchSize}), hands each to a worker thread, and waits
 * when the queue is empty (or every thread is busy and the prefetch queue full) until a wake-up: a
 * {@code NOTIFY} of the domain's channel (sent in the transaction that admits or releases a task,
 * or files a delayed one, by domain migration V7's trigger, whoever writes), a thread coming free,
 * the next delayed task's time, or the poll interval. When a notification of an admitted task
 * arrives while no claim runs, the listening thread claims itself (one thread hand-off less on the
 * way to the handler). No busy loop; at most {@code concurrency + prefetch} tasks are held. Each
 * running task's lease is extended every third of the lease (one sweep over the running tasks, a
 * quarter of that often); a refused heartbeat marks the lease lost ({@link
 * TaskContext#leaseLost()}) and interrupts the handler, whose outcome is then discarded (fencing
 * refuses it anyway).
 *
 * <p>Failures: a handler that throws or returns {@link Outcome#failed} has its error recorded with
 * {@link Ledger#fail}: the task is invalidated with the attempt, the time and the error, and a
 * retry is filed from its root ({@code retries:<root>}) to run after {@link
 * RetryPolicy#delayAfter}, until the chain's maximum; then it is a dead letter ({@link
 * Ledger#deadLetters}). A claim that takes a task over from an expired lease (its worker died or
 * stalled: {@link Ledger#pickups}) records that attempt as failed, "lease expired", without running
 * the handler, so a task that keeps killing its workers ends as a dead letter too. Delayed tasks
 * (retries, and tasks filed with a {@code notBefore}) are admitted by the pool at their time
 * ({@link Ledger#admitDue}).
 *
 * <p>{@link #close()}: stops claiming, waits up to the shutdown timeout for running handlers, then
 * interrupts the rest and releases their leases, so no task stays claimed by a closed pool (unless
 * the database is unreachable then: those leases expire). Thread-safe.
 */
public final class WorkerPool implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(WorkerPool.class);
  private static final Duration DEPTH_SAMPLE = Duration.ofSeconds(15);
  private static final Duration ERROR_PAUSE = Duration.ofSeconds(1);

  private enum State {
    NEW,
    RUNNING,
    STOPPING,
    CLOSED
  }

  private final Ledger ledger;
  private final DataSource dataSource;
  private final Map<String, TaskHandler> handlers;
  private final List<String> domains;
  private final String holder;
  private final List<String> manifest;
  private final Label handling;
  private final int concurrency;
  private final int prefetch;
  private final int batchSize;
  private final Duration lease;
  private final Duration heartbeatEvery;
  private final Duration pollInterval;
  private final RetryPolicy retry;
  private final Duration shutdownTimeout;
  private final WorkerMetrics metrics;
  private final boolean requireKnownDomains;

  private final Semaphore permits;

  /** Held while claiming (by the dispatcher, or by the listening thread when it claims itself). */
  private final ReentrantLock claiming = new ReentrantLock();

  private final Object signal = new Object();
  private boolean signalled;
  private final Map<String, DomainState> state = new LinkedHashMap<>();
  private final Set<Running> running = ConcurrentHashMap.newKeySet();
  private final java.util.concurrent.BlockingQueue<Finished> finished = new LinkedBlockingQueue<>();

  /**
   * Tasks whose handler returned done and whose completion is not yet written (queued in {@link
   * #finished} or in the completer's batch): {@link #close} waits for these and never releases
   * them.
   */
  private final AtomicInteger awaitingCompletion = new AtomicInteger();

  private Thread completer;
  private volatile State life = State.NEW;
  private ThreadPoolExecutor workers;
  private ScheduledExecutorService timers;
  private Thread dispatcher;
  private Wakeups wakeups;

  /** What the dispatcher knows of one domain; read and written under {@link #signal}. */
  private static final class DomainState {
    boolean pending = true;
    boolean dueStale = true;
    Instant nextDue;
  }

  private WorkerPool(Builder b) {
    this.ledger = b.ledger;
    this.dataSource = b.dataSource;
    this.handlers = Map.copyOf(b.handlers);
    this.domains = List.copyOf(b.handlers.keySet());
    this.holder = b.holder != null ? b.holder : defaultHolder();
    this.manifest = List.copyOf(b.manifest);
    this.handling = b.handling;
    this.concurrency = b.concurrency;
    this.prefetch = b.prefetch >= 0 ? b.prefetch : concurrency;
    this.batchSize = b.batchSize > 0 ? b.batchSize : Math.min(concurrency + prefetch, 100);
    this.lease = b.lease;
    this.heartbeatEvery = b.lease.dividedBy(3);
    this.pollInterval = b.pollInterval;
    this.retry = b.retry;
    this.shutdownTimeout = b.shutdownTimeout;
    this.metrics = b.metrics;
    this.requireKnownDomains = b.requireKnownDomains;
    this.permits = new Semaphore(concurrency + prefetch);
    for (String d : domains) {
      state.put(d, new DomainState());
    }
  }

  /**
   * A builder for a pool over a ledger.
   *
   * @param ledger the ledger, not null
   * @return the builder
   */
  public static Builder builder(Ledger ledger) {
    if (ledger == null) {
      throw new InvalidInputException("ledger", "must not be null");
    }
    return new Builder(ledger);
  }

  /**
   * The holder name the pool claims as.
   *
   * @return the holder
   */
  public String holder() {
    return holder;
  }

  /**
   * The domains served, in the order given.
   *
   * @return the domains
   */
  public List<String> domains() {
    return domains;
  }

  /**
   * How many tasks the pool holds now (claimed: running, waiting for a thread, or being completed).
   *
   * @return the count, 0 to {@code concurrency + prefetch}
   */
  public int inFlight() {
    return running.size();
  }

  /**
   * Whether wake-ups arrive by LISTEN/NOTIFY now (false: polling only).
   *
   * @return true when listening
   */
  public boolean listening() {
    Wakeups w = wakeups;
    return w != null && w.listening();
  }

  /**
   * Starts claiming. Checks that every domain exists first.
   *
   * @return this pool
   * @throws InvalidInputException naming {@code domains} when a domain has no schema (and the pool
   *     was not built with {@link Builder#awaitUnknownDomains()})
   * @throws IllegalStateException when started before
   */
  public synchronized WorkerPool start() {
    if (life != State.NEW) {
      throw new IllegalStateException("the pool was started before (" + life + ")");
    }
    List<String> known = ledger.domains();
    for (String d : domains) {
      if (!known.contains(d)) {
        if (requireKnownDomains) {
          throw new InvalidInputException(
              "domains",
              "unknown domain '"
                  + d
                  + "': no task was filed there and no schema provisioned. Check the spelling,"
                  + " provision it (ledger-app migrate or Ledger.provision), or build the pool with"
                  + " awaitUnknownDomains()");
        }
        LOG.warn(
            "ledger worker {}: domain '{}' does not exist (yet); the pool waits for its first task",
            holder,
            d);
      }
    }
    AtomicInteger n = new AtomicInteger();
    String prefix = "ledger-worker-" + holder;
    workers =
        new ThreadPoolExecutor(
            concurrency,
            concurrency,
            0,
            TimeUnit.MILLISECONDS,
            new LinkedBlockingQueue<>(concurrency + prefetch),
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
    if (metrics.wantsDepth()) {
      timers.scheduleWithFixedDelay(
          this::sampleDepth, 0, DEPTH_SAMPLE.toMillis(), TimeUnit.MILLISECONDS);
    }
    if (dataSource != null) {
      wakeups = new Wakeups(dataSource, domains, prefix + "-listen", this::wake);
      wakeups.start();
    }
    life = State.RUNNING;
    completer = new Thread(this::complete, prefix + "-complete");
    completer.setDaemon(true);
    completer.start();
    dispatcher = new Thread(this::dispatch, prefix + "-claim");
    dispatcher.setDaemon(true);
    dispatcher.start();
    LOG.info(
        "ledger worker {} started: domains {}, concurrency {}, prefetch {}, batch {}, lease {},"
            + " poll {}, {} attempts, wake-ups {}",
        holder,
        domains,
        concurrency,
        prefetch,
        batchSize,
        lease,
        pollInterval,
        retry.maxAttempts(),
        dataSource != null ? "LISTEN/NOTIFY" : "off (no data source)");
    return this;
  }

  /**
   * A wake-up for a domain, on the listening thread: a task became admitted (payload {@code
   * admitted}), or a delayed task was filed ({@code proposed}) or the listener reconnected (null),
   * when the next due time is read again.
   *
   * <p>For {@code admitted}, when no claim is running (the dispatcher waits), the listening thread
   * claims itself and hands the tasks to the worker threads: one thread wake-up less between the
   * admitting commit and the handler (the dispatcher is woken only when more may wait). Otherwise,
   * or when that claim fails, the dispatcher is signalled as for every other wake-up.
   */
  private void wake(String domain, String payload) {
    boolean inline = "admitted".equals(payload);
    synchronized (signal) {
      DomainState s = state.get(domain);
      if (s != null) {
        s.pending = true;
        if (!inline) {
          s.dueStale = true;
        }
      } else {
        inline = false;
      }
    }
    if (inline && life == State.RUNNING && claiming.tryLock()) {
      try {
        if (life == State.RUNNING && permits.availablePermits() > 0 && takePending(domain)) {
          claimAndSubmit(domain, permits.availablePermits());
        }
      } catch (RuntimeException e) {
        // the dispatcher claims again below, and pauses if the database keeps failing
        markPending(domain);
        LOG.debug("ledger worker {}: claiming on the listening thread failed", holder, e);
      } finally {
        claiming.unlock();
      }
    }
    synchronized (signal) {
      if (!inline || state.values().stream().anyMatch(s -> s.pending || s.dueStale)) {
        signalled = true;
        signal.notifyAll();
      }
    }
  }

  private void dispatch() {
    int start = 0;
    while (life == State.RUNNING) {
      try {
        claiming.lock();
        try {
          admitDue();
          int free = permits.availablePermits();
          for (int i = 0; i < domains.size() && free > 0 && life == State.RUNNING; i++) {
            String domain = domains.get((start + i) % domains.size());
            if (takePending(domain)) {
              free -= claimAndSubmit(domain, free);
            }
          }
        } finally {
          claiming.unlock();
        }
        start++;
        awaitWork();
      } catch (RuntimeException e) {
        if (life != State.RUNNING) {
          break;
        }
        LOG.warn("ledger worker {}: claiming failed, retrying in {}", holder, ERROR_PAUSE, e);
        pause(ERROR_PAUSE);
        synchronized (signal) {
          state.values().forEach(s -> s.pending = true);
        }
      }
    }
  }

  /**
   * Claims up to {@code free} tasks of a domain (at most a batch) and hands each to a worker
   * thread; marks the domain pending again after a full batch. Called holding {@link #claiming}.
   *
   * @return how many were claimed
   */
  private int claimAndSubmit(String domain, int free) {
    int ask = Math.min(free, batchSize);
    long t0 = System.nanoTime();
    // one statement claims, logs the claims and returns the rows: no second read
    List<ClaimedTask> claimed = ledger.claimTasks(domain, holder, lease, manifest, handling, ask);
    metrics.claimed(domain, claimed.size(), Duration.ofNanos(System.nanoTime() - t0));
    if (claimed.size() == ask) {
      markPending(domain); // a full batch: there may be more
    }
    if (claimed.isEmpty()) {
      return 0;
    }
    Map<String, Pickup> pickups =
        pickups(domain, claimed.stream().map(ClaimedTask::lease).toList());
    for (ClaimedTask c : claimed) {
      permits.acquireUninterruptibly();
      submit(domain, c.lease(), c.task(), pickups.get(c.lease().taskId()));
    }
    return claimed.size();
  }

  /** Admits the delayed tasks whose time has come, and learns each domain's next time. */
  private void admitDue() {
    Instant now = Instant.now();
    for (String domain : domains) {
      boolean check;
      synchronized (signal) {
        DomainState s = state.get(domain);
        check = s.dueStale || (s.nextDue != null && !now.isBefore(s.nextDue));
        s.dueStale = false;
      }
      if (!check) {
        continue;
      }
      int admitted = 0;
      List<String> ids;
      do {
        ids = ledger.admitDue(domain, 1000);
        admitted += ids.size();
      } while (ids.size() == 1000 && life == State.RUNNING);
      Instant next = ledger.nextDue(domain).orElse(null);
      synchronized (signal) {
        DomainState s = state.get(domain);
        s.nextDue = next;
        if (admitted > 0) {
          s.pending = true;
        }
      }
    }
  }

  private boolean takePending(String domain) {
    synchronized (signal) {
      DomainState s = state.get(domain);
      boolean p = s.pending;
      s.pending = false;
      return p;
    }
  }

  private void markPending(String domain) {
    synchronized (signal) {
      state.get(domain).pending = true;
    }
  }

  /**
   * Waits until there is something to do: a domain pending while a thread is free, a signal, the
   * next delayed task's time, or the poll interval (after which every domain is pending again).
   */
  private void awaitWork() {
    synchronized (signal) {
      long deadline = System.nanoTime() + pollInterval.toNanos();
      while (life == State.RUNNING) {
        boolean anyPending = state.values().stream().anyMatch(s -> s.pending || s.dueStale);
        if (anyPending && permits.availablePermits() > 0) {
          return;
        }
        if (signalled) {
          signalled = false;
          if (anyPending && permits.availablePermits() > 0) {
            return;
          }
        }
        long waitNanos = deadline - System.nanoTime();
        Instant due = earliestDue();
        if (due != null) {
          waitNanos = Math.min(waitNanos, Duration.between(Instant.now(), due).toNanos());
        }
        if (waitNanos <= 0) {
          if (due != null && !Instant.now().isBefore(due)) {
            return; // a delayed task's time has come
          }
          state.values().forEach(s -> s.pending = true); // the poll
          if (permits.availablePermits() > 0) {
            return;
          }
          deadline = System.nanoTime() + pollInterval.toNanos();
          continue;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(signal, waitNanos);
        } catch (InterruptedException e) {
          return; // close() interrupts to stop
        }
      }
    }
  }

  private Instant earliestDue() {
    Instant min = null;
    for (DomainState s : state.values()) {
      if (s.nextDue != null && (min == null || s.nextDue.isBefore(min))) {
        min = s.nextDue;
      }
    }
    return min;
  }

  /** One claimed task, from its claim to its recorded outcome (or its release at close). */
  private final class Running {
    final String domain;
    final Lease claimed;
    final Task task;
    final Pickup pickup;
    volatile TaskContext context;
    Thread thread;
    boolean finished;

    /** While the handler runs: heartbeats due from {@link #nextBeat} (System.nanoTime). */
    volatile boolean beating;

    volatile long nextBeat;

    Running(String domain, Lease claimed, Task task, Pickup pickup) {
      this.domain = domain;
      this.claimed = claimed;
      this.task = task;
      this.pickup = pickup;
    }

    Lease lease() {
      TaskContext c = context;
      return c != null ? c.lease() : claimed;
    }

    synchronized boolean begin() {
      if (finished) {
        return false;
      }
      thread = Thread.currentThread();
      return true;
    }

    /** Ends the handler's run; clears an interrupt the pool sent. Returns whether it ran. */
    synchronized void finish() {
      finished = true;
      thread = null;
      Thread.interrupted();
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

  /**
   * How the claimed tasks came to be claimable, read (one query) only when it is used: for the
   * pickup latency, and for a task claimed before (is this claim taking over an expired lease?).
   */
  private Map<String, Pickup> pickups(String domain, List<Lease> leases) {
    boolean reclaimed = leases.stream().anyMatch(l -> l.attempt() > 1);
    if (!metrics.wantsPickup() && !reclaimed) {
      return Map.of();
    }
    return ledger.pickups(domain, leases.stream().map(Lease::taskId).toList());
  }

  private void submit(String domain, Lease l, Task task, Pickup pickup) {
    Running r = new Running(domain, l, task, pickup);
    running.add(r);
    try {
      workers.execute(() -> run(r));
    } catch (RuntimeException e) {
      running.remove(r);
      permits.release();
      release(r);
      throw e;
    }
  }

  private void run(Running r) {
    boolean handedOver = false;
    try {
      if (life != State.RUNNING) {
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
      Task task = r.task != null ? r.task : ledger.get(r.claimed.taskId());
      int attempt = attemptOf(task);
      int max = task.spec().maxAttempts() > 0 ? task.spec().maxAttempts() : retry.maxAttempts();
      TaskContext ctx = new TaskContext(task, r.claimed, attempt, max);
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
        record(r, ctx, Outcome.failed(error), null);
        return;
      }
      if (r.pickup != null && metrics.wantsPickup()) {
        metrics.pickedUp(r.domain, r.pickup.latency());
      }
      // beaten by the sweep (beatDue): no timer task per task on the way to the handler
      long t0 = System.nanoTime();
      r.nextBeat = t0 + heartbeatEvery.toNanos();
      r.beating = true;
      Outcome outcome;
      try {
        outcome = handlers.get(r.domain).handle(task, ctx);
        if (outcome == null) {
          outcome = Outcome.failed("the handler returned no outcome (null)");
        }
      } catch (Throwable t) {
        if (t instanceof Error
            && !(t instanceof AssertionError)
            && !(t instanceof StackOverflowError)) {
          LOG.error("ledger worker {}: handler of task {} threw", holder, task.id(), t);
        }
        outcome = Outcome.failed(describe(t));
      } finally {
        r.beating = false;
        r.finish();
      }
      Duration took = Duration.ofNanos(System.nanoTime() - t0);
      if (ctx.leaseLost()) {
        metrics.handled(r.domain, "lost", took);
        return;
      }
      if (outcome instanceof Outcome.Done d) {
        awaitingCompletion.incrementAndGet();
        finished.add(new Finished(r, d.handoff(), took));
        handedOver = true;
        return;
      }
      record(r, ctx, outcome, took);
    } catch (LeaseLostException e) {
      metrics.leaseLost(r.domain);
      LOG.warn("ledger worker {}: {}", holder, e.getMessage());
    } catch (RuntimeException e) {
      LOG.warn(
          "ledger worker {}: task {} could not be run or recorded; its lease runs out",
          holder,
          r.claimed.taskId(),
          e);
    } finally {
      if (!handedOver) {
        done(r);
      }
    }
  }

  /** A task is no longer held: frees its thread's permit and wakes the claimer if work waits. */
  private void done(Running r) {
    running.remove(r);
    permits.release();
    synchronized (signal) {
      if (state.values().stream().anyMatch(s -> s.pending)) {
        signalled = true;
        signal.notifyAll();
      }
    }
  }

  /** A handler that returned {@link Outcome.Done}, waiting for the completer. */
  private record Finished(Running running, String handoff, Duration took) {}

  /**
   * The completer: completes the finished tasks in batches, one transaction per domain per batch
   * ({@link Ledger#completeAll}), so completions of one pool share a commit. Runs until the pool is
   * closed and nothing waits.
   */
  private void complete() {
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
        if (life == State.CLOSED) {
          return;
        }
        continue;
      }
      batch.clear();
      batch.add(first);
      finished.drainTo(batch, 255);
      Map<String, List<Finished>> byDomain = new LinkedHashMap<>();
      for (Finished f : batch) {
        byDomain.computeIfAbsent(f.running().domain, d -> new ArrayList<>()).add(f);
      }
      for (Map.Entry<String, List<Finished>> e : byDomain.entrySet()) {
        String domain = e.getKey();
        List<Finished> fs = e.getValue();
        try {
          List<dev.ledger.Completion> cs = new ArrayList<>(fs.size());
          for (Finished f : fs) {
            cs.add(new dev.ledger.Completion(f.running().lease(), f.handoff()));
          }
          Set<String> lost = new java.util.HashSet<>();
          for (Lease l : ledger.completeAll(domain, cs)) {
            lost.add(l.taskId());
          }
          for (Finished f : fs) {
            if (lost.contains(f.running().claimed.taskId())) {
              metrics.handled(domain, "lost", f.took());
              metrics.leaseLost(domain);
              LOG.warn(
                  "ledger worker {}: task {} finished after its lease was lost; result dropped",
                  holder,
                  f.running().claimed.taskId());
            } else {
              metrics.handled(domain, "completed", f.took());
              metrics.completed(domain);
            }
          }
        } catch (RuntimeException ex) {
          // one bad completion (a handoff over the limit, say) must not sink the batch's others:
          // each is completed on its own, and a refused one is recorded as its failed attempt
          LOG.debug(
              "ledger worker {}: completing {} tasks of {} together failed; one by one",
              holder,
              fs.size(),
              domain,
              ex);
          fs.forEach(this::completeAlone);
        } finally {
          fs.forEach(f -> done(f.running()));
          awaitingCompletion.addAndGet(-fs.size());
        }
      }
    }
  }

  /**
   * Completes one finished task in a transaction of its own, after its batch failed: a handoff the
   * ledger refuses ({@link InvalidInputException}) becomes the attempt's error, retried or ended as
   * a dead letter like a handler's failure; a lost lease is counted; anything else leaves the lease
   * to run out (a database that is down refuses the failure record too).
   */
  private void completeAlone(Finished f) {
    Running r = f.running();
    try {
      ledger.complete(r.lease(), f.handoff());
      metrics.handled(r.domain, "completed", f.took());
      metrics.completed(r.domain);
    } catch (LeaseLostException e) {
      metrics.handled(r.domain, "lost", f.took());
      metrics.leaseLost(r.domain);
      LOG.warn("ledger worker {}: {}", holder, e.getMessage());
    } catch (InvalidInputException e) {
      try {
        record(r, r.context, Outcome.failed("its result was refused: " + e.getMessage()), f.took());
      } catch (RuntimeException again) {
        LOG.warn(
            "ledger worker {}: task {}'s result was refused ({}) and its failure could not be"
                + " recorded; its lease runs out",
            holder,
            r.claimed.taskId(),
            e.getMessage(),
            again);
      }
    } catch (RuntimeException e) {
      LOG.warn(
          "ledger worker {}: completing task {} failed; its lease runs out",
          holder,
          r.claimed.taskId(),
          e);
    }
  }

  private void record(Running r, TaskContext ctx, Outcome outcome, Duration took) {
    String error = ((Outcome.Failed) outcome).error();
    FailureRecord f =
        ledger.fail(
            ctx.lease(),
            error.length() > 50_000 ? error.substring(0, 50_000) : error,
            retry.maxAttempts(),
            retry.delayAfter(ctx.attempt()));
    if (took != null) {
      metrics.handled(r.domain, "failed", took);
    }
    metrics.failed(r.domain);
    if (f.deadLetter()) {
      metrics.dead(r.domain);
      LOG.warn(
          "ledger worker {}: task {} is a dead letter after {} attempts: {}",
          holder,
          f.taskId(),
          f.attempt(),
          abbreviate(error));
    } else {
      metrics.retried(r.domain);
      LOG.debug(
          "ledger worker {}: task {} attempt {} of {} failed; retry {} at {}",
          holder,
          f.taskId(),
          f.attempt(),
          f.maxAttempts(),
          f.retryId(),
          f.retryAt());
      synchronized (signal) {
        DomainState s = state.get(r.domain);
        if (s.nextDue == null || f.retryAt().isBefore(s.nextDue)) {
          s.nextDue = f.retryAt();
        }
        signalled = true;
        signal.notifyAll();
      }
    }
  }

  /**
   * The heartbeat sweep, every quarter of the heartbeat interval on the timer thread: extends the
   * lease of each running task whose beat is due (a third of the lease after its start or its last
   * beat; at most a quarter of that late).
   */
  private void beatDue() {
    long now = System.nanoTime();
    for (Running r : running) {
      if (r.beating && now - r.nextBeat >= 0) {
        r.nextBeat = now + heartbeatEvery.toNanos();
        beat(r);
      }
    }
  }

  private void beat(Running r) {
    TaskContext ctx = r.context;
    if (ctx == null || ctx.leaseLost()) {
      return;
    }
    synchronized (r) {
      if (r.finished) {
        return;
      }
    }
    try {
      ctx.extended(ledger.heartbeat(ctx.lease(), lease));
    } catch (LeaseLostException e) {
      boolean wasRunning;
      synchronized (r) {
        wasRunning = !r.finished;
      }
      if (wasRunning) {
        metrics.leaseLost(r.domain);
        LOG.warn("ledger worker {}: lease lost while running: {}", holder, e.getMessage());
        r.lose(e);
      }
      r.beating = false;
    } catch (RuntimeException e) {
      LOG.warn(
          "ledger worker {}: heartbeat of task {} failed; trying again",
          holder,
          ctx.task().id(),
          e);
    }
  }

  private void sweep() {
    try {
      beatDue();
    } catch (RuntimeException e) {
      LOG.warn("ledger worker {}: the heartbeat sweep failed; trying again", holder, e);
    }
  }

  private void sampleDepth() {
    for (String d : domains) {
      try {
        Map<String, Long> counts = new LinkedHashMap<>();
        ledger.countByStatus(d).forEach((k, v) -> counts.put(k.wire(), v));
        metrics.depth(d, counts);
      } catch (RuntimeException e) {
        LOG.debug("ledger worker {}: sampling {} failed", holder, d, e);
      }
    }
  }

  /** Closes the pool with the builder's shutdown timeout; see {@link #close(Duration)}. */
  @Override
  public void close() {
    close(shutdownTimeout);
  }

  /**
   * Stops claiming, releases the prefetched tasks no handler has started, waits up to {@code
   * timeout} for the running handlers to finish and record their outcomes (and at least 5 s for the
   * completions of those that finished), then interrupts the others and releases their leases.
   * Returns about 200 ms after the timeout at the latest when handlers had to be interrupted (a
   * handler that ignores interrupts is left running, its result refused). Calling it again does
   * nothing.
   *
   * @param timeout how long to wait for running handlers; zero to release at once
   * @return true when every started handler ended within the timeout (no running task had to be
   *     released)
   */
  public boolean close(Duration timeout) {
    synchronized (this) {
      if (life == State.NEW) {
        life = State.CLOSED;
        return true;
      }
      if (life != State.RUNNING) {
        return true;
      }
      life = State.STOPPING;
    }
    synchronized (signal) {
      signalled = true;
      signal.notifyAll();
    }
    join(dispatcher, Duration.ofSeconds(30));
    // a claim the listening thread started before the stop hands its tasks over first; later
    // ones see the pool stopping
    claiming.lock();
    claiming.unlock();
    if (wakeups != null) {
      wakeups.close();
    }
    workers.shutdown();
    long end = System.nanoTime() + timeout.toNanos();
    boolean clean = await(workers, timeout);
    // the finished tasks' completions, in the time left (and at least a moment)
    long drainEnd = Math.max(end, System.nanoTime() + Duration.ofSeconds(5).toNanos());
    while (awaitingCompletion.get() > 0 && System.nanoTime() < drainEnd) {
      pause(Duration.ofMillis(5));
    }
    // the handlers still running (a finished one awaiting its completion is the completer's)
    List<Running> left = new ArrayList<>();
    for (Running r : running) {
      synchronized (r) {
        if (!r.finished) {
          left.add(r);
        }
      }
    }
    if (!clean || !left.isEmpty()) {
      clean = false;
      LOG.warn(
          "ledger worker {}: {} tasks still running after {}; interrupting them and releasing"
              + " their leases",
          holder,
          left.size(),
          timeout);
      for (Running r : left) {
        r.lose(new LeaseLostException(r.lease(), "finish", "released because its pool closed"));
        release(r);
      }
      workers.shutdownNow();
      // their leases are released: a short grace for the interrupted threads, not a second wait
      await(workers, Duration.ofMillis(200));
    }
    timers.shutdownNow();
    life = State.CLOSED;
    join(completer, Duration.ofSeconds(5));
    LOG.info("ledger worker {} stopped{}", holder, clean ? "" : " (some tasks released)");
    return clean;
  }

  private void release(Running r) {
    try {
      ledger.release(r.lease());
    } catch (LeaseLostException e) {
      // it finished (or was lost) meanwhile: nothing of ours is held
    } catch (RuntimeException e) {
      LOG.warn(
          "ledger worker {}: releasing task {} failed; its lease runs out at {}",
          holder,
          r.claimed.taskId(),
          r.lease().until(),
          e);
    }
  }

  /** Which attempt of its retry chain a task is: {@code n} of {@code attempt:<n>}, else 1. */
  static int attemptOf(Task task) {
    String origin = task.spec().origin();
    String upstream = task.spec().upstreamEvent();
    if (origin != null
        && origin.startsWith("retries:")
        && upstream != null
        && upstream.startsWith("attempt:")) {
      try {
        return Math.max(1, Integer.parseInt(upstream.substring("attempt:".length())));
      } catch (NumberFormatException e) {
        return 1;
      }
    }
    return 1;
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

  private static String defaultHolder() {
    String host = System.getenv("HOSTNAME");
    return (host == null || host.isEmpty() ? "worker" : host)
        + "-"
        + ProcessHandle.current().pid()
        + "-"
        + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x100000, 0xffffff));
  }

  private static ThreadFactory daemon(java.util.function.Supplier<String> name) {
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

  private static void join(Thread t, Duration timeout) {
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

  private static void pause(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Builds a {@link WorkerPool}; validated in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private final Ledger ledger;
    private DataSource dataSource;
    private final Map<String, TaskHandler> handlers = new LinkedHashMap<>();
    private String holder;
    private List<String> manifest = List.of();
    private Label handling = Label.PUBLIC;
    private int concurrency = 4;
    private int prefetch = -1;
    private int batchSize;
    private Duration lease = Duration.ofSeconds(30);
    private Duration pollInterval = Duration.ofSeconds(5);
    private RetryPolicy retry = RetryPolicy.DEFAULT;
    private Duration shutdownTimeout = Duration.ofSeconds(30);
    private WorkerMetrics metrics = WorkerMetrics.NONE;
    private boolean requireKnownDomains = true;

    private Builder(Ledger ledger) {
      this.ledger = ledger;
    }

    /**
     * The database, for the pool's one listening connection (LISTEN/NOTIFY wake-ups). Without it
     * the pool only polls. The connection is held for the pool's life: size the data source for it.
     *
     * @param dataSource the ledger's database, or null for polling only
     * @return this
     */
    public Builder dataSource(DataSource dataSource) {
      this.dataSource = dataSource;
      return this;
    }

    /**
     * Serves a domain with a handler; call once per domain.
     *
     * @param domain the domain
     * @param handler its handler, not null
     * @return this
     */
    public Builder domain(String domain, TaskHandler handler) {
      Validation.domain(domain);
      if (handler == null) {
        throw new InvalidInputException("handler", "must not be null");
      }
      if (handlers.putIfAbsent(domain, handler) != null) {
        throw new InvalidInputException("domain", "'" + domain + "' is served twice");
      }
      return this;
    }

    /**
     * The holder name leases are taken in; unique per pool. Default: host, process id and a random
     * part.
     *
     * @param holder 1 to {@value Validation#MAX_NAME} characters
     * @return this
     */
    public Builder holder(String holder) {
      Validation.required("holder", holder, Validation.MAX_NAME);
      this.holder = holder;
      return this;
    }

    /**
     * What the pool's workers can do: a task is claimed only when its requirements are all in it.
     *
     * @param manifest the requirements met, not null
     * @return this
     */
    public Builder manifest(Collection<String> manifest) {
      if (manifest == null) {
        throw new InvalidInputException("manifest", "must not be null (use an empty list)");
      }
      manifest.forEach(m -> Validation.required("manifest", m, Validation.MAX_NAME));
      this.manifest = List.copyOf(manifest);
      return this;
    }

    /**
     * The highest label the pool may handle; {@code public} by default.
     *
     * @param handling the label, not null
     * @return this
     */
    public Builder handling(Label handling) {
      if (handling == null) {
        throw new InvalidInputException("handling", "must not be null");
      }
      this.handling = handling;
      return this;
    }

    /**
     * How many tasks run at once (worker threads); 4 by default.
     *
     * @param threads 1 to 1000
     * @return this
     */
    public Builder concurrency(int threads) {
      if (threads < 1 || threads > 1000) {
        throw new InvalidInputException("concurrency", "must be 1 to 1000, was " + threads);
      }
      this.concurrency = threads;
      return this;
    }

    /**
     * How many claimed tasks may wait for a thread, so the next claim overlaps the running handlers
     * (a bounded queue; their leases run from the claim). By default the concurrency; 0 claims only
     * for idle threads.
     *
     * @param tasks 0 to 1000
     * @return this
     */
    public Builder prefetch(int tasks) {
      if (tasks < 0 || tasks > 1000) {
        throw new InvalidInputException("prefetch", "must be 0 to 1000, was " + tasks);
      }
      this.prefetch = tasks;
      return this;
    }

    /**
     * The most tasks one claim takes; by default concurrency + prefetch (at most 100).
     *
     * @param max 1 to 1000
     * @return this
     */
    public Builder batchSize(int max) {
      if (max < 1 || max > 1000) {
        throw new InvalidInputException("batch_size", "must be 1 to 1000, was " + max);
      }
      this.batchSize = max;
      return this;
    }

    /**
     * How long each lease lasts; the pool heartbeats every third of it. 30 s by default.
     *
     * @param lease 300 ms to {@link Validation#MAX_LEASE}
     * @return this
     */
    public Builder lease(Duration lease) {
      Validation.leaseDuration("lease", lease);
      if (lease.toMillis() < 300) {
        throw new InvalidInputException("lease", "must be at least 300 ms, was " + lease);
      }
      this.lease = lease;
      return this;
    }

    /**
     * How often the pool claims when no wake-up came (the fallback for lost notifications, and what
     * finds tasks whose lease expired); 5 s by default.
     *
     * @param interval 10 ms to 1 hour
     * @return this
     */
    public Builder pollInterval(Duration interval) {
      if (interval == null
          || interval.toMillis() < 10
          || interval.compareTo(Duration.ofHours(1)) > 0) {
        throw new InvalidInputException("poll_interval", "must be 10 ms to 1 hour");
      }
      this.pollInterval = interval;
      return this;
    }

    /**
     * How failures are retried; {@link RetryPolicy#DEFAULT} by default.
     *
     * @param retry the policy, not null
     * @return this
     */
    public Builder retry(RetryPolicy retry) {
      if (retry == null) {
        throw new InvalidInputException("retry", "must not be null");
      }
      this.retry = retry;
      return this;
    }

    /**
     * How long {@link WorkerPool#close()} waits for running handlers; 30 s by default.
     *
     * @param timeout zero or more
     * @return this
     */
    public Builder shutdownTimeout(Duration timeout) {
      if (timeout == null || timeout.isNegative()) {
        throw new InvalidInputException("shutdown_timeout", "must be zero or more");
      }
      this.shutdownTimeout = timeout;
      return this;
    }

    /**
     * Where the pool reports; {@link WorkerMetrics#NONE} by default. For Micrometer: {@code
     * MicrometerWorkerMetrics.of(registry)}.
     *
     * @param metrics the sink, not null
     * @return this
     */
    public Builder metrics(WorkerMetrics metrics) {
      if (metrics == null) {
        throw new InvalidInputException("metrics", "must not be null");
      }
      this.metrics = metrics;
      return this;
    }

    /**
     * Lets {@link WorkerPool#start()} accept a domain without a schema (it logs a warning and waits
     * for the domain's first task), for ledgers whose runtime DDL makes it later. By default an
     * unknown domain is an error at start.
     *
     * @return this
     */
    public Builder awaitUnknownDomains() {
      this.requireKnownDomains = false;
      return this;
    }

    /**
     * Checks the configuration and makes the pool, not started.
     *
     * @return the pool
     * @throws InvalidInputException naming {@code domains} when no domain is served
     */
    public WorkerPool build() {
      if (handlers.isEmpty()) {
        throw new InvalidInputException(
            "domains", "serve at least one domain (domain(d, handler))");
      }
      return new WorkerPool(this);
    }

    /**
     * Builds and starts the pool.
     *
     * @return the running pool
     * @throws InvalidInputException see {@link #build()} and {@link WorkerPool#start()}
     */
    public WorkerPool start() {
      return build().start();
    }
  }
}

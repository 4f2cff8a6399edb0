package dev.ledger.worker;

import dev.ledger.InvalidInputException;
import dev.ledger.Ledger;
import dev.ledger.Task;
import dev.ledger.Validation;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
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
 * <p>How it runs: one dispatcher thread claims with {@link WorkerPort#claimTasks} as many tasks as
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
 * {@link WorkerPort#fail}: the task is invalidated with the attempt, the time and the error, and a
 * retry is filed from its root ({@code retries:<root>}) to run after {@link
 * RetryPolicy#delayAfter}, until the chain's maximum; then it is a dead letter ({@link
 * Ledger#deadLetters}). A claim that takes a task over from an expired lease (its worker died or
 * stalled: {@link WorkerPort#pickups}) records that attempt as failed, "lease expired", without
 * running the handler, so a task that keeps killing its workers ends as a dead letter too. Delayed
 * tasks (retries, and tasks filed with a {@code notBefore}) are admitted by the pool at their time
 * ({@link WorkerPort#admitDue}). The due ticks of the domains' schedules are filed by the pool too
 * ({@link dev.ledger.schedule.Schedules#fileDue(String)}): it reads each domain's next tick at most
 * every second (one indexed read) and files when one is due; every pool may do so, each tick is
 * filed once.
 *
 * <p>{@link #close()}: stops claiming, waits up to the shutdown timeout for running handlers, then
 * interrupts the rest and releases their leases, so no task stays claimed by a closed pool (unless
 * the database is unreachable then: those leases expire). Thread-safe.
 *
 * <p>Size: over 600 lines because its public {@link Builder} is nested here (moving it would break
 * every {@code WorkerPool.Builder} in users' code); what both pools share is in {@link TaskRunner},
 * {@link PoolBuilder}, {@code Wakeups} and {@code Completer}.
 */
public final class WorkerPool implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(WorkerPool.class);
  private static final Duration DEPTH_SAMPLE = Duration.ofSeconds(15);
  private static final Duration ERROR_PAUSE = Duration.ofSeconds(1);

  /** How often a pool looks for a schedule of its domains added or changed elsewhere. */
  static final long SCHEDULE_RECHECK_MILLIS = 1000;

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
  private final int concurrency;
  private final int prefetch;
  private final int batchSize;
  private final Duration lease;
  private final Duration pollInterval;
  private final RetryPolicy retry;
  private final Duration shutdownTimeout;
  private final WorkerMetrics metrics;
  private final Outage outage;
  private final boolean requireKnownDomains;
  private final TaskRunner runner;
  private final PoolPurger purger;

  private final Semaphore permits;

  /** Held while claiming (by the dispatcher, or by the listening thread when it claims itself). */
  private final ReentrantLock claiming = new ReentrantLock();

  /**
   * The dispatcher's monitor: every change that may give it work (a domain pending, a due time, a
   * freed thread, a stop) is made holding it and notifies it; the dispatcher checks under it before
   * each wait, so no wake-up is lost.
   */
  private final Object signal = new Object();

  /**
   * When the next poll is due ({@link System#nanoTime()}), guarded by {@link #signal}: kept across
   * {@link #awaitWork()} calls, which the schedule checks and delayed tasks end every second or
   * sooner, so that the poll comes every {@link #pollInterval} whatever else wakes the dispatcher.
   */
  private long nextPollNanos;

  private final Map<String, DomainState> state = new LinkedHashMap<>();
  private volatile State life = State.NEW;
  private Thread dispatcher;
  private Wakeups wakeups;

  /** What the dispatcher knows of one domain; read and written under {@link #signal}. */
  private static final class DomainState {
    boolean pending = true;
    boolean dueStale = true;
    Instant nextDue;

    /** When to read the domain's next schedule tick again; null for at once. */
    Instant scheduleCheck;

    /** When the domain's controls held its last claim back: when to claim again, else null. */
    Instant recheck;

    /** The control that held it back ({@code paused}, {@code concurrency}, {@code rate}). */
    String held;
  }

  private WorkerPool(Builder b) {
    PoolSettings settings = b.settings(defaultHolder());
    this.ledger = b.ledger;
    this.dataSource = b.dataSource;
    this.handlers = Map.copyOf(b.handlers);
    this.domains = List.copyOf(b.handlers.keySet());
    this.holder = settings.holder();
    this.concurrency = settings.concurrency();
    this.prefetch = b.prefetch >= 0 ? b.prefetch : concurrency;
    this.batchSize = b.batchSize > 0 ? b.batchSize : Math.min(concurrency + prefetch, 100);
    this.lease = settings.lease();
    this.pollInterval = settings.pollInterval();
    this.retry = settings.retry();
    this.shutdownTimeout = settings.shutdownTimeout();
    this.metrics = settings.metrics();
    this.outage = new Outage(LOG, settings.holder(), metrics, java.time.Clock.systemUTC());
    this.requireKnownDomains = b.requireKnownDomains;
    this.permits = new Semaphore(concurrency + prefetch);
    for (String d : domains) {
      state.put(d, new DomainState());
    }
    this.runner = new TaskRunner(LOG, "ledger worker", settings, new Hooks());
    this.purger = new PoolPurger(LOG, ledger, domains, b.purgeEvery);
  }

  /** What the shared execution path asks of this pool. */
  private final class Hooks implements TaskRunner.Pool {
    @Override
    public Ledger ledger(RunningTask r) {
      return ledger;
    }

    @Override
    public Outcome handle(RunningTask r, Task task, TaskContext ctx) throws Exception {
      return handlers.get(r.domain).handle(task, ctx);
    }

    @Override
    public void retryFiled(RunningTask r, Instant at) {
      synchronized (signal) {
        DomainState s = state.get(r.domain);
        if (s.nextDue == null || at.isBefore(s.nextDue)) {
          s.nextDue = at;
        }
        signal.notifyAll();
      }
    }

    @Override
    public boolean accepting() {
      return life == State.RUNNING;
    }

    /** Frees the task's permit and wakes the claimer if work waits. */
    @Override
    public void done(RunningTask r) {
      permits.release();
      synchronized (signal) {
        DomainState d = state.get(r.domain);
        if (d != null && "concurrency".equals(d.held)) {
          d.pending = true; // a slot of the domain's concurrency limit freed: claim it
        }
        if (state.values().stream().anyMatch(s -> s.pending)) {
          signal.notifyAll();
        }
      }
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
   * Whether the pool's database is failing: since when its claims have failed, while they do (a
   * server restart, a lost network). The pool keeps its threads and claims again every second; the
   * first claim that works ends it. Logged once at WARN when it begins and once at INFO when it
   * ends; {@link WorkerMetrics#outage} sees both.
   *
   * @return the time of the first failed claim of the outage going on, or empty
   */
  public java.util.Optional<java.time.Instant> outageSince() {
    return outage.since();
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
    return runner.inFlight();
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
   *     was not built with {@link Builder#awaitUnknownDomains()}), or {@code dataSource} when it is
   *     a HikariCP pool of fewer than 2 connections (the listening connection is held for good)
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
    if (dataSource != null) {
      Wakeups.requireRoomToListen(dataSource);
    }
    String prefix = "ledger-worker-" + holder;
    runner.start(prefix, concurrency, concurrency + prefetch);
    if (metrics.wantsDepth()) {
      runner
          .timers()
          .scheduleWithFixedDelay(
              this::sampleDepth, 0, DEPTH_SAMPLE.toMillis(), TimeUnit.MILLISECONDS);
    }
    if (dataSource != null) {
      wakeups = new Wakeups(dataSource, domains, prefix + "-listen", this::wake);
      wakeups.start();
    }
    life = State.RUNNING;
    synchronized (signal) {
      // every domain starts pending: the first poll is one interval away
      nextPollNanos = System.nanoTime() + pollInterval.toNanos();
    }
    dispatcher = new Thread(this::dispatch, prefix + "-claim");
    dispatcher.setDaemon(true);
    dispatcher.start();
    purger.start(prefix);
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
    boolean inline = dev.ledger.Status.ADMITTED.wire().equals(payload);
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
          fileScheduledTicks();
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
        outage.succeeded();
        start++;
        awaitWork();
      } catch (RuntimeException e) {
        if (life != State.RUNNING) {
          break;
        }
        outage.failed(e, ERROR_PAUSE);
        TaskRunner.pause(ERROR_PAUSE);
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
    List<RunningTask> claimed = runner.claim(ledger, null, domain, ask);
    if (claimed.size() == ask) {
      markPending(domain); // a full batch: there may be more
    }
    // held back by the domain's controls (paused, a limit reached): no claim in a loop, claim
    // again at the recheck, on a wake-up (a resume or a changed limit notifies), or for the
    // concurrency limit when one of the domain's tasks here ends
    Optional<Map.Entry<String, Duration>> held =
        claimed.size() < ask ? ledger.worker().heldBack(domain) : Optional.empty();
    metrics.heldBack(domain, held.map(Map.Entry::getKey).orElse(null));
    synchronized (signal) {
      DomainState s = state.get(domain);
      s.held = held.map(Map.Entry::getKey).orElse(null);
      s.recheck =
          held.map(
                  h ->
                      Instant.now()
                          .plus(
                              h.getValue().compareTo(pollInterval) < 0
                                  ? h.getValue()
                                  : pollInterval))
              .orElse(null);
    }
    for (RunningTask r : claimed) {
      permits.acquireUninterruptibly();
      runner.submit(r);
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
        ids = ledger.worker().admitDue(domain, 1000);
        admitted += ids.size();
      } while (ids.size() == 1000 && life == State.RUNNING);
      Instant next = ledger.worker().nextDue(domain).orElse(null);
      synchronized (signal) {
        DomainState s = state.get(domain);
        s.nextDue = next;
        if (admitted > 0) {
          s.pending = true;
        }
      }
    }
  }

  /**
   * Files the due ticks of each domain's schedules whose check time has come, and learns when to
   * check again: the domain's next tick, or the recheck interval, whichever comes first. A failure
   * is logged and retried at the next check; it never stops the claims.
   */
  private void fileScheduledTicks() {
    Instant now = Instant.now();
    for (String domain : domains) {
      synchronized (signal) {
        Instant at = state.get(domain).scheduleCheck;
        if (at != null && now.isBefore(at)) {
          continue;
        }
      }
      Instant next = now.plusMillis(SCHEDULE_RECHECK_MILLIS);
      boolean filed = false;
      try {
        Optional<Instant> tick = ledger.schedules().nextTick(domain);
        if (tick.isPresent() && !now.isBefore(tick.get())) {
          filed = ledger.schedules().fileDue(domain) > 0;
          tick = ledger.schedules().nextTick(domain);
        }
        if (tick.isPresent() && tick.get().isBefore(next)) {
          next = tick.get();
        }
      } catch (RuntimeException e) {
        LOG.warn(
            "ledger worker {}: filing the due schedule ticks of {} failed: {}",
            holder,
            domain,
            e.toString());
      }
      synchronized (signal) {
        DomainState s = state.get(domain);
        s.scheduleCheck = next;
        if (filed) {
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
   * next delayed task's or schedule check's time, or the poll. The poll (every {@link
   * #pollInterval}, on its own clock: an early return does not put it off) marks every domain
   * pending and its next due time stale, so a pool claims and admits what other processes made
   * ready even when no wake-up reaches it (wake-ups off, a transaction-mode pooler, a lost
   * listening connection, a missed notification).
   */
  private void awaitWork() {
    synchronized (signal) {
      while (life == State.RUNNING) {
        long nowNanos = System.nanoTime();
        if (nowNanos - nextPollNanos >= 0) {
          for (DomainState s : state.values()) {
            s.pending = true; // the poll
            s.dueStale = true;
          }
          nextPollNanos = nowNanos + pollInterval.toNanos();
        }
        Instant recheck = null;
        for (DomainState s : state.values()) {
          if (s.recheck != null && !Instant.now().isBefore(s.recheck)) {
            s.recheck = null; // a held-back domain's time to claim again
            s.pending = true;
          } else if (s.recheck != null && (recheck == null || s.recheck.isBefore(recheck))) {
            recheck = s.recheck;
          }
        }
        boolean anyWork = state.values().stream().anyMatch(s -> s.pending || s.dueStale);
        boolean claimable = state.values().stream().anyMatch(s -> s.pending);
        if (anyWork && (permits.availablePermits() > 0 || !claimable)) {
          return; // a due time to read needs no free thread; a claim does
        }
        long waitNanos = nextPollNanos - nowNanos;
        Instant due = earliestDue();
        if (due != null) {
          if (!Instant.now().isBefore(due)) {
            return; // a delayed task's or a schedule check's time has come
          }
          waitNanos = Math.min(waitNanos, Duration.between(Instant.now(), due).toNanos());
        }
        if (recheck != null) {
          waitNanos =
              Math.min(waitNanos, Math.max(1, Duration.between(Instant.now(), recheck).toNanos()));
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(signal, Math.max(1, waitNanos));
        } catch (InterruptedException e) {
          return; // close() interrupts to stop
        }
      }
    }
  }

  /**
   * The pool's claiming state, as text, for a test's failure message: its life, free permits,
   * whether the claim lock is held, and each domain's flags and times. Not for parsing.
   */
  String describeState() {
    StringBuilder out = new StringBuilder();
    out.append("life ")
        .append(life)
        .append(", permits ")
        .append(permits.availablePermits())
        .append(" of ")
        .append(concurrency + prefetch)
        .append(", claim lock ")
        .append(claiming.isLocked() ? "held" : "free")
        .append(", dispatcher ")
        .append(dispatcher == null ? "none" : dispatcher.getState());
    synchronized (signal) {
      state.forEach(
          (d, s) ->
              out.append("; ")
                  .append(d)
                  .append(": pending ")
                  .append(s.pending)
                  .append(", dueStale ")
                  .append(s.dueStale)
                  .append(", nextDue ")
                  .append(s.nextDue)
                  .append(", scheduleCheck ")
                  .append(s.scheduleCheck)
                  .append(", recheck ")
                  .append(s.recheck)
                  .append(", held ")
                  .append(s.held));
    }
    return out.append(" (now ").append(Instant.now()).append(')').toString();
  }

  private Instant earliestDue() {
    Instant min = null;
    for (DomainState s : state.values()) {
      if (s.nextDue != null && (min == null || s.nextDue.isBefore(min))) {
        min = s.nextDue;
      }
      if (s.scheduleCheck != null && (min == null || s.scheduleCheck.isBefore(min))) {
        min = s.scheduleCheck;
      }
    }
    return min;
  }

  private void sampleDepth() {
    for (String d : domains) {
      try {
        // what purges removed, read before the rows are counted: a purge committing between the
        // two reads is then counted short for one sample, never twice
        long removed =
            ledger
                .retention()
                .get(d)
                .map(dev.ledger.retention.RetentionSetting::tasksRemoved)
                .orElse(0L);
        Map<String, Long> counts = new LinkedHashMap<>();
        ledger.countByStatus(d).forEach((k, v) -> counts.put(k.wire(), v));
        metrics.depth(d, counts);
        metrics.filed(d, removed + counts.values().stream().mapToLong(Long::longValue).sum());
        metrics.controls(ledger.controls(d));
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
   *     released); true for an idle pool whatever the timeout
   * @throws dev.ledger.InvalidInputException naming {@code timeout} when it is null or negative
   */
  public boolean close(Duration timeout) {
    TaskRunner.checkTimeout(timeout);
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
      signal.notifyAll();
    }
    purger.close();
    TaskRunner.join(dispatcher, Duration.ofSeconds(30));
    // a claim the listening thread started before the stop hands its tasks over first; later
    // ones see the pool stopping
    claiming.lock();
    claiming.unlock();
    if (wakeups != null) {
      wakeups.close();
    }
    boolean clean = runner.stop(timeout);
    life = State.CLOSED;
    LOG.info("ledger worker {} stopped{}", holder, clean ? "" : " (some tasks released)");
    return clean;
  }

  private static String defaultHolder() {
    String host = System.getenv("HOSTNAME");
    return (host == null || host.isEmpty() ? "worker" : host)
        + "-"
        + ProcessHandle.current().pid()
        + "-"
        + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x100000, 0xffffff));
  }

  /** Builds a {@link WorkerPool}; validated in {@link #build()}. Not thread-safe. */
  public static final class Builder extends PoolBuilder<Builder> {
    private final Ledger ledger;
    private DataSource dataSource;
    private final Map<String, TaskHandler> handlers = new LinkedHashMap<>();
    private int prefetch = -1;
    private int batchSize;
    private boolean requireKnownDomains = true;
    private Duration purgeEvery;

    private Builder(Ledger ledger) {
      super(Duration.ofSeconds(5));
      this.ledger = ledger;
    }

    @Override
    Builder self() {
      return this;
    }

    /**
     * The database, for the pool's one listening connection (LISTEN/NOTIFY wake-ups). Without it
     * the pool only polls. The connection is held for the pool's life: size the data source for it
     * (at least 2 connections: {@link #start} refuses a HikariCP pool of one; another pool that
     * gives no second connection is reported at start and the pool polls).
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
     * How many claimed tasks may wait for a thread, so the next claim overlaps the running handlers
     * (a bounded queue; their leases run from the claim). By default the concurrency; 0 claims only
     * for idle threads.
     *
     * @param tasks 0 to 1000
     * @return this
     */
    public Builder prefetch(int tasks) {
      this.prefetch = range("prefetch", tasks, 0, 1000);
      return this;
    }

    /**
     * The most tasks one claim takes; by default concurrency + prefetch (at most 100).
     *
     * @param max 1 to 1000
     * @return this
     */
    public Builder batchSize(int max) {
      this.batchSize = range("batch_size", max, 1, 1000);
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
     * Purges the pool's domains that have a retention every {@code period}, on a thread of its own
     * ({@link dev.ledger.retention.Retention#purge}, docs/retention.md); the first purge one period
     * after the start. Off by default; every process may turn it on (concurrent purges of a domain
     * skip each other).
     *
     * @param period 1 second to 1 day; minutes suit most domains
     * @return this
     * @throws InvalidInputException naming {@code purge_every} when out of range or null
     */
    public Builder purgeEvery(Duration period) {
      if (period == null
          || period.compareTo(PoolPurger.MIN_PERIOD) < 0
          || period.compareTo(PoolPurger.MAX_PERIOD) > 0) {
        throw new InvalidInputException("purge_every", "must be 1 second to 1 day");
      }
      this.purgeEvery = period;
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

package dev.ledger.worker;

import dev.ledger.InvalidInputException;
import dev.ledger.Ledger;
import dev.ledger.LedgerException;
import dev.ledger.Task;
import dev.ledger.Validation;
import dev.ledger.tenants.TenantDirectory;
import dev.ledger.tenants.TenantUnavailableException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves one domain across every tenant a {@link TenantDirectory} serves, fairly: one set of worker
 * threads (the capacity, shared by all tenants), and one dispatcher that claims in turns over the
 * tenants, at most {@link Builder#quantum(int)} tasks of one tenant per turn, resuming after the
 * tenant it served last (a tenant alone with work gets every free thread). So a busy tenant cannot
 * starve the others: while it has thousands of tasks waiting, every other tenant with work gets a
 * turn (and a thread) as often as it does.
 *
 * <pre>{@code
 * TenantWorkerPool pool = TenantWorkerPool.builder(directory)
 *     .domain("payments", (tenant, task, ctx) -> {
 *       charge(tenant, task.spec().body());
 *       return Outcome.done();
 *     })
 *     .concurrency(8)
 *     .start();
 * ...
 * pool.close();   // stops claiming, waits, releases what is left
 * }</pre>
 *
 * <p>Tenants follow the directory: one it starts serving on a refresh is polled from then on, one
 * it stops serving is no longer claimed from (its running tasks finish). A tenant the directory
 * refuses (unreachable, degraded, ...) or whose claim fails is skipped with a log line, and tried
 * again a poll interval later; the pool keeps serving the others. There is no LISTEN per tenant (it
 * would cost a connection each): a tenant without work is asked again after {@link
 * Builder#pollInterval(Duration)} (after one empty claim, or two in a row when it had work: a claim
 * can come back empty while work waits, its candidates locked by transactions finishing others); a
 * tenant with work is asked on each of its turns. Delayed tasks (retries, {@code notBefore}) are
 * admitted at their time, and every 5 poll intervals a tenant's delayed tasks filed by others are
 * looked for. The domain's due schedule ticks are filed in each tenant as a {@link WorkerPool}
 * files its own (its next tick read about once a second, filed when due, each tick once however
 * many processes run), and {@link Builder#purgeEvery} purges each tenant's domain that has a
 * retention.
 *
 * <p>Tasks run as in a {@link WorkerPool}, by the same code: a turn claims in one statement ({@link
 * WorkerPort#claimTasks}); each running task's lease is extended every third of the lease, a
 * refused heartbeat marks it lost and interrupts the handler; {@link Outcome#done()} completes (the
 * completions of one tenant gathered into one {@link WorkerPort#completeAvailable}), a failure is
 * recorded with {@link WorkerPort#fail} under {@link Builder#retry(RetryPolicy)}: retried after its
 * backoff, a dead letter with its last error after the maximum. A claim that takes a task over from
 * an expired lease (its worker died or stalled) records that attempt as failed, "lease expired",
 * without running the handler. {@link Builder#metrics(WorkerMetrics)} gets the same meters as a
 * {@link WorkerPool}'s (tagged with the domain, over all tenants; no depth sample). Every call asks
 * the directory for the tenant's ledger. Thread-safe.
 */
public final class TenantWorkerPool implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(TenantWorkerPool.class);

  private final TenantDirectory directory;
  private final String domain;
  private final TenantTaskHandler handler;
  private final String holder;
  private final int concurrency;
  private final int quantum;
  private final int perTenant;
  private final Duration lease;
  private final Duration pollInterval;
  private final Duration shutdownTimeout;
  private final TaskRunner runner;

  private final Semaphore permits;
  private final Object signal = new Object();
  private final Map<String, Slot> slots = new HashMap<>();
  private final AtomicInteger turns = new AtomicInteger();
  private volatile boolean stopping;
  private volatile boolean started;
  private Thread dispatcher;
  private String after = "";

  /** What the dispatcher knows of one tenant; read and written under {@link #signal}. */
  private static final class Slot {
    long nextClaim = System.nanoTime();
    long nextDueCheck = System.nanoTime();

    /** When to look at the tenant's due schedule ticks again ({@link TickFiler}). */
    long nextTickCheck = System.nanoTime();

    int inFlight;
    int empty;
    boolean idle = true;
    String refusal;

    /** When the tenant's domain controls held its last claim back: when to claim again. */
    Long heldUntil;
  }

  private final WorkerMetrics metrics;
  private final PoolPurger purger;

  private TenantWorkerPool(Builder b) {
    PoolSettings settings = b.settings("tenants-" + ProcessHandle.current().pid());
    this.directory = b.directory;
    this.domain = b.domain;
    this.handler = b.handler;
    this.holder = settings.holder();
    this.concurrency = settings.concurrency();
    this.quantum = b.quantum;
    this.perTenant = b.perTenant > 0 ? b.perTenant : settings.concurrency();
    this.lease = settings.lease();
    this.pollInterval = settings.pollInterval();
    this.metrics = settings.metrics();
    this.shutdownTimeout = settings.shutdownTimeout();
    this.permits = new Semaphore(concurrency);
    this.runner = new TaskRunner(LOG, "ledger tenant worker", settings, new Hooks());
    this.purger = new PoolPurger(LOG, this::purgeTargets, b.purgeEvery);
  }

  /** The pool's domain in each tenant served now (a tenant refused: its failure, logged). */
  private List<PoolPurger.Target> purgeTargets() {
    List<PoolPurger.Target> out = new ArrayList<>();
    for (String tenant : directory.served()) {
      try {
        out.add(new PoolPurger.Target("tenant " + tenant, directory.ledger(tenant), domain, null));
      } catch (RuntimeException e) {
        out.add(new PoolPurger.Target("tenant " + tenant, null, domain, e));
      }
    }
    return out;
  }

  /** What the shared execution path asks of this pool. */
  private final class Hooks implements TaskRunner.Pool {
    @Override
    public Ledger ledger(RunningTask r) {
      return directory.ledger(r.tenant);
    }

    @Override
    public Outcome handle(RunningTask r, Task task, TaskContext ctx) throws Exception {
      return handler.handle(r.tenant, task, ctx);
    }

    @Override
    public void retryFiled(RunningTask r, Instant at) {
      retryAt(r.tenant, at);
    }

    @Override
    public boolean accepting() {
      return !stopping;
    }

    @Override
    public void done(RunningTask r) {
      synchronized (signal) {
        Slot s = slots.get(r.tenant);
        if (s != null) {
          s.inFlight--;
        }
        permits.release();
        signal.notifyAll();
      }
    }
  }

  /**
   * A builder for a pool over a directory.
   *
   * @param directory the open tenant directory, not null; the pool does not close it
   * @return the builder
   */
  public static Builder builder(TenantDirectory directory) {
    if (directory == null) {
      throw new InvalidInputException("directory", "must not be null");
    }
    return new Builder(directory);
  }

  /**
   * The domain served in every tenant.
   *
   * @return the domain
   */
  public String domain() {
    return domain;
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
   * How many tasks the pool runs now, over all tenants.
   *
   * @return 0 to the concurrency
   */
  public int inFlight() {
    return runner.inFlight();
  }

  /**
   * How many claim turns the dispatcher took so far (one tenant asked for up to a quantum).
   *
   * @return the count
   */
  public int turns() {
    return turns.get();
  }

  private synchronized TenantWorkerPool start() {
    if (started) {
      throw new IllegalStateException("the pool was started before");
    }
    started = true;
    String prefix = "ledger-tenant-worker-" + holder;
    runner.start(prefix, concurrency, concurrency);
    dispatcher = new Thread(this::dispatch, prefix + "-claim");
    dispatcher.setDaemon(true);
    dispatcher.start();
    purger.start(prefix);
    LOG.info(
        "ledger tenant worker {} started: domain {} over {} tenants, concurrency {}, quantum {},"
            + " at most {} per tenant, lease {}, poll {}",
        holder,
        domain,
        directory.served().size(),
        concurrency,
        quantum,
        perTenant,
        lease,
        pollInterval);
    return this;
  }

  private void dispatch() {
    while (!stopping) {
      try {
        boolean claimed = turnOverTenants();
        if (!claimed) {
          awaitWork();
        }
      } catch (RuntimeException e) {
        if (stopping) {
          break;
        }
        LOG.warn("ledger tenant worker {}: dispatching failed, retrying", holder, e);
        TaskRunner.pause(pollInterval);
      }
    }
  }

  /**
   * One pass over the served tenants in turn, starting after the last tenant served; each eligible
   * tenant is asked for up to a quantum. Returns whether any task was claimed.
   */
  private boolean turnOverTenants() {
    List<String> tenants = order(follow(directory.served()));
    fileTicks(tenants);
    long now = System.nanoTime();
    List<String> eligible = new ArrayList<>();
    synchronized (signal) {
      for (String t : tenants) {
        Slot s = slots.get(t);
        if (s != null && now - s.nextClaim >= 0 && s.inFlight < perTenant) {
          eligible.add(t);
        }
      }
    }
    boolean claimed = false;
    for (int k = 0; k < eligible.size(); k++) {
      int free = permits.availablePermits();
      if (stopping || free == 0) {
        break;
      }
      String tenant = eligible.get(k);
      // the free threads shared by the tenants still to ask this turn, a quantum at least: a
      // tenant alone with work gets them all, many tenants get a quantum each in turn
      int share = Math.max(quantum, free / (eligible.size() - k));
      int ask;
      boolean dueCheck;
      synchronized (signal) {
        Slot s = slots.get(tenant);
        if (s == null) {
          continue;
        }
        ask = Math.min(Math.min(share, perTenant - s.inFlight), free);
        dueCheck = System.nanoTime() - s.nextDueCheck >= 0;
      }
      if (ask <= 0) {
        continue;
      }
      int got = claim(tenant, ask, dueCheck);
      synchronized (signal) {
        Slot s = slots.get(tenant);
        if (s != null) {
          // a claim can come back empty while work waits (its candidates were locked by
          // transactions finishing other tasks, and skipped): a tenant rests a poll interval
          // only after two empty claims in a row, or one after it was found empty before
          s.empty = got == 0 ? s.empty + 1 : 0;
          if (s.heldUntil != null) {
            s.nextClaim = s.heldUntil; // no loop on a paused or limited domain
          } else if (s.empty >= 2 || (got == 0 && s.idle)) {
            s.nextClaim = System.nanoTime() + pollInterval.toNanos();
            s.idle = true;
          } else if (got > 0) {
            s.idle = false;
          }
        }
      }
      if (got > 0) {
        claimed = true;
        after = tenant;
      }
    }
    return claimed;
  }

  /** Makes the slots match the tenants the directory serves now. */
  private List<String> follow(List<String> served) {
    Set<String> now = new HashSet<>(served);
    synchronized (signal) {
      for (String t : served) {
        slots.computeIfAbsent(t, k -> new Slot());
      }
      slots.entrySet().removeIf(e -> !now.contains(e.getKey()) && e.getValue().inFlight == 0);
    }
    return served;
  }

  /** The tenants (sorted) rotated to start after the one served last. */
  private List<String> order(List<String> sorted) {
    int i = 0;
    while (i < sorted.size() && sorted.get(i).compareTo(after) <= 0) {
      i++;
    }
    List<String> out = new ArrayList<>(sorted.size());
    out.addAll(sorted.subList(i, sorted.size()));
    out.addAll(sorted.subList(0, i));
    return out;
  }

  /**
   * Files the due schedule ticks of each tenant whose check time has come ({@link TickFiler}); a
   * tenant that got tasks is claimed from at once. A tenant the directory refuses is looked at
   * again a second later.
   */
  private void fileTicks(List<String> tenants) {
    for (String tenant : tenants) {
      if (stopping) {
        return;
      }
      synchronized (signal) {
        Slot s = slots.get(tenant);
        if (s == null || System.nanoTime() - s.nextTickCheck < 0) {
          continue;
        }
      }
      TickFiler.Result r;
      try {
        r = TickFiler.fileDue(LOG, holder, tenant, directory.ledger(tenant), domain);
      } catch (RuntimeException e) {
        // the tenant is unavailable: its claims say so (refused); look again a second later
        r = new TickFiler.Result(0, Instant.now().plus(TickFiler.RECHECK));
      }
      long at =
          System.nanoTime() + Math.max(0, Duration.between(Instant.now(), r.nextCheck()).toNanos());
      synchronized (signal) {
        Slot s = slots.get(tenant);
        if (s != null) {
          s.nextTickCheck = at;
          if (r.filed() > 0) {
            s.nextClaim = System.nanoTime();
            s.empty = 0;
          }
        }
      }
    }
  }

  /** One turn: claims up to {@code ask} tasks of a tenant and hands them to threads. */
  private int claim(String tenant, int ask, boolean dueCheck) {
    turns.incrementAndGet();
    List<RunningTask> claimed;
    try {
      Ledger ledger = directory.ledger(tenant);
      if (dueCheck) {
        admitDue(tenant, ledger);
      }
      claimed = runner.claim(ledger, tenant, domain, ask);
      served(tenant);
      // held back by the domain's controls (paused, a limit reached): claim again at the recheck
      java.util.Optional<java.util.Map.Entry<String, Duration>> held =
          claimed.size() < ask ? ledger.worker().heldBack(domain) : java.util.Optional.empty();
      metrics.heldBack(domain, held.map(java.util.Map.Entry::getKey).orElse(null));
      synchronized (signal) {
        Slot s = slots.get(tenant);
        if (s != null) {
          s.heldUntil =
              held.map(
                      h ->
                          System.nanoTime()
                              + Math.min(h.getValue().toNanos(), pollInterval.toNanos()))
                  .orElse(null);
        }
      }
    } catch (TenantUnavailableException e) {
      refused(tenant, e.reason().wire(), e.getMessage());
      rest(tenant);
      return 0;
    } catch (LedgerException e) {
      refused(tenant, "claim failed", e.getMessage());
      rest(tenant);
      return 0;
    }
    for (RunningTask r : claimed) {
      permits.acquireUninterruptibly();
      synchronized (signal) {
        Slot s = slots.get(tenant);
        if (s != null) {
          s.inFlight++;
        }
      }
      runner.submit(r);
    }
    return claimed.size();
  }

  /** A refused tenant is asked again a poll interval later. */
  private void rest(String tenant) {
    synchronized (signal) {
      Slot s = slots.get(tenant);
      if (s != null) {
        s.idle = true;
        s.empty = 2;
      }
    }
  }

  private void admitDue(String tenant, Ledger ledger) {
    List<String> ids;
    do {
      ids = ledger.worker().admitDue(domain, 1000);
    } while (ids.size() == 1000 && !stopping);
    Instant next = ledger.worker().nextDue(domain).orElse(null);
    long recheck = System.nanoTime() + pollInterval.toNanos() * 5;
    if (next != null) {
      long untilDue = Duration.between(Instant.now(), next).toNanos();
      recheck = Math.min(recheck, System.nanoTime() + Math.max(0, untilDue));
    }
    synchronized (signal) {
      Slot s = slots.get(tenant);
      if (s != null) {
        s.nextDueCheck = recheck;
      }
    }
  }

  /** Logs a tenant skipped, once per reason until it is served again. */
  private void refused(String tenant, String reason, String message) {
    synchronized (signal) {
      Slot s = slots.get(tenant);
      if (s == null || reason.equals(s.refusal)) {
        return;
      }
      s.refusal = reason;
    }
    LOG.warn(
        "ledger tenant worker {}: tenant {} skipped ({}), tried again every {}: {}",
        holder,
        tenant,
        reason,
        pollInterval,
        message);
  }

  private void served(String tenant) {
    String was;
    synchronized (signal) {
      Slot s = slots.get(tenant);
      was = s == null ? null : s.refusal;
      if (s != null) {
        s.refusal = null;
      }
    }
    if (was != null) {
      LOG.info("ledger tenant worker {}: tenant {} served again", holder, tenant);
    }
  }

  /** Waits until a thread frees, or the next tenant is due a claim (at most a poll interval). */
  private void awaitWork() {
    synchronized (signal) {
      long now = System.nanoTime();
      long wait = pollInterval.toNanos();
      for (Slot s : slots.values()) {
        wait = Math.min(wait, Math.max(0, s.nextTickCheck - now));
      }
      if (permits.availablePermits() > 0) {
        for (Slot s : slots.values()) {
          if (s.inFlight < perTenant) {
            wait = Math.min(wait, Math.max(0, Math.min(s.nextClaim, s.nextDueCheck) - now));
          }
        }
      }
      if (wait <= 0 || stopping) {
        return;
      }
      try {
        TimeUnit.NANOSECONDS.timedWait(signal, wait);
      } catch (InterruptedException e) {
        // close() interrupts to stop
      }
    }
  }

  private void retryAt(String tenant, Instant at) {
    long in = Math.max(0, Duration.between(Instant.now(), at).toNanos());
    synchronized (signal) {
      Slot s = slots.get(tenant);
      if (s != null && System.nanoTime() + in - s.nextDueCheck < 0) {
        s.nextDueCheck = System.nanoTime() + in;
      }
      signal.notifyAll();
    }
  }

  /** {@link #close(Duration)} with the builder's shutdown timeout. */
  @Override
  public void close() {
    close(shutdownTimeout);
  }

  /**
   * Stops claiming, gives back the claimed tasks no handler has started, waits up to {@code
   * timeout} for the running handlers to finish and record their outcomes (and at least 5 s for the
   * completions of those that finished), then interrupts the rest and releases their leases,
   * returning about 200 ms after the timeout at the latest. Idempotent. Does not close the
   * directory.
   *
   * @param timeout how long to wait for running handlers, zero or more
   * @return true when every started handler finished in time
   * @throws dev.ledger.InvalidInputException naming {@code timeout} when it is null or negative
   */
  public boolean close(Duration timeout) {
    TaskRunner.checkTimeout(timeout);
    synchronized (this) {
      if (stopping || !started) {
        stopping = true;
        return true;
      }
      stopping = true;
    }
    synchronized (signal) {
      signal.notifyAll();
    }
    TaskRunner.join(dispatcher, Duration.ofSeconds(30));
    purger.close();
    boolean clean = runner.stop(timeout);
    LOG.info("ledger tenant worker {} stopped{}", holder, clean ? "" : " (some tasks released)");
    return clean;
  }

  /** Builds a {@link TenantWorkerPool}; every setting is checked when it is set. */
  public static final class Builder extends PoolBuilder<Builder> {
    private final TenantDirectory directory;
    private String domain;
    private TenantTaskHandler handler;
    private int quantum = 1;
    private int perTenant;
    private Duration purgeEvery;

    private Builder(TenantDirectory directory) {
      super(Duration.ofSeconds(1));
      this.directory = directory;
    }

    @Override
    Builder self() {
      return this;
    }

    /**
     * The domain served in every tenant, and its handler (required).
     *
     * @param domain the domain name
     * @param handler runs each task, told its tenant; not null
     * @return this builder
     */
    public Builder domain(String domain, TenantTaskHandler handler) {
      Validation.domain(domain);
      if (handler == null) {
        throw new InvalidInputException("handler", "must not be null");
      }
      this.domain = domain;
      this.handler = handler;
      return this;
    }

    /**
     * The most tasks one tenant gets per turn. Default 1 (strict round-robin); more claims in fewer
     * statements and is less fair.
     *
     * @param tasks 1 to 100
     * @return this builder
     */
    public Builder quantum(int tasks) {
      this.quantum = range("quantum", tasks, 1, 100);
      return this;
    }

    /**
     * The most tasks of one tenant running at once. Default: the concurrency (a lone busy tenant
     * may use every thread; others still get every other turn).
     *
     * @param tasks 1 to the concurrency
     * @return this builder
     */
    public Builder maxPerTenant(int tasks) {
      if (tasks < 1) {
        throw new InvalidInputException("max_per_tenant", "must be at least 1, was " + tasks);
      }
      this.perTenant = tasks;
      return this;
    }

    /**
     * Purges the domain in every tenant served, when the tenant's ledger gives it a retention,
     * every {@code period}, on a thread of its own ({@link dev.ledger.retention.Retention#purge},
     * docs/retention.md); the first purge one period after the start. Off by default; every process
     * may turn it on (concurrent purges of a domain skip each other). A tenant the directory
     * refuses is logged and tried again next period.
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
     * Starts the pool: its dispatcher begins claiming at once.
     *
     * @return the running pool; the caller closes it
     * @throws InvalidInputException when no domain was given, or {@code maxPerTenant} exceeds the
     *     concurrency
     */
    public TenantWorkerPool start() {
      if (domain == null) {
        throw new InvalidInputException("domain", "required: the domain served in every tenant");
      }
      if (perTenant > concurrency) {
        throw new InvalidInputException(
            "max_per_tenant",
            "must not exceed the concurrency (" + concurrency + "), was " + perTenant);
      }
      return new TenantWorkerPool(this).start();
    }
  }
}

package dev.ledger.worker;

import dev.ledger.FailureRecord;
import dev.ledger.InvalidInputException;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.LeaseLostException;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
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
 * looked for.
 *
 * <p>Outcomes are recorded as {@link WorkerPool} records them: {@link Outcome#done()} completes, a
 * failure is recorded with {@link Ledger#fail} under {@link Builder#retry(RetryPolicy)}. Every call
 * asks the directory for the tenant's ledger. Leases are extended every third of the lease.
 * Thread-safe.
 */
public final class TenantWorkerPool implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(TenantWorkerPool.class);

  private final TenantDirectory directory;
  private final String domain;
  private final TenantTaskHandler handler;
  private final String holder;
  private final List<String> manifest;
  private final Label handling;
  private final int concurrency;
  private final int quantum;
  private final int perTenant;
  private final Duration lease;
  private final Duration pollInterval;
  private final RetryPolicy retry;
  private final Duration shutdownTimeout;

  private final Semaphore permits;
  private final Object signal = new Object();
  private final Map<String, Slot> slots = new HashMap<>();
  private final Set<Running> running = ConcurrentHashMap.newKeySet();
  private final AtomicInteger turns = new AtomicInteger();
  private volatile boolean stopping;
  private volatile boolean started;
  private ThreadPoolExecutor workers;
  private ScheduledExecutorService timers;
  private Thread dispatcher;
  private String after = "";

  /** What the dispatcher knows of one tenant; read and written under {@link #signal}. */
  private static final class Slot {
    long nextClaim = System.nanoTime();
    long nextDueCheck = System.nanoTime();
    int inFlight;
    int empty;
    boolean idle = true;
    String refusal;
  }

  private TenantWorkerPool(Builder b) {
    this.directory = b.directory;
    this.domain = b.domain;
    this.handler = b.handler;
    this.holder = b.holder != null ? b.holder : "tenants-" + ProcessHandle.current().pid();
    this.manifest = List.copyOf(b.manifest);
    this.handling = b.handling;
    this.concurrency = b.concurrency;
    this.quantum = b.quantum;
    this.perTenant = b.perTenant > 0 ? b.perTenant : b.concurrency;
    this.lease = b.lease;
    this.pollInterval = b.pollInterval;
    this.retry = b.retry;
    this.shutdownTimeout = b.shutdownTimeout;
    this.permits = new Semaphore(concurrency);
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
    return running.size();
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
    AtomicInteger n = new AtomicInteger();
    String prefix = "ledger-tenant-worker-" + holder;
    workers =
        new ThreadPoolExecutor(
            concurrency,
            concurrency,
            0,
            TimeUnit.MILLISECONDS,
            new LinkedBlockingQueue<>(concurrency),
            r -> daemon(r, prefix + "-" + n.incrementAndGet()));
    timers = Executors.newScheduledThreadPool(1, r -> daemon(r, prefix + "-heartbeat"));
    dispatcher = daemon(this::dispatch, prefix + "-claim");
    dispatcher.start();
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
        pause(pollInterval);
      }
    }
  }

  /**
   * One pass over the served tenants in turn, starting after the last tenant served; each eligible
   * tenant is asked for up to a quantum. Returns whether any task was claimed.
   */
  private boolean turnOverTenants() {
    List<String> tenants = order(follow(directory.served()));
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
          if (s.empty >= 2 || (got == 0 && s.idle)) {
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

  /** One turn: claims up to {@code ask} tasks of a tenant and hands them to threads. */
  private int claim(String tenant, int ask, boolean dueCheck) {
    turns.incrementAndGet();
    List<Lease> leases;
    try {
      Ledger ledger = directory.ledger(tenant);
      if (dueCheck) {
        admitDue(tenant, ledger);
      }
      // only the claim on the dispatcher: each worker reads its task, so the next turn comes sooner
      leases = ledger.claimBatch(domain, holder, lease, manifest, handling, ask);
      served(tenant);
    } catch (TenantUnavailableException e) {
      refused(tenant, e.reason().wire(), e.getMessage());
      rest(tenant);
      return 0;
    } catch (LedgerException e) {
      refused(tenant, "claim failed", e.getMessage());
      rest(tenant);
      return 0;
    }
    for (Lease l : leases) {
      permits.acquireUninterruptibly();
      Running r = new Running(tenant, l);
      synchronized (signal) {
        Slot s = slots.get(tenant);
        if (s != null) {
          s.inFlight++;
        }
      }
      running.add(r);
      workers.execute(() -> run(r));
    }
    return leases.size();
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
      ids = ledger.admitDue(domain, 1000);
    } while (ids.size() == 1000 && !stopping);
    Instant next = ledger.nextDue(domain).orElse(null);
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

  private final class Running {
    final String tenant;
    final Lease claimed;
    volatile TaskContext context;
    Thread thread;
    boolean finished;
    ScheduledFuture<?> heartbeat;

    Running(String tenant, Lease claimed) {
      this.tenant = tenant;
      this.claimed = claimed;
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

    synchronized void finish() {
      finished = true;
      thread = null;
      Thread.interrupted();
    }

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

  private void run(Running r) {
    try {
      if (!r.begin()) {
        return;
      }
      List<Task> read = directory.ledger(r.tenant).tasks(domain, List.of(r.claimed.taskId()));
      if (read.isEmpty()) {
        throw new IllegalStateException("the task claimed is not in its domain any more");
      }
      Task task = read.get(0);
      int attempt = WorkerPool.attemptOf(task);
      int max = task.spec().maxAttempts() > 0 ? task.spec().maxAttempts() : retry.maxAttempts();
      TaskContext ctx = new TaskContext(task, r.claimed, attempt, max);
      r.context = ctx;
      long every = Math.max(1, lease.toMillis() / 3);
      r.heartbeat = timers.scheduleAtFixedRate(() -> beat(r), every, every, TimeUnit.MILLISECONDS);
      Outcome outcome;
      try {
        outcome = handler.handle(r.tenant, task, ctx);
        if (outcome == null) {
          outcome = Outcome.failed("the handler returned no outcome (null)");
        }
      } catch (Throwable t) {
        if (t instanceof Error && !(t instanceof AssertionError)) {
          LOG.error("ledger tenant worker {}: handler of task {} threw", holder, task.id(), t);
        }
        outcome = Outcome.failed(WorkerPool.describe(t));
      } finally {
        r.finish();
        r.heartbeat.cancel(false);
      }
      if (ctx.leaseLost()) {
        return;
      }
      Ledger ledger = directory.ledger(r.tenant);
      if (outcome instanceof Outcome.Done d) {
        try {
          ledger.complete(ctx.lease(), d.handoff());
          return;
        } catch (InvalidInputException refused) {
          // a handoff the ledger refuses (over the limit, a NUL): the attempt failed with that
          // reason, retried or a dead letter, instead of a lease left to run out
          outcome = Outcome.failed("its result was refused: " + refused.getMessage());
        }
      }
      String error = ((Outcome.Failed) outcome).error();
      FailureRecord f =
          ledger.fail(
              ctx.lease(),
              error.length() > 50_000 ? error.substring(0, 50_000) : error,
              retry.maxAttempts(),
              retry.delayAfter(ctx.attempt()));
      if (f.deadLetter()) {
        LOG.warn(
            "ledger tenant worker {}: task {} of tenant {} is a dead letter after {} attempts",
            holder,
            f.taskId(),
            r.tenant,
            f.attempt());
      } else {
        retryAt(r.tenant, f.retryAt());
      }
    } catch (LeaseLostException e) {
      LOG.warn("ledger tenant worker {}: tenant {}: {}", holder, r.tenant, e.getMessage());
    } catch (RuntimeException e) {
      LOG.warn(
          "ledger tenant worker {}: task {} of tenant {} could not be run or recorded ({}); its"
              + " lease runs out",
          holder,
          r.claimed.taskId(),
          r.tenant,
          e.getMessage());
    } finally {
      done(r);
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

  private void done(Running r) {
    running.remove(r);
    synchronized (signal) {
      Slot s = slots.get(r.tenant);
      if (s != null) {
        s.inFlight--;
      }
      permits.release();
      signal.notifyAll();
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
      ctx.extended(directory.ledger(r.tenant).heartbeat(ctx.lease(), lease));
    } catch (LeaseLostException e) {
      LOG.warn("ledger tenant worker {}: lease lost while running: {}", holder, e.getMessage());
      r.lose(e);
      if (r.heartbeat != null) {
        r.heartbeat.cancel(false);
      }
    } catch (RuntimeException e) {
      LOG.warn(
          "ledger tenant worker {}: heartbeat of task {} of tenant {} failed ({}); trying again",
          holder,
          r.claimed.taskId(),
          r.tenant,
          e.getMessage());
    }
  }

  /** {@link #close(Duration)} with the builder's shutdown timeout. */
  @Override
  public void close() {
    close(shutdownTimeout);
  }

  /**
   * Stops claiming, waits up to {@code timeout} for the running handlers, then interrupts the rest
   * and releases their leases. Idempotent. Does not close the directory.
   *
   * @param timeout how long to wait for running handlers
   * @return true when every handler finished in time
   */
  public boolean close(Duration timeout) {
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
    dispatcher.interrupt();
    try {
      dispatcher.join(30_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    workers.shutdown();
    boolean clean;
    try {
      clean = workers.awaitTermination(Math.max(0, timeout.toMillis()), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      clean = false;
    }
    if (!clean) {
      List<Running> left = new ArrayList<>(running);
      LOG.warn(
          "ledger tenant worker {}: {} tasks still running after {}; interrupting them and"
              + " releasing their leases",
          holder,
          left.size(),
          timeout);
      for (Running r : left) {
        r.lose(new LeaseLostException(r.lease(), "finish", "released because its pool closed"));
        try {
          directory.ledger(r.tenant).release(r.lease());
        } catch (RuntimeException e) {
          LOG.warn(
              "ledger tenant worker {}: releasing task {} of tenant {} failed; its lease runs out",
              holder,
              r.claimed.taskId(),
              r.tenant);
        }
      }
      workers.shutdownNow();
    }
    timers.shutdownNow();
    LOG.info("ledger tenant worker {} stopped{}", holder, clean ? "" : " (some tasks released)");
    return clean;
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  private static void pause(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Builds a {@link TenantWorkerPool}; every setting is checked when it is set. */
  public static final class Builder {
    private final TenantDirectory directory;
    private String domain;
    private TenantTaskHandler handler;
    private String holder;
    private List<String> manifest = List.of();
    private Label handling = Label.PUBLIC;
    private int concurrency = 4;
    private int quantum = 1;
    private int perTenant;
    private Duration lease = Duration.ofSeconds(30);
    private Duration pollInterval = Duration.ofSeconds(1);
    private RetryPolicy retry = RetryPolicy.DEFAULT;
    private Duration shutdownTimeout = Duration.ofSeconds(30);

    private Builder(TenantDirectory directory) {
      this.directory = directory;
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
     * The holder name claims are made as. Default {@code tenants-<pid>}.
     *
     * @param holder 1 to {@value Validation#MAX_NAME} characters
     * @return this builder
     */
    public Builder holder(String holder) {
      Validation.required("holder", holder, Validation.MAX_NAME);
      this.holder = holder;
      return this;
    }

    /**
     * What the pool's handlers can do (claims only tasks whose requirements it covers). Default
     * none.
     *
     * @param manifest the capabilities, not null
     * @return this builder
     */
    public Builder manifest(List<String> manifest) {
      if (manifest == null) {
        throw new InvalidInputException("manifest", "must not be null");
      }
      this.manifest = List.copyOf(manifest);
      return this;
    }

    /**
     * The highest label the pool may handle. Default {@link Label#PUBLIC}.
     *
     * @param handling the label, not null
     * @return this builder
     */
    public Builder handling(Label handling) {
      if (handling == null) {
        throw new InvalidInputException("handling", "must not be null");
      }
      this.handling = handling;
      return this;
    }

    /**
     * Worker threads, shared by all tenants. Default 4.
     *
     * @param threads 1 to 256
     * @return this builder
     */
    public Builder concurrency(int threads) {
      if (threads < 1 || threads > 256) {
        throw new InvalidInputException("concurrency", "must be between 1 and 256");
      }
      this.concurrency = threads;
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
      if (tasks < 1 || tasks > 100) {
        throw new InvalidInputException("quantum", "must be between 1 and 100");
      }
      this.quantum = tasks;
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
        throw new InvalidInputException("maxPerTenant", "must be at least 1");
      }
      this.perTenant = tasks;
      return this;
    }

    /**
     * How long each lease lasts; extended every third of it while the handler runs. Default 30 s.
     *
     * @param lease at least 1 s
     * @return this builder
     */
    public Builder lease(Duration lease) {
      if (lease == null || lease.compareTo(Duration.ofSeconds(1)) < 0) {
        throw new InvalidInputException("lease", "must be at least 1 s");
      }
      this.lease = lease;
      return this;
    }

    /**
     * How soon a tenant whose last claim found nothing (or that was refused) is asked again.
     * Default 1 s.
     *
     * @param interval at least 10 ms
     * @return this builder
     */
    public Builder pollInterval(Duration interval) {
      if (interval == null || interval.toMillis() < 10) {
        throw new InvalidInputException("pollInterval", "must be at least 10 ms");
      }
      this.pollInterval = interval;
      return this;
    }

    /**
     * How failed attempts are retried. Default {@link RetryPolicy#DEFAULT}.
     *
     * @param retry the policy, not null
     * @return this builder
     */
    public Builder retry(RetryPolicy retry) {
      if (retry == null) {
        throw new InvalidInputException("retry", "must not be null");
      }
      this.retry = retry;
      return this;
    }

    /**
     * How long {@link TenantWorkerPool#close()} waits for running handlers. Default 30 s.
     *
     * @param timeout zero or more
     * @return this builder
     */
    public Builder shutdownTimeout(Duration timeout) {
      if (timeout == null || timeout.isNegative()) {
        throw new InvalidInputException("shutdownTimeout", "must be zero or more");
      }
      this.shutdownTimeout = timeout;
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
        throw new InvalidInputException("maxPerTenant", "must not exceed the concurrency");
      }
      return new TenantWorkerPool(this).start();
    }
  }
}

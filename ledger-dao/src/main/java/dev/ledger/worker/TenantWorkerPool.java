package dev.ledger.worker;

import dev.ledger.InvalidInputException;
import dev.ledger.Ledger;
import dev.ledger.Task;
import dev.ledger.Validation;
import dev.ledger.tenants.TenantDirectory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
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

  private final TenantDispatcher dispatcher;
  private volatile boolean stopping;
  private volatile boolean started;
  private Thread dispatcherThread;

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
    this.shutdownTimeout = settings.shutdownTimeout();
    this.runner = new TaskRunner(LOG, "ledger tenant worker", settings, new Hooks());
    this.dispatcher =
        new TenantDispatcher(
            LOG,
            directory,
            domain,
            holder,
            concurrency,
            quantum,
            perTenant,
            pollInterval,
            settings.metrics(),
            runner);
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
      dispatcher.retryAt(r.tenant, at);
    }

    @Override
    public boolean accepting() {
      return !stopping;
    }

    @Override
    public void done(RunningTask r) {
      dispatcher.taskDone(r.tenant);
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
    return dispatcher.turns();
  }

  private synchronized TenantWorkerPool start() {
    if (started) {
      throw new IllegalStateException("the pool was started before");
    }
    started = true;
    String prefix = "ledger-tenant-worker-" + holder;
    runner.start(prefix, concurrency, concurrency);
    dispatcherThread = new Thread(dispatcher, prefix + "-claim");
    dispatcherThread.setDaemon(true);
    dispatcherThread.start();
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
    dispatcher.stop();
    TaskRunner.join(dispatcherThread, Duration.ofSeconds(30));
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

package dev.ledger.tenants;

import dev.ledger.Ledger;
import dev.ledger.LedgerStorageException;
import dev.ledger.migrate.Fleet;
import dev.ledger.migrate.MigrationException;
import dev.ledger.migrate.TenantRegistry;
import dev.ledger.migrate.TenantStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves every tenant of a fleet at run time (the serving half of the reference reconciler, {@code
 * reconcile.rs}): opened on the control database, it holds one small pool and one {@link Ledger}
 * per {@code active} tenant of the registry, and refuses every other tenant with a {@link
 * TenantUnavailableException} that names the tenant and why, never its DSN.
 *
 * <pre>{@code
 * try (TenantDirectory tenants = TenantDirectory.builder()
 *         .control(controlDataSource)        // the database holding the tenant registry
 *         .reconcile(true)                   // migrate the fleet at start, as boot does
 *         .connectionBudget(40)              // physical connections over all tenants
 *         .open()) {
 *   String id = tenants.ledger("acme").file(TaskSpec.builder("payments", "Reconcile").build());
 * }
 * }</pre>
 *
 * <p><b>Refresh.</b> Every {@link TenantDirectoryBuilder#refreshInterval(Duration)} (and on {@link
 * #refresh()}) the registry is read again: a tenant that became active is served, one re-pointed to
 * another database gets a new pool (the old one drains: it takes no new work and closes once its
 * connections in use are back, or after {@link TenantDirectoryBuilder#drainTimeout(Duration)}), one
 * no longer active is refused. With {@link TenantDirectoryBuilder#reconcile(boolean)}, a refresh
 * that finds a {@code provisioning} tenant migrates the fleet first ({@link Fleet#migrate()}), and
 * every {@link TenantDirectoryBuilder#retryInterval(Duration)} the {@code degraded} ones are
 * migrated again (the reference's retry timer). A control database that fails a refresh is logged;
 * the last registry read keeps serving.
 *
 * <p><b>Connections.</b> A tenant's pool opens on its first call and holds at most {@link
 * TenantDirectoryBuilder#connectionsPerTenant(int)}; idle connections close after {@link
 * TenantDirectoryBuilder#idleTimeout(Duration)}. All pools together hold at most {@link
 * TenantDirectoryBuilder#connectionBudget(int)} physical connections: when the budget is spent, the
 * pool with the most idle connections gives them up, and a pool that still gets none within the
 * connect timeout fails its call with a {@link LedgerStorageException} of SQLState {@code 53300}.
 *
 * <p><b>Servers that go away.</b> A call whose database does not answer fails within {@link
 * TenantDirectoryBuilder#connectTimeout(Duration)}; from then on the tenant is unreachable: {@link
 * #ledger(String)} refuses it at once ({@link TenantUnavailableException.Reason#UNREACHABLE}) and a
 * probe tries its database every {@link TenantDirectoryBuilder#probeInterval(Duration)} until it
 * answers, then it is served again. Only that server's tenants are affected. Use {@link
 * #call(String, Function)} to have a broken connection in the middle of a call reported the same
 * way. Never cache a tenant's {@link Ledger} across units of work: ask the directory each time (the
 * lookup is a map read), so a re-pointed or refused tenant is seen at once.
 *
 * <p>Thread-safe. {@link #close()} refuses new calls, waits up to the drain timeout for calls in
 * progress to give their connections back, and closes every pool.
 *
 * <p>Size: over 600 lines, a quarter of them documentation. One class on purpose: refreshing,
 * serving and draining share the map of served tenants and its lock; the builder ({@link
 * TenantDirectoryBuilder}), a served tenant ({@link ServedTenant}) and the connection budget
 * ({@link ConnectionBudget}) are apart already.
 */
public final class TenantDirectory implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(TenantDirectory.class);

  /** One registry row as last read, and its served state when it is active. */
  private record Entry(RegistryEntry record, ServedTenant served) {}

  private final TenantDirectoryBuilder config;
  private final TenantRegistry registry;
  private final Fleet fleet;
  private final Fleet retryingFleet;
  private final ConnectionBudget budget;
  private final ScheduledExecutorService scheduler;
  private final ExecutorService blocking;
  private final ServedTenant.Settings settings;
  private final Object refreshLock = new Object();
  private final Map<ServedTenant, Boolean> probing = new ConcurrentHashMap<>();
  private final LongAdder[] refusals =
      new LongAdder[TenantUnavailableException.Reason.values().length];
  private volatile Map<String, Entry> entries = Map.of();
  private volatile Instant lastRefresh;
  private volatile String lastRefreshError;
  private volatile boolean closed;
  private Instant lastRetry;

  TenantDirectory(TenantDirectoryBuilder b) {
    this.config = b;
    this.registry = new TenantRegistry(b.control, b.controlSchema);
    if (b.reconcile) {
      Fleet.Builder fb =
          Fleet.builder()
              .control(b.control)
              .controlSchema(b.controlSchema)
              .parallelism(b.fleetParallelism)
              .extraDomainLocations(b.extraDomainLocations);
      this.fleet = fb.build();
      this.retryingFleet = fb.retryDegraded(true).build();
    } else {
      this.fleet = null;
      this.retryingFleet = null;
    }
    AtomicInteger threads = new AtomicInteger();
    ThreadFactory factory =
        r -> {
          Thread t = new Thread(r, "ledger-tenants-" + threads.incrementAndGet());
          t.setDaemon(true);
          return t;
        };
    ScheduledThreadPoolExecutor s = new ScheduledThreadPoolExecutor(2, factory);
    s.setRemoveOnCancelPolicy(true);
    this.scheduler = s;
    this.budget = new ConnectionBudget(b.connectionBudget, scheduler);
    for (int i = 0; i < refusals.length; i++) {
      refusals[i] = new LongAdder();
    }
    this.blocking = Executors.newFixedThreadPool(4, factory);
    this.settings =
        new ServedTenant.Settings(
            budget,
            b.ledgerConfig,
            b.connectionsPerTenant,
            b.connectTimeout,
            b.idleTimeout,
            scheduler);
  }

  /**
   * A builder with the defaults: registry in {@code public}, bootstrapped at open, no fleet
   * reconciliation, refresh every 30 s, probe every second, budget 50 connections, 4 per tenant,
   * connect timeout 2 s, idle timeout 30 s, drain timeout 30 s.
   *
   * @return a new builder
   */
  public static TenantDirectoryBuilder builder() {
    return new TenantDirectoryBuilder();
  }

  /**
   * The ledger of an active tenant, its pool opened on first call.
   *
   * @param tenant the tenant id
   * @return the tenant's ledger; do not keep it across units of work
   * @throws TenantUnavailableException when the tenant is unknown, provisioning, degraded,
   *     unreachable (at once, once known to be; within the connect timeout on the first failing
   *     call), or the directory is closed
   * @throws dev.ledger.SchemaVersionException when the tenant's database is not at this library's
   *     version (the fleet has not migrated it)
   */
  public Ledger ledger(String tenant) {
    try {
      return served(tenant).ledger();
    } catch (TenantUnavailableException e) {
      throw refused(e);
    }
  }

  /**
   * The data source of an active tenant's database (its pool, within the budget), for work in the
   * caller's own transaction there: the service's own tables and {@code
   * directory.ledger(tenant).in(connection)} in one transaction. While the tenant is unreachable
   * every {@code getConnection()} fails at once (SQLState {@code 08001}). Ask again per unit of
   * work, as for {@link #ledger(String)}.
   *
   * @param tenant the tenant id
   * @return its data source; never shows the DSN
   * @throws TenantUnavailableException when the tenant is refused (see {@link #ledger(String)})
   * @throws dev.ledger.SchemaVersionException when the tenant's database is not at this library's
   *     version
   */
  public javax.sql.DataSource dataSource(String tenant) {
    try {
      ServedTenant served = served(tenant);
      served.ledger(); // refuses an unreachable tenant as ledger(tenant) does; opens its ledger
      return served.dataSource();
    } catch (TenantUnavailableException e) {
      throw refused(e);
    }
  }

  /**
   * Runs work on a tenant's ledger; a call that fails because the database stopped answering in the
   * middle (SQLState class {@code 08}, or {@code 57P01} to {@code 57P03}) marks the tenant
   * unreachable and is reported as a {@link TenantUnavailableException} of reason {@link
   * TenantUnavailableException.Reason#UNREACHABLE}.
   *
   * @param tenant the tenant id
   * @param work what to do with its ledger, not null
   * @param <T> the result type
   * @return what the work returned
   * @throws TenantUnavailableException see {@link #ledger(String)}
   */
  public <T> T call(String tenant, Function<Ledger, T> work) {
    ServedTenant served;
    Ledger ledger;
    try {
      served = served(tenant);
      ledger = served.ledger();
    } catch (TenantUnavailableException e) {
      throw refused(e);
    }
    try {
      return work.apply(ledger);
    } catch (LedgerStorageException e) {
      if (Unreachable.matches(e)) {
        served.markDown(e);
        throw refused(served.unreachable(e));
      }
      throw e;
    }
  }

  /** Counts a refusal by its reason, for {@link #refusals}. */
  private TenantUnavailableException refused(TenantUnavailableException e) {
    refusals[e.reason().ordinal()].increment();
    return e;
  }

  /**
   * How many calls were refused for a reason since the directory opened ({@link #ledger}, {@link
   * #call}, {@link #run}, {@link #dataSource}).
   *
   * @param reason the reason, not null
   * @return the count
   */
  public long refusals(TenantUnavailableException.Reason reason) {
    return refusals[reason.ordinal()].sum();
  }

  /**
   * {@link #call(String, Function)} without a result.
   *
   * @param tenant the tenant id
   * @param work what to do with its ledger, not null
   * @throws TenantUnavailableException see {@link #call(String, Function)}
   */
  public void run(String tenant, Consumer<Ledger> work) {
    call(
        tenant,
        l -> {
          work.accept(l);
          return null;
        });
  }

  /**
   * The tenants served now: active in the last registry read, with a valid DSN (reachable or not).
   * For a worker that serves one domain across all tenants: iterate these and ask {@link
   * #ledger(String)} for each, skipping those refused.
   *
   * @return the tenant ids, sorted
   */
  public List<String> served() {
    List<String> out = new ArrayList<>();
    for (Entry e : entries.values()) {
      if (e.served() != null) {
        out.add(e.record().tenant());
      }
    }
    out.sort(null);
    return out;
  }

  /**
   * Every registered tenant as the directory sees it (registry status, served, reachable,
   * connections), for health checks and metrics.
   *
   * @return the states, by tenant id
   */
  public List<TenantState> states() {
    List<TenantState> out = new ArrayList<>();
    for (Entry e : entries.values()) {
      ServedTenant s = e.served();
      out.add(
          new TenantState(
              e.record().tenant(),
              e.record().status(),
              s != null,
              s == null || s.reachable(),
              s == null ? 0 : s.openConnections(),
              s == null ? 0 : s.activeConnections()));
    }
    out.sort((a, b) -> a.tenant().compareTo(b.tenant()));
    return out;
  }

  /**
   * Physical tenant connections open now, over all pools (pools still draining included).
   *
   * @return at most {@link TenantDirectoryBuilder#connectionBudget(int)}
   */
  public int openConnections() {
    return budget.open();
  }

  /**
   * The most physical tenant connections all pools hold together.
   *
   * @return {@link TenantDirectoryBuilder#connectionBudget(int)}
   */
  public int connectionBudget() {
    return budget.limit();
  }

  /**
   * Physical tenant connections opened since the directory opened (each a server process fork and
   * an authentication): in steady state this should stay still; a count that keeps growing means
   * the budget is too small for the tenants in use.
   *
   * @return the count
   */
  public long connectionsOpened() {
    return budget.connects();
  }

  /**
   * How many times a tenant pool was told to close its idle connections because the budget was
   * spent and another tenant needed one.
   *
   * @return the count
   */
  public long budgetEvictions() {
    return budget.evictions();
  }

  /**
   * When the registry was last read successfully.
   *
   * @return the time, never null after {@link TenantDirectoryBuilder#open()}
   */
  public Instant lastRefresh() {
    return lastRefresh;
  }

  /**
   * Why the last refresh failed.
   *
   * @return the control database's error (no DSN), or null when the last refresh succeeded
   */
  public String lastRefreshError() {
    return lastRefreshError;
  }

  /**
   * Reads the registry now (reconciling first, when configured and a tenant is provisioning, or
   * degraded and the retry interval has passed), and applies it; what the background refresh does.
   * Refreshes never overlap.
   *
   * @throws MigrationException ({@link MigrationException.Reason#CONTROL_DATABASE}) when the
   *     control database fails; what was served before is still served
   * @throws TenantUnavailableException ({@link TenantUnavailableException.Reason#CLOSED}) after
   *     {@link #close()}
   */
  public void refresh() {
    synchronized (refreshLock) {
      if (closed) {
        throw closedError("(refresh)");
      }
      try {
        List<RegistryEntry> records = read();
        if (fleet != null) {
          records = reconcile(records);
        }
        apply(records);
        lastRefresh = Instant.now();
        lastRefreshError = null;
      } catch (MigrationException e) {
        lastRefreshError = e.getMessage();
        throw e;
      }
    }
  }

  private List<RegistryEntry> reconcile(List<RegistryEntry> records) {
    Instant now = Instant.now();
    boolean provisioning = records.stream().anyMatch(r -> r.status() == TenantStatus.PROVISIONING);
    boolean retryDue =
        lastRetry == null || Duration.between(lastRetry, now).compareTo(config.retryInterval) >= 0;
    boolean degraded = records.stream().anyMatch(r -> r.status() == TenantStatus.DEGRADED);
    if (degraded && retryDue) {
      lastRetry = now;
      retryingFleet.migrate();
    } else if (provisioning) {
      fleet.migrate();
    } else {
      return records;
    }
    return read();
  }

  /** The registry's rows, DSNs parsed. */
  private List<RegistryEntry> read() {
    return registry.rows().stream().map(RegistryEntry::of).toList();
  }

  /** Makes the served set match the registry read. */
  private void apply(List<RegistryEntry> records) {
    Map<String, Entry> before = entries;
    Map<String, Entry> after = new HashMap<>();
    List<ServedTenant> retired = new ArrayList<>();
    for (RegistryEntry r : records) {
      Entry old = before.get(r.tenant());
      ServedTenant kept = old == null ? null : old.served();
      ServedTenant served = null;
      if (r.status() == TenantStatus.ACTIVE && r.dsn() != null) {
        if (kept != null && kept.record().sameDatabase(r)) {
          served = kept;
          kept = null;
        } else {
          served = new ServedTenant(r, settings);
          if (kept != null) {
            LOG.info("tenant {} re-pointed: served from its new database", r.tenant());
          } else {
            LOG.info("tenant {} served", r.tenant());
          }
        }
      } else if (kept != null) {
        LOG.info("tenant {} {}: refused from now on", r.tenant(), r.status().stored());
      }
      if (kept != null) {
        retired.add(kept);
      }
      after.put(r.tenant(), new Entry(r, served));
    }
    for (Map.Entry<String, Entry> e : before.entrySet()) {
      if (!after.containsKey(e.getKey()) && e.getValue().served() != null) {
        LOG.info("tenant {} no longer registered: refused from now on", e.getKey());
        retired.add(e.getValue().served());
      }
    }
    entries = Map.copyOf(after);
    for (ServedTenant t : retired) {
      drain(t, System.nanoTime() + config.drainTimeout.toNanos());
    }
  }

  /**
   * Stops new work on a pool, then closes it once its connections are back (or at the deadline).
   */
  private void drain(ServedTenant t, long deadline) {
    t.retire();
    if (t.activeConnections() == 0 || System.nanoTime() >= deadline) {
      blocking.execute(t::close);
      return;
    }
    scheduler.schedule(() -> drain(t, deadline), 50, TimeUnit.MILLISECONDS);
  }

  private ServedTenant served(String tenant) {
    if (closed) {
      throw closedError(tenant);
    }
    Entry e = entries.get(tenant);
    if (e == null) {
      throw new TenantUnavailableException(
          tenant,
          TenantUnavailableException.Reason.UNKNOWN,
          "tenant "
              + tenant
              + " is unknown: not in the registry as of the last refresh ("
              + lastRefresh
              + "); register it (fleet register), migrate it (fleet migrate), and it is served"
              + " after the next refresh",
          null);
    }
    if (e.served() != null) {
      return e.served();
    }
    RegistryEntry r = e.record();
    throw switch (r.status()) {
      case PROVISIONING ->
          new TenantUnavailableException(
              tenant,
              TenantUnavailableException.Reason.PROVISIONING,
              "tenant "
                  + tenant
                  + " is provisioning: registered but not migrated yet; it is served once a"
                  + " fleet migrate makes it active",
              null);
      case DEGRADED ->
          new TenantUnavailableException(
              tenant,
              TenantUnavailableException.Reason.DEGRADED,
              "tenant "
                  + tenant
                  + " is degraded"
                  + (r.reason() == null ? "" : " (" + redact(r) + ")")
                  + "; it is refused until a fleet run makes it active again"
                  + " (fleet migrate --retry-degraded)",
              null);
      case ACTIVE ->
          new TenantUnavailableException(
              tenant,
              TenantUnavailableException.Reason.UNREACHABLE,
              "tenant "
                  + tenant
                  + " is unreachable: its registry DSN is not a PostgreSQL JDBC URL; register"
                  + " it again with a valid one",
              null);
    };
  }

  private static String redact(RegistryEntry r) {
    return r.dsn() == null ? r.reason() : r.dsn().redact(r.reason());
  }

  private TenantUnavailableException closedError(String tenant) {
    return new TenantUnavailableException(
        tenant,
        TenantUnavailableException.Reason.CLOSED,
        "tenant " + tenant + ": the tenant directory is closed",
        null);
  }

  /** Starts the background work: refresh and probe. */
  void start() {
    if (!config.refreshInterval.isZero()) {
      long ms = config.refreshInterval.toMillis();
      scheduler.scheduleWithFixedDelay(this::backgroundRefresh, ms, ms, TimeUnit.MILLISECONDS);
    }
    long probe = config.probeInterval.toMillis();
    scheduler.scheduleWithFixedDelay(this::probeUnreachable, probe, probe, TimeUnit.MILLISECONDS);
  }

  private void backgroundRefresh() {
    try {
      refresh();
    } catch (MigrationException e) {
      LOG.warn("tenant registry refresh failed, still serving the last read: {}", e.getMessage());
    } catch (RuntimeException e) {
      if (!closed) {
        LOG.warn(
            "tenant registry refresh failed unexpectedly ({}), still serving the last read",
            e.getClass().getSimpleName());
      }
    }
  }

  private void probeUnreachable() {
    for (Entry e : entries.values()) {
      ServedTenant s = e.served();
      if (s != null && !s.reachable() && probing.putIfAbsent(s, Boolean.TRUE) == null) {
        try {
          blocking.execute(
              () -> {
                try {
                  s.probe();
                } finally {
                  probing.remove(s);
                }
              });
        } catch (java.util.concurrent.RejectedExecutionException closing) {
          probing.remove(s);
        }
      }
    }
  }

  /**
   * Refuses new calls, stops refreshing and probing, waits up to the drain timeout for the
   * connections in use to come back, then closes every pool. Idempotent.
   */
  @Override
  public void close() {
    synchronized (refreshLock) {
      if (closed) {
        return;
      }
      closed = true;
    }
    scheduler.shutdownNow();
    long deadline = System.nanoTime() + config.drainTimeout.toNanos();
    List<ServedTenant> all = new ArrayList<>();
    for (Entry e : entries.values()) {
      if (e.served() != null) {
        e.served().retire();
        all.add(e.served());
      }
    }
    while (System.nanoTime() < deadline && all.stream().anyMatch(t -> t.activeConnections() > 0)) {
      try {
        Thread.sleep(20);
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    for (ServedTenant t : all) {
      t.close();
    }
    budget.flush();
    blocking.shutdown();
    try {
      if (!blocking.awaitTermination(config.drainTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
        blocking.shutdownNow();
      }
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
      blocking.shutdownNow();
    }
    LOG.info("tenant directory closed ({} tenant pools)", all.size());
  }
}

package dev.ledger.migrate;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fleet reconciler (docs/migration-job.md; ports the reference's {@code reconcile.rs}): for
 * every tenant of a control database's registry ({@link TenantRegistry}: the reference's {@code
 * harness_tenants}, so both reconcilers see one fleet) whose status is {@code active} or {@code
 * provisioning}, runs the {@link MigrationJob} on the tenant's own database, at most {@code
 * parallelism} tenants at once (default 8).
 *
 * <pre>{@code
 * Fleet fleet = Fleet.builder().control(controlDataSource).parallelism(8).build();
 * fleet.register("acme", "jdbc:postgresql://db1/acme?user=ledger&password=...");
 * FleetReport report = fleet.migrate();
 * }</pre>
 *
 * <p>Per tenant: a dedicated connection to its database ({@link Dsn#connect()}, never a pool's)
 * takes a session advisory lock keyed {@link AdvisoryLocks#tenantLockKey(String)} with {@code
 * pg_try_advisory_lock} and back-off, holds it for the tenant's whole run and releases it after;
 * the lock lives in the tenant's database, so one tenant never blocks another, and a run that dies
 * releases it with its connection. The job's statements and Flyway runs share a small pool of the
 * tenant's, opened on demand and closed when the tenant's run ends. A tenant that fails
 * (unreachable, an edited migration, a failed or half-built schema) is marked {@code degraded} with
 * the reason and the others go on; a degraded tenant is skipped by later runs unless retried
 * ({@link Builder#retryDegraded(boolean)}) or registered again. A tenant whose lock another run
 * (ours, or the reference reconciler's: the key is the same) holds for the whole lock timeout is
 * busy, not failed: it is reported skipped and {@link TenantReport#locked() locked}, its status is
 * left as it was, and the next run migrates it. Only a failure of the control database stops the
 * run: no further tenant starts.
 *
 * <p>A tenant's DSN carries credentials: it appears in no log line, report, error or exception
 * message; every text from a tenant's run passes through {@link Dsn#redact(String)}.
 *
 * <p>Size: over 600 lines, a quarter of them this documentation. One class on purpose: the run's
 * loop, the per-tenant run and the registry's status updates share the run's state (the executor,
 * the tenants' pools, the listener, the stop on a control database failure); the registry ({@link
 * TenantRegistry}), the lock ({@link JobLock}) and the report are apart already.
 */
public final class Fleet {

  private static final Logger LOG = LoggerFactory.getLogger(Fleet.class);
  private static final int MAX_PARALLELISM = 64;

  private final TenantRegistry registry;
  private final DataSource control;
  private final int parallelism;
  private final int schemaParallelism;
  private final Duration lockTimeout;
  private final boolean retryDegraded;
  private final boolean verifyAll;
  private final boolean createRegistry;
  private final String controlSchema;
  private final FleetListener listener;
  private final MigrationSets sets;

  private Fleet(Builder b) {
    this.registry = new TenantRegistry(b.control, b.controlSchema);
    this.control = b.control;
    this.parallelism = b.parallelism;
    this.schemaParallelism = b.schemaParallelism;
    this.lockTimeout = b.lockTimeout;
    this.retryDegraded = b.retryDegraded;
    this.verifyAll = b.verifyAll;
    this.createRegistry = b.createRegistry;
    this.controlSchema = b.controlSchema;
    this.listener = b.listener;
    this.sets = new MigrationSets(b.extraDomainLocations);
  }

  /**
   * A builder with the defaults: registry in {@code public} (made when absent), 8 tenants at once,
   * 2 schemas at once per tenant, lock timeout 10 minutes, degraded tenants skipped.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Registers a tenant, or re-points it: its DSN is stored and its status reset to {@code
   * provisioning} (the next {@link #migrate()} promotes it). Makes the registry first when absent,
   * whatever {@link Builder#createRegistry(boolean)} says: registering a tenant is how a fleet
   * starts.
   *
   * @param tenant the tenant id: 1 to 200 characters, no control characters
   * @param dsn its database's connection string, credentials allowed: a JDBC URL ({@code
   *     jdbc:postgresql://...}) or a libpq URI ({@code postgresql://user:password@host/db}, the
   *     form the reference reconciler can connect with too); stored as given
   * @throws IllegalArgumentException naming {@code tenant} or {@code dsn} when either is refused;
   *     the message never repeats the DSN
   * @throws MigrationException ({@link MigrationException.Reason#CONTROL_DATABASE}) when the
   *     control database fails
   */
  public void register(String tenant, String dsn) {
    checkTenant(tenant);
    Dsn.parse(dsn);
    registry.bootstrap();
    registry.register(tenant, dsn);
    LOG.info("tenant {} registered (provisioning)", tenant);
  }

  /**
   * Every registered tenant, without DSNs.
   *
   * @return the tenants, by id
   * @throws MigrationException when the control database fails, or ({@link
   *     MigrationException.Reason#NO_REGISTRY}) holds no registry and the fleet may not make one
   */
  public List<TenantInfo> list() {
    bootstrap();
    return registry.rows().stream().map(TenantRegistry.Row::info).toList();
  }

  /**
   * Migrates every active or provisioning tenant (and degraded ones when retried).
   *
   * @return the report; {@link FleetReport#controlError()} is set when the control database failed
   *     mid-run
   * @throws MigrationException when the control database cannot be bootstrapped or read, or ({@link
   *     MigrationException.Reason#NO_REGISTRY}) holds no registry and the fleet may not make one
   */
  public FleetReport migrate() {
    return run(Operation.MIGRATE);
  }

  /**
   * Says, per tenant, what a migrate would apply, under each tenant's lock, applying nothing and
   * changing no status.
   *
   * @return the report
   * @throws MigrationException when the control database cannot be bootstrapped or read, or ({@link
   *     MigrationException.Reason#NO_REGISTRY}) holds no registry and the fleet may not make one
   */
  public FleetReport plan() {
    return run(Operation.PLAN);
  }

  private FleetReport run(Operation operation) {
    Instant startedAt = Instant.now();
    long t0 = System.nanoTime();
    bootstrap();
    List<TenantRegistry.Row> rows = registry.rows();
    List<TenantReport> reports = new ArrayList<>();
    List<TenantRegistry.Row> todo = new ArrayList<>();
    for (TenantRegistry.Row row : rows) {
      if (row.status() == TenantStatus.DEGRADED && !retryDegraded) {
        reports.add(
            new TenantReport(
                row.tenant(),
                row.status(),
                row.status(),
                true,
                false,
                0,
                0,
                0,
                row.reason(),
                Duration.ZERO,
                null));
      } else {
        todo.add(row);
      }
    }
    resolveSets();
    listener.started(operation, todo.size());
    AtomicReference<MigrationException> controlFailure = new AtomicReference<>();
    AtomicInteger thread = new AtomicInteger();
    ExecutorService pool =
        Executors.newFixedThreadPool(
            Math.max(1, Math.min(parallelism, todo.size())),
            r -> {
              Thread t = new Thread(r, "ledger-fleet-" + thread.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    try {
      List<Future<TenantReport>> futures = new ArrayList<>();
      for (TenantRegistry.Row row : todo) {
        futures.add(pool.submit(() -> tenant(row, operation, controlFailure)));
      }
      for (Future<TenantReport> f : futures) {
        reports.add(f.get());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new MigrationException(
          MigrationException.Reason.DATABASE_UNAVAILABLE, "interrupted during the fleet run", null);
    } catch (ExecutionException e) {
      throw new IllegalStateException("a fleet worker failed unexpectedly", e.getCause());
    } finally {
      pool.shutdownNow();
    }
    reports.sort(Comparator.comparing(TenantReport::tenant));
    int active = (int) reports.stream().filter(r -> r.status() == TenantStatus.ACTIVE).count();
    int degraded = (int) reports.stream().filter(r -> r.status() == TenantStatus.DEGRADED).count();
    int skipped = (int) reports.stream().filter(TenantReport::skipped).count();
    int locked = (int) reports.stream().filter(TenantReport::locked).count();
    MigrationException control = controlFailure.get();
    LOG.info(
        "fleet {}: {} tenants, {} active, {} degraded ({} skipped, {} locked){}",
        operation.name().toLowerCase(java.util.Locale.ROOT),
        reports.size(),
        active,
        degraded,
        skipped,
        locked,
        control == null ? "" : "; stopped: " + control.getMessage());
    return new FleetReport(
        operation,
        startedAt,
        Duration.ofNanos(System.nanoTime() - t0),
        reports,
        active,
        degraded,
        skipped,
        locked,
        control == null ? null : control.getMessage());
  }

  /**
   * Makes or migrates the registry; with {@link Builder#createRegistry(boolean) createRegistry}
   * false, first refuses a control database that holds none (a run pointed at the wrong database
   * would otherwise leave an empty registry there and report success).
   */
  private void bootstrap() {
    if (!createRegistry && !registry.exists()) {
      throw new MigrationException(
          MigrationException.Reason.NO_REGISTRY,
          "the control database holds no tenant registry (no "
              + TenantRegistry.TABLE
              + " in schema "
              + controlSchema
              + "): it may not be a fleet's control database. Register a tenant to make the"
              + " registry, or allow the fleet to make an empty one (createRegistry)",
          null);
    }
    registry.bootstrap();
  }

  /**
   * Resolves the migration sets (and prepares the installer) once, through the control database,
   * before any tenant starts: the scripts and checksums are a property of the class path, and
   * resolving them on the first tenant's database would cost every other tenant a wait on it (over
   * a 10 ms round trip, a few hundred ms of Flyway's queries). When resolution fails here, each
   * tenant's run tries again and reports the error as its own (a bad extra location degrades every
   * tenant, with the reason).
   */
  private void resolveSets() {
    try {
      sets.directory(control);
      sets.domain(control);
      sets.newSchemas(control);
    } catch (RuntimeException e) {
      LOG.warn(
          "the migration sets could not be resolved up front ({}); each tenant's run tries again",
          MigrationJob.condense(e.getMessage()));
    }
  }

  /** One tenant's run; never throws (a control failure is recorded and stops later tenants). */
  private TenantReport tenant(
      TenantRegistry.Row row,
      Operation operation,
      AtomicReference<MigrationException> controlFailure) {
    if (controlFailure.get() != null) {
      return new TenantReport(
          row.tenant(),
          row.status(),
          row.status(),
          true,
          false,
          0,
          0,
          0,
          "not run: the control database failed",
          Duration.ZERO,
          null);
    }
    listener.tenantStarted(row.tenant());
    long t0 = System.nanoTime();
    MigrationReport report = null;
    String error;
    boolean locked = false;
    Dsn dsn = null;
    try {
      dsn = Dsn.parse(row.dsn());
      try (HikariDataSource pool = tenantPool(row.tenant(), dsn)) {
        MigrationJob job =
            MigrationJob.builder()
                .dataSource(pool)
                .lockConnections(dsn::connect)
                .lock(AdvisoryLocks.tenantLockKey(row.tenant()), "tenant " + row.tenant())
                .parallelism(schemaParallelism)
                .lockTimeout(lockTimeout)
                .sets(sets)
                .verifyAll(verifyAll)
                .build();
        report = redact(operation == Operation.MIGRATE ? job.migrate() : job.plan(), dsn);
      }
      error = report.ok() ? null : summary(report);
    } catch (MigrationException e) {
      locked = e.reason() == MigrationException.Reason.LOCK_TIMEOUT;
      error = "tenant " + row.tenant() + ": " + e.getMessage();
    } catch (IllegalArgumentException e) {
      error = "tenant " + row.tenant() + ": " + e.getMessage();
    } catch (RuntimeException e) {
      error =
          "tenant "
              + row.tenant()
              + ": unexpected "
              + e.getClass().getSimpleName()
              + ": "
              + MigrationJob.condense(e.getMessage());
    }
    error = redactText(error, dsn, row.dsn());
    TenantStatus after = row.status();
    if (operation == Operation.MIGRATE && !locked) {
      // a busy tenant is not a failed one: its status stays, and the next run migrates it
      after = error == null ? TenantStatus.ACTIVE : TenantStatus.DEGRADED;
      try {
        if (!registry.setStatus(row.tenant(), row.dsn(), after, error)) {
          after = row.status();
          LOG.info(
              "tenant {} was re-pointed or removed during its run; its status is left as the"
                  + " registry now has it",
              row.tenant());
        }
      } catch (MigrationException e) {
        controlFailure.compareAndSet(null, e);
      }
    }
    int applied = report == null ? 0 : report.counts().appliedMigrations();
    int pending =
        report == null ? 0 : report.schemas().stream().mapToInt(s -> s.pending().size()).sum();
    TenantReport out =
        new TenantReport(
            row.tenant(),
            row.status(),
            after,
            locked,
            locked,
            applied,
            pending,
            report == null ? 0 : report.counts().schemas(),
            error,
            Duration.ofNanos(System.nanoTime() - t0),
            report);
    if (error == null) {
      LOG.info(
          "tenant {} {}: {} applied, {} pending, {} schemas",
          row.tenant(),
          after.stored(),
          applied,
          pending,
          out.schemas());
    } else if (locked) {
      LOG.info("tenant {} skipped (locked), still {}: {}", row.tenant(), after.stored(), error);
    } else {
      LOG.warn("tenant {} {}: {}", row.tenant(), after.stored(), error);
    }
    listener.tenantFinished(out);
    return out;
  }

  /**
   * The pool of one tenant's run: its statements and Flyway runs reuse a few connections instead of
   * opening one each (every new PostgreSQL connection is a process fork, an authentication and a
   * catalog cache to fill: measured in B8, most of a tenant's server time). Connections are opened
   * on demand (none at start: an unreachable tenant fails on its lock connection first, with the
   * driver's message), at most {@code 2 * schemaParallelism + 2} (a Flyway run may hold two), and
   * all closed with the pool when the tenant's run ends. Built over {@link Dsn#dataSource()}, so
   * the pool's configuration, which HikariCP logs at debug level, holds no URL.
   *
   * @param tenant the tenant id, for the pool's name (its threads and log lines)
   * @param dsn the tenant's database
   * @return the pool, to be closed by the caller
   */
  private HikariDataSource tenantPool(String tenant, Dsn dsn) {
    HikariConfig config = new HikariConfig();
    config.setDataSource(dsn.dataSource());
    config.setPoolName("ledger-tenant-" + tenant);
    config.setMaximumPoolSize(2 * schemaParallelism + 2);
    config.setMinimumIdle(0);
    config.setInitializationFailTimeout(-1);
    config.setConnectionTimeout(Math.max(250, Math.min(lockTimeout.toMillis(), 30_000)));
    return new HikariDataSource(config);
  }

  private static String summary(MigrationReport report) {
    List<String> reasons = new ArrayList<>();
    for (SchemaReport s : report.schemas()) {
      if (s.failed()) {
        reasons.add(s.error());
      }
    }
    if (report.sharedTables() != null && report.sharedTables().error() != null) {
      reasons.add("shared tables: " + report.sharedTables().error());
    }
    String first = reasons.isEmpty() ? "failed" : reasons.get(0);
    return reasons.size() <= 1 ? first : first + " (and " + (reasons.size() - 1) + " more)";
  }

  private static String redactText(String text, Dsn dsn, String raw) {
    if (text == null) {
      return null;
    }
    String out = dsn != null ? dsn.redact(text) : text;
    return raw == null || raw.isEmpty() ? out : out.replace(raw, "***");
  }

  /** The report with every free text passed through the DSN's redaction. */
  static MigrationReport redact(MigrationReport r, Dsn dsn) {
    List<SchemaReport> domains = r.domains().stream().map(s -> redact(s, dsn)).toList();
    SharedTablesReport shared = r.sharedTables();
    if (shared != null) {
      shared =
          new SharedTablesReport(
              shared.moved(),
              shared.domains(),
              shared.tasksKeptAs(),
              shared.eventsKeptAs(),
              shared.eventsLeftBehind(),
              dsn.redact(shared.error()));
    }
    return new MigrationReport(
        r.operation(),
        r.directorySchema(),
        r.startedAt(),
        r.elapsed(),
        r.ok(),
        redact(r.directory(), dsn),
        domains,
        shared,
        r.warnings().stream().map(dsn::redact).toList(),
        r.counts());
  }

  private static SchemaReport redact(SchemaReport s, Dsn dsn) {
    return new SchemaReport(
        s.schema(),
        s.domain(),
        s.kind(),
        s.state(),
        s.versionBefore(),
        s.versionAfter(),
        s.applied(),
        s.pending(),
        s.adoptedShape(),
        s.checksums(),
        s.catalogExtras(),
        dsn.redact(s.error()),
        s.elapsed());
  }

  private static void checkTenant(String tenant) {
    if (tenant == null || tenant.isEmpty() || tenant.codePointCount(0, tenant.length()) > 200) {
      throw new IllegalArgumentException("tenant: must be 1 to 200 characters");
    }
    if (tenant.codePoints().anyMatch(Character::isISOControl)) {
      throw new IllegalArgumentException("tenant: must not contain control characters");
    }
  }

  /** Builds a {@link Fleet}; validates in {@link #build()}. */
  public static final class Builder {

    private DataSource control;
    private String controlSchema = "public";
    private int parallelism = 8;
    private int schemaParallelism = 2;
    private Duration lockTimeout = Duration.ofMinutes(10);
    private boolean retryDegraded;
    private boolean verifyAll;
    private boolean createRegistry = true;
    private List<String> extraDomainLocations = List.of();
    private FleetListener listener = new FleetListener() {};

    private Builder() {}

    /**
     * The control database (required).
     *
     * @param control its data source
     * @return this builder
     */
    public Builder control(DataSource control) {
      this.control = control;
      return this;
    }

    /**
     * The registry's schema in the control database. Default {@code public}.
     *
     * @param schema unquoted, 1 to 63 bytes
     * @return this builder
     */
    public Builder controlSchema(String schema) {
      this.controlSchema = schema;
      return this;
    }

    /**
     * How many tenants are migrated at once. Default 8.
     *
     * @param parallelism 1 to 64
     * @return this builder
     */
    public Builder parallelism(int parallelism) {
      this.parallelism = parallelism;
      return this;
    }

    /**
     * How many schemas of one tenant are migrated at once. Default 2.
     *
     * @param parallelism 1 to 64
     * @return this builder
     */
    public Builder schemaParallelism(int parallelism) {
      this.schemaParallelism = parallelism;
      return this;
    }

    /**
     * How long to keep trying a tenant's lock before the tenant is skipped as locked (its status
     * unchanged). Default 10 minutes.
     *
     * @param lockTimeout positive
     * @return this builder
     */
    public Builder lockTimeout(Duration lockTimeout) {
      this.lockTimeout = lockTimeout;
      return this;
    }

    /**
     * Whether degraded tenants are migrated again. Default false (skipped).
     *
     * @param retry true to retry them
     * @return this builder
     */
    public Builder retryDegraded(boolean retry) {
      this.retryDegraded = retry;
      return this;
    }

    /**
     * Whether every schema of every tenant is checked in full, whatever its database's {@code
     * ledger_schema_state} records ({@link MigrationJob.Builder#verifyAll(boolean)}). Default
     * false.
     *
     * @param verifyAll true for the full check
     * @return this builder
     */
    public Builder verifyAll(boolean verifyAll) {
      this.verifyAll = verifyAll;
      return this;
    }

    /**
     * Whether {@link Fleet#list()}, {@link Fleet#plan()} and {@link Fleet#migrate()} make the
     * registry (the control migration set) in a control database that holds none. Default true, as
     * the reference reconciler bootstraps it on every run. With false they refuse such a database
     * with a {@link MigrationException} of reason {@link MigrationException.Reason#NO_REGISTRY} and
     * change nothing: what a run given the wrong database should do. {@link Fleet#register(String,
     * String)} always makes it.
     *
     * @param create false to refuse a control database without a registry
     * @return this builder
     */
    public Builder createRegistry(boolean create) {
      this.createRegistry = create;
      return this;
    }

    /**
     * Flyway locations whose migrations join every tenant's domain set.
     *
     * @param locations e.g. {@code classpath:db/extra}
     * @return this builder
     */
    public Builder extraDomainLocations(List<String> locations) {
      this.extraDomainLocations = List.copyOf(locations);
      return this;
    }

    /**
     * Hears progress. Default: nothing.
     *
     * @param listener thread-safe
     * @return this builder
     */
    public Builder listener(FleetListener listener) {
      this.listener = listener;
      return this;
    }

    /**
     * Checks the settings and builds the fleet.
     *
     * @return the fleet
     * @throws IllegalArgumentException naming the setting and what is allowed, when one is not
     */
    public Fleet build() {
      if (control == null) {
        throw new IllegalArgumentException("control: required");
      }
      if (controlSchema == null || controlSchema.isEmpty() || controlSchema.length() > 63) {
        throw new IllegalArgumentException("controlSchema: must be 1 to 63 characters");
      }
      if (parallelism < 1 || parallelism > MAX_PARALLELISM) {
        throw new IllegalArgumentException(
            "parallelism: must be between 1 and " + MAX_PARALLELISM + ", was " + parallelism);
      }
      if (schemaParallelism < 1 || schemaParallelism > MAX_PARALLELISM) {
        throw new IllegalArgumentException(
            "schemaParallelism: must be between 1 and "
                + MAX_PARALLELISM
                + ", was "
                + schemaParallelism);
      }
      if (lockTimeout == null || lockTimeout.isNegative() || lockTimeout.isZero()) {
        throw new IllegalArgumentException("lockTimeout: must be positive, was " + lockTimeout);
      }
      MigrationSets.checkExtraLocations(extraDomainLocations, "extraDomainLocations");
      if (listener == null) {
        throw new IllegalArgumentException("listener: must not be null");
      }
      return new Fleet(this);
    }
  }
}

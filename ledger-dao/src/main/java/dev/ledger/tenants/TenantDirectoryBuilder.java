package dev.ledger.tenants;

import dev.ledger.LedgerConfig;
import dev.ledger.migrate.MigrationException;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds and opens a {@link TenantDirectory} ({@link TenantDirectory#builder()}); checks every
 * setting in {@link #open()}, where a bad one is an {@link IllegalArgumentException} naming it. Not
 * thread-safe; the directory copies nothing from it after {@link #open()} but reads its values, so
 * do not change a builder after opening.
 */
public final class TenantDirectoryBuilder {

  private static final Logger LOG = LoggerFactory.getLogger(TenantDirectoryBuilder.class);

  DataSource control;
  String controlSchema = "public";
  LedgerConfig ledgerConfig = LedgerConfig.defaults();
  boolean bootstrapRegistry = true;
  boolean reconcile;
  int fleetParallelism = 8;
  List<String> extraDomainLocations = List.of();
  Duration refreshInterval = Duration.ofSeconds(30);
  Duration retryInterval = Duration.ofMinutes(5);
  Duration probeInterval = Duration.ofSeconds(1);
  int connectionBudget = 50;
  int connectionsPerTenant = 4;
  Duration connectTimeout = Duration.ofSeconds(2);
  Duration idleTimeout = Duration.ofSeconds(30);
  Duration drainTimeout = Duration.ofSeconds(30);
  private boolean opened;

  TenantDirectoryBuilder() {}

  /**
   * The control database, holding the tenant registry (required). The directory reads it on every
   * refresh; a pool of 2 or 3 connections is plenty (more with {@link #reconcile(boolean)}: the
   * fleet records statuses through it).
   *
   * @param control its data source
   * @return this builder
   */
  public TenantDirectoryBuilder control(DataSource control) {
    this.control = control;
    return this;
  }

  /**
   * The registry's schema in the control database. Default {@code public}.
   *
   * @param schema unquoted, 1 to 63 characters
   * @return this builder
   */
  public TenantDirectoryBuilder controlSchema(String schema) {
    this.controlSchema = schema;
    return this;
  }

  /**
   * How every tenant's {@link dev.ledger.Ledger} runs. Default {@link LedgerConfig#defaults()}.
   *
   * @param config not null; its directory schema is each tenant database's
   * @return this builder
   */
  public TenantDirectoryBuilder ledgerConfig(LedgerConfig config) {
    this.ledgerConfig = config;
    return this;
  }

  /**
   * Whether {@link #open()} makes or migrates the registry first (the reference boot's {@code
   * bootstrap_registry}). Default true; false for a control role that may not run DDL (then a
   * missing registry fails the open).
   *
   * @param bootstrap false to only read
   * @return this builder
   */
  public TenantDirectoryBuilder bootstrapRegistry(boolean bootstrap) {
    this.bootstrapRegistry = bootstrap;
    return this;
  }

  /**
   * Whether the directory migrates the fleet ({@link dev.ledger.migrate.Fleet#migrate()}): at open,
   * on a refresh that finds a {@code provisioning} tenant, and every {@link
   * #retryInterval(Duration)} when a tenant is {@code degraded}. Default false (a migration job
   * does it).
   *
   * @param reconcile true to reconcile
   * @return this builder
   */
  public TenantDirectoryBuilder reconcile(boolean reconcile) {
    this.reconcile = reconcile;
    return this;
  }

  /**
   * How many tenants a reconciliation migrates at once. Default 8.
   *
   * @param parallelism 1 to 64
   * @return this builder
   */
  public TenantDirectoryBuilder fleetParallelism(int parallelism) {
    this.fleetParallelism = parallelism;
    return this;
  }

  /**
   * Flyway locations whose migrations join every tenant's domain set when reconciling ({@link
   * dev.ledger.migrate.Fleet.Builder#extraDomainLocations(List)}).
   *
   * @param locations e.g. {@code classpath:db/extra}, not null
   * @return this builder
   */
  public TenantDirectoryBuilder extraDomainLocations(List<String> locations) {
    this.extraDomainLocations = List.copyOf(locations);
    return this;
  }

  /**
   * How often the registry is read again in the background. Default 30 s; {@link Duration#ZERO} for
   * none (only {@link TenantDirectory#refresh()}).
   *
   * @param interval zero, or at least 10 ms
   * @return this builder
   */
  public TenantDirectoryBuilder refreshInterval(Duration interval) {
    this.refreshInterval = interval;
    return this;
  }

  /**
   * How often degraded tenants are migrated again, with {@link #reconcile(boolean)}. Default 5
   * minutes.
   *
   * @param interval positive
   * @return this builder
   */
  public TenantDirectoryBuilder retryInterval(Duration interval) {
    this.retryInterval = interval;
    return this;
  }

  /**
   * How often an unreachable tenant's database is tried again. Default 1 s.
   *
   * @param interval at least 10 ms
   * @return this builder
   */
  public TenantDirectoryBuilder probeInterval(Duration interval) {
    this.probeInterval = interval;
    return this;
  }

  /**
   * The most physical connections all tenant pools hold together (the control database's are not
   * counted). Default 50.
   *
   * @param connections at least {@link #connectionsPerTenant(int)}
   * @return this builder
   */
  public TenantDirectoryBuilder connectionBudget(int connections) {
    this.connectionBudget = connections;
    return this;
  }

  /**
   * The most connections one tenant's pool holds. Default 4 (a ledger that makes a new domain's
   * schema at run time needs 3 at once).
   *
   * @param connections 1 to 64
   * @return this builder
   */
  public TenantDirectoryBuilder connectionsPerTenant(int connections) {
    this.connectionsPerTenant = connections;
    return this;
  }

  /**
   * How long a call waits at most for a connection (a new one to a tenant's server, or a free one
   * of the pool or of the budget) before it fails. Default 2 s.
   *
   * @param timeout 250 ms to 5 minutes
   * @return this builder
   */
  public TenantDirectoryBuilder connectTimeout(Duration timeout) {
    this.connectTimeout = timeout;
    return this;
  }

  /**
   * How long an idle connection of a tenant's pool is kept. Default 30 s.
   *
   * @param timeout at least 10 s (HikariCP's floor)
   * @return this builder
   */
  public TenantDirectoryBuilder idleTimeout(Duration timeout) {
    this.idleTimeout = timeout;
    return this;
  }

  /**
   * How long a retired pool (re-pointed tenant, or {@link TenantDirectory#close()}) waits for its
   * connections in use before it is closed anyway. Default 30 s.
   *
   * @param timeout zero or positive
   * @return this builder
   */
  public TenantDirectoryBuilder drainTimeout(Duration timeout) {
    this.drainTimeout = timeout;
    return this;
  }

  /**
   * Checks the settings, bootstraps the registry (when asked), reconciles the fleet (when asked),
   * reads the registry and starts the background refresh and probe. Opens no tenant connection.
   *
   * @return the open directory; the caller closes it
   * @throws IllegalArgumentException naming the setting, when one is refused
   * @throws MigrationException ({@link MigrationException.Reason#CONTROL_DATABASE}) when the
   *     control database cannot be bootstrapped or read
   */
  public TenantDirectory open() {
    check();
    opened = true;
    TenantDirectory directory = new TenantDirectory(this);
    try {
      if (bootstrapRegistry) {
        new dev.ledger.migrate.TenantRegistry(control, controlSchema).bootstrap();
      }
      directory.refresh();
    } catch (RuntimeException e) {
      directory.close();
      throw e;
    }
    directory.start();
    LOG.info(
        "tenant directory open: {} tenants served of {} registered; budget {} connections, {} per"
            + " tenant, refresh {}, reconcile {}",
        directory.served().size(),
        directory.states().size(),
        connectionBudget,
        connectionsPerTenant,
        refreshInterval.isZero() ? "manual" : refreshInterval,
        reconcile);
    return directory;
  }

  private void check() {
    if (opened) {
      throw new IllegalStateException("this builder opened a directory already; use a new one");
    }
    if (control == null) {
      throw new IllegalArgumentException("control: required (the control database)");
    }
    if (controlSchema == null || controlSchema.isEmpty() || controlSchema.length() > 63) {
      throw new IllegalArgumentException("controlSchema: must be 1 to 63 characters");
    }
    if (ledgerConfig == null) {
      throw new IllegalArgumentException("ledgerConfig: must not be null");
    }
    if (fleetParallelism < 1 || fleetParallelism > 64) {
      throw new IllegalArgumentException(
          "fleetParallelism: must be between 1 and 64, was " + fleetParallelism);
    }
    if (refreshInterval == null
        || refreshInterval.isNegative()
        || (!refreshInterval.isZero() && refreshInterval.toMillis() < 10)) {
      throw new IllegalArgumentException(
          "refreshInterval: must be zero (manual) or at least 10 ms, was " + refreshInterval);
    }
    positive(retryInterval, "retryInterval");
    if (probeInterval == null || probeInterval.toMillis() < 10) {
      throw new IllegalArgumentException(
          "probeInterval: must be at least 10 ms, was " + probeInterval);
    }
    if (connectionsPerTenant < 1 || connectionsPerTenant > 64) {
      throw new IllegalArgumentException(
          "connectionsPerTenant: must be between 1 and 64, was " + connectionsPerTenant);
    }
    if (connectionBudget < connectionsPerTenant) {
      throw new IllegalArgumentException(
          "connectionBudget: must be at least connectionsPerTenant ("
              + connectionsPerTenant
              + "), was "
              + connectionBudget);
    }
    if (connectTimeout == null
        || connectTimeout.toMillis() < 250
        || connectTimeout.compareTo(Duration.ofMinutes(5)) > 0) {
      throw new IllegalArgumentException(
          "connectTimeout: must be between 250 ms and 5 minutes, was " + connectTimeout);
    }
    if (idleTimeout == null || idleTimeout.toMillis() < 10_000) {
      throw new IllegalArgumentException(
          "idleTimeout: must be at least 10 s (HikariCP's floor), was " + idleTimeout);
    }
    if (drainTimeout == null || drainTimeout.isNegative()) {
      throw new IllegalArgumentException(
          "drainTimeout: must be zero or positive, was " + drainTimeout);
    }
  }

  private static void positive(Duration d, String name) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + ": must be positive, was " + d);
    }
  }
}

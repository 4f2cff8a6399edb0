package dev.ledger.spring;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code ledger.tenants.*} properties: a {@link dev.ledger.tenants.TenantDirectory} serving
 * every tenant database of a fleet ({@link LedgerTenantsAutoConfiguration}), on when {@code
 * ledger.tenants.control-url} is set. Mutable bean for binding; read once, at startup.
 */
@ConfigurationProperties(prefix = "ledger.tenants")
public class LedgerTenantsProperties {

  /**
   * The control database holding the tenant registry (harness_tenants): a jdbc:postgresql:// URL or
   * a postgresql:// URI. Setting it turns the tenant directory on. Never logged.
   */
  private String controlUrl;

  /** The registry's schema in the control database. */
  private String controlSchema = "public";

  /** Connections to the control database (registry reads; statuses when reconciling). */
  private int controlPoolSize = 3;

  /**
   * Whether startup creates or migrates the registry first; false for a control role that may not
   * run DDL.
   */
  private boolean bootstrapRegistry = true;

  /**
   * Whether the directory migrates the fleet: at startup, when a refresh finds a provisioning
   * tenant, and every retry interval for degraded ones.
   */
  private boolean reconcile = false;

  /**
   * Whether each tenant's ledger may run DDL (a new domain's schema); false when a migration job
   * provisions every tenant (faster first calls).
   */
  private boolean runtimeDdl = true;

  /**
   * The most physical connections all tenant pools hold together; at least the tenants called at
   * once, else calls evict each other's connections.
   */
  private int connectionBudget = 50;

  /** The most connections one tenant's pool holds, 1 to 64. */
  private int connectionsPerTenant = 4;

  /** How often the registry is read again; 0 for never (refresh() only). */
  private Duration refreshInterval = Duration.ofSeconds(30);

  /** How often degraded tenants are migrated again, when reconciling. */
  private Duration retryInterval = Duration.ofMinutes(5);

  /** How often an unreachable tenant's database is tried again. */
  private Duration probeInterval = Duration.ofSeconds(1);

  /** How long a call waits at most for a tenant connection before it fails. */
  private Duration connectTimeout = Duration.ofSeconds(2);

  /** How long an idle tenant connection is kept (at least 10 s). */
  private Duration idleTimeout = Duration.ofSeconds(30);

  /** How long a retired tenant pool, or shutdown, waits for connections in use. */
  private Duration drainTimeout = Duration.ofSeconds(30);

  private final Worker worker = new Worker();

  /** Created by Spring when binding. */
  public LedgerTenantsProperties() {}

  /**
   * @return the control database's URL
   */
  public String getControlUrl() {
    return controlUrl;
  }

  /**
   * @param controlUrl the control database's URL
   */
  public void setControlUrl(String controlUrl) {
    this.controlUrl = controlUrl;
  }

  /**
   * @return the registry's schema
   */
  public String getControlSchema() {
    return controlSchema;
  }

  /**
   * @param controlSchema the registry's schema
   */
  public void setControlSchema(String controlSchema) {
    this.controlSchema = controlSchema;
  }

  /**
   * @return control connections
   */
  public int getControlPoolSize() {
    return controlPoolSize;
  }

  /**
   * @param controlPoolSize control connections
   */
  public void setControlPoolSize(int controlPoolSize) {
    this.controlPoolSize = controlPoolSize;
  }

  /**
   * @return whether to bootstrap the registry
   */
  public boolean isBootstrapRegistry() {
    return bootstrapRegistry;
  }

  /**
   * @param bootstrapRegistry whether to bootstrap the registry
   */
  public void setBootstrapRegistry(boolean bootstrapRegistry) {
    this.bootstrapRegistry = bootstrapRegistry;
  }

  /**
   * @return whether to reconcile
   */
  public boolean isReconcile() {
    return reconcile;
  }

  /**
   * @param reconcile whether to reconcile
   */
  public void setReconcile(boolean reconcile) {
    this.reconcile = reconcile;
  }

  /**
   * @return whether runtime DDL is on
   */
  public boolean isRuntimeDdl() {
    return runtimeDdl;
  }

  /**
   * @param runtimeDdl whether runtime DDL is on
   */
  public void setRuntimeDdl(boolean runtimeDdl) {
    this.runtimeDdl = runtimeDdl;
  }

  /**
   * @return the budget
   */
  public int getConnectionBudget() {
    return connectionBudget;
  }

  /**
   * @param connectionBudget the budget
   */
  public void setConnectionBudget(int connectionBudget) {
    this.connectionBudget = connectionBudget;
  }

  /**
   * @return connections per tenant
   */
  public int getConnectionsPerTenant() {
    return connectionsPerTenant;
  }

  /**
   * @param connectionsPerTenant connections per tenant
   */
  public void setConnectionsPerTenant(int connectionsPerTenant) {
    this.connectionsPerTenant = connectionsPerTenant;
  }

  /**
   * @return the refresh interval
   */
  public Duration getRefreshInterval() {
    return refreshInterval;
  }

  /**
   * @param refreshInterval the refresh interval
   */
  public void setRefreshInterval(Duration refreshInterval) {
    this.refreshInterval = refreshInterval;
  }

  /**
   * @return the retry interval
   */
  public Duration getRetryInterval() {
    return retryInterval;
  }

  /**
   * @param retryInterval the retry interval
   */
  public void setRetryInterval(Duration retryInterval) {
    this.retryInterval = retryInterval;
  }

  /**
   * @return the probe interval
   */
  public Duration getProbeInterval() {
    return probeInterval;
  }

  /**
   * @param probeInterval the probe interval
   */
  public void setProbeInterval(Duration probeInterval) {
    this.probeInterval = probeInterval;
  }

  /**
   * @return the connect timeout
   */
  public Duration getConnectTimeout() {
    return connectTimeout;
  }

  /**
   * @param connectTimeout the connect timeout
   */
  public void setConnectTimeout(Duration connectTimeout) {
    this.connectTimeout = connectTimeout;
  }

  /**
   * @return the idle timeout
   */
  public Duration getIdleTimeout() {
    return idleTimeout;
  }

  /**
   * @param idleTimeout the idle timeout
   */
  public void setIdleTimeout(Duration idleTimeout) {
    this.idleTimeout = idleTimeout;
  }

  /**
   * @return the drain timeout
   */
  public Duration getDrainTimeout() {
    return drainTimeout;
  }

  /**
   * @param drainTimeout the drain timeout
   */
  public void setDrainTimeout(Duration drainTimeout) {
    this.drainTimeout = drainTimeout;
  }

  /**
   * @return the cross-tenant worker pools' settings
   */
  public Worker getWorker() {
    return worker;
  }

  /**
   * The {@code ledger.tenants.worker.*} properties: one {@link dev.ledger.worker.TenantWorkerPool}
   * per {@link LedgerTenantTaskHandler} bean.
   */
  public static class Worker {

    /**
     * Whether the starter runs a cross-tenant worker pool for each LedgerTenantTaskHandler bean.
     */
    private boolean enabled = true;

    /** Worker threads of each pool, shared by all tenants, 1 to 1000. */
    private int concurrency = 4;

    /** The most tasks one tenant gets per turn (1: strict round-robin), 1 to 100. */
    private int quantum = 1;

    /** The most tasks of one tenant running at once; 0 for the concurrency. */
    private int maxPerTenant = 0;

    /**
     * How long each lease lasts, 300 ms to 7 days; extended every third of it while a handler runs.
     */
    private Duration lease = Duration.ofSeconds(30);

    /** How soon a tenant whose last claim found nothing is asked again, 10 ms to 1 hour. */
    private Duration pollInterval = Duration.ofSeconds(1);

    /**
     * How long shutdown waits for running handlers before it interrupts them and releases their
     * leases.
     */
    private Duration shutdownTimeout = Duration.ofSeconds(30);

    /** The holder name leases are taken in; by default tenants-<pid>. */
    private String holder;

    /** Created by Spring when binding. */
    public Worker() {}

    /**
     * @return whether the pools run
     */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * @param enabled whether the pools run
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /**
     * @return worker threads
     */
    public int getConcurrency() {
      return concurrency;
    }

    /**
     * @param concurrency worker threads, 1 to 1000
     */
    public void setConcurrency(int concurrency) {
      this.concurrency = concurrency;
    }

    /**
     * @return tasks per tenant per turn
     */
    public int getQuantum() {
      return quantum;
    }

    /**
     * @param quantum tasks per tenant per turn, 1 to 100
     */
    public void setQuantum(int quantum) {
      this.quantum = quantum;
    }

    /**
     * @return tasks of one tenant at once, 0 for the concurrency
     */
    public int getMaxPerTenant() {
      return maxPerTenant;
    }

    /**
     * @param maxPerTenant tasks of one tenant at once, 0 for the concurrency
     */
    public void setMaxPerTenant(int maxPerTenant) {
      this.maxPerTenant = maxPerTenant;
    }

    /**
     * @return the lease
     */
    public Duration getLease() {
      return lease;
    }

    /**
     * @param lease the lease, 300 ms to 7 days
     */
    public void setLease(Duration lease) {
      this.lease = lease;
    }

    /**
     * @return the poll interval
     */
    public Duration getPollInterval() {
      return pollInterval;
    }

    /**
     * @param pollInterval the poll interval, 10 ms to 1 hour
     */
    public void setPollInterval(Duration pollInterval) {
      this.pollInterval = pollInterval;
    }

    /**
     * @return the shutdown timeout
     */
    public Duration getShutdownTimeout() {
      return shutdownTimeout;
    }

    /**
     * @param shutdownTimeout the shutdown timeout
     */
    public void setShutdownTimeout(Duration shutdownTimeout) {
      this.shutdownTimeout = shutdownTimeout;
    }

    /**
     * @return the holder, or null for the default
     */
    public String getHolder() {
      return holder;
    }

    /**
     * @param holder the holder, or null for the default
     */
    public void setHolder(String holder) {
      this.holder = holder;
    }
  }
}

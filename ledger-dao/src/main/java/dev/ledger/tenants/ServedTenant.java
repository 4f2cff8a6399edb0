package dev.ledger.tenants;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.LedgerStorageException;
import dev.ledger.migrate.Dsn;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One active tenant of a {@link TenantDirectory}: its pool and its {@link Ledger}, both opened on
 * first use, and whether its database answers. Once a connect fails (or a call fails on a broken
 * connection) the tenant is unreachable: {@link #ledger()} refuses at once, without touching the
 * network, until {@link #probe()} reaches the database again. Thread-safe.
 */
final class ServedTenant {

  private static final Logger LOG = LoggerFactory.getLogger(ServedTenant.class);

  /** What a served tenant needs from its directory. */
  record Settings(
      ConnectionBudget budget,
      LedgerConfig ledgerConfig,
      int maxConnections,
      Duration connectTimeout,
      Duration idleTimeout,
      ScheduledExecutorService housekeeping) {}

  private final RegistryEntry record;
  private final Settings settings;
  private volatile HikariDataSource pool;
  private volatile Ledger ledger;
  private volatile TenantDataSource dataSource;
  private volatile Throwable down;
  private volatile boolean closed;
  private volatile long lastUsed = System.nanoTime();
  private final java.util.concurrent.atomic.AtomicInteger nested =
      new java.util.concurrent.atomic.AtomicInteger();

  ServedTenant(RegistryEntry record, Settings settings) {
    this.record = record;
    this.settings = settings;
  }

  String tenant() {
    return record.tenant();
  }

  RegistryEntry record() {
    return record;
  }

  /** The ledger, opened on first call. */
  Ledger ledger() {
    Ledger l = ledger;
    if (l != null && down == null) {
      return l;
    }
    if (down != null) {
      throw unreachable(down);
    }
    synchronized (this) {
      if (down != null) {
        throw unreachable(down);
      }
      if (ledger == null) {
        try {
          ledger = Ledger.open(dataSource(), settings.ledgerConfig());
        } catch (LedgerStorageException e) {
          if (Unreachable.matches(e)) {
            markDown(e);
            throw unreachable(e);
          }
          throw e;
        }
      }
      return ledger;
    }
  }

  /** What the ledger and callers take connections from, made on first call. */
  TenantDataSource dataSource() {
    TenantDataSource d = dataSource;
    if (d != null && !closed) {
      return d;
    }
    synchronized (this) {
      if (dataSource == null || closed) {
        dataSource = new TenantDataSource(this, pool());
      }
      return dataSource;
    }
  }

  /** The pool, made on first call (no connection opened by making it). */
  synchronized HikariDataSource pool() {
    if (closed) {
      throw new TenantUnavailableException(
          tenant(),
          TenantUnavailableException.Reason.CLOSED,
          "tenant "
              + tenant()
              + ": its pool was closed (the directory closed, or the tenant was re-pointed or"
              + " stopped being active); ask the directory for the tenant's ledger again",
          null);
    }
    if (pool == null) {
      Dsn dsn = record.dsn();
      PGSimpleDataSource raw;
      try {
        raw = dsn.dataSource().unwrap(PGSimpleDataSource.class);
      } catch (SQLException e) {
        throw new IllegalStateException("Dsn.dataSource() is a PGSimpleDataSource", e);
      }
      int seconds = (int) Math.max(1, (settings.connectTimeout().toMillis() + 999) / 1000);
      raw.setConnectTimeout(seconds);
      raw.setLoginTimeout(seconds);
      HikariConfig config = new HikariConfig();
      config.setDataSource(
          new BudgetedDataSource(raw, settings.budget(), this, settings.connectTimeout()));
      config.setPoolName("ledger-tenant-" + tenant());
      config.setMaximumPoolSize(settings.maxConnections());
      config.setMinimumIdle(0);
      config.setIdleTimeout(settings.idleTimeout().toMillis());
      config.setConnectionTimeout(settings.connectTimeout().toMillis());
      config.setValidationTimeout(Math.min(settings.connectTimeout().toMillis(), 5_000));
      config.setInitializationFailTimeout(-1);
      config.setScheduledExecutor(settings.housekeeping());
      pool = new HikariDataSource(config);
      settings.budget().add(this);
    }
    return pool;
  }

  /** Whether calls are refused because the database does not answer. */
  boolean reachable() {
    return down == null;
  }

  /** Records that the database does not answer. */
  void markDown(Throwable cause) {
    if (down == null) {
      LOG.warn(
          "tenant {} unreachable, refused until its database answers: {}",
          tenant(),
          Unreachable.describe(cause, record.dsn()));
    }
    down = cause;
  }

  /** A physical connect failed: the server is down, or refuses. */
  void connectFailed(Throwable cause) {
    if (cause instanceof SQLException) {
      markDown(cause);
    }
  }

  /** A physical connect succeeded. */
  void connected() {
    if (down != null) {
      down = null;
      LOG.info("tenant {} reachable again", tenant());
    }
  }

  /**
   * Tries the database once (up to the connect timeout), clearing the unreachable mark on success.
   * Called by the directory's probe for unreachable tenants only.
   */
  void probe() {
    if (closed) {
      return;
    }
    try (Connection c = pool().getConnection()) {
      if (c.isValid((int) Math.max(1, settings.connectTimeout().toSeconds()))) {
        connected();
      }
    } catch (SQLException | RuntimeException e) {
      down = e;
    }
  }

  /** Records a use (a connection asked for), for the budget's least-recently-used eviction. */
  void used() {
    lastUsed = System.nanoTime();
  }

  /** When a connection was last asked for ({@link System#nanoTime()}). */
  long lastUsed() {
    return lastUsed;
  }

  /** A thread that holds a connection of this pool asks for another. */
  void nestedBegin() {
    nested.incrementAndGet();
  }

  /** ... and got it, or gave up. */
  void nestedEnd() {
    nested.decrementAndGet();
  }

  /** Whether a caller that holds one of this pool's connections waits for another. */
  boolean nestedWaiting() {
    return nested.get() > 0;
  }

  /** Whether more callers wait for one of this pool's connections than it has idle ones. */
  boolean awaitsConnection() {
    HikariDataSource p = pool;
    HikariPoolMXBean bean = p == null ? null : p.getHikariPoolMXBean();
    return bean != null && bean.getThreadsAwaitingConnection() > bean.getIdleConnections();
  }

  /** Idle physical connections now. */
  int idleConnections() {
    HikariDataSource p = pool;
    HikariPoolMXBean bean = p == null ? null : p.getHikariPoolMXBean();
    return bean == null ? 0 : bean.getIdleConnections();
  }

  /**
   * Idle connections that may be closed for the budget: none while a caller waits for one of this
   * pool's connections (a connection just made for a waiting caller sits idle until it is handed
   * over; closing it would leave the caller waiting with nothing being made for it).
   */
  int evictableConnections() {
    HikariDataSource p = pool;
    HikariPoolMXBean bean = p == null ? null : p.getHikariPoolMXBean();
    return bean == null || bean.getThreadsAwaitingConnection() > 0 ? 0 : bean.getIdleConnections();
  }

  /** Connections in use now. */
  int activeConnections() {
    HikariDataSource p = pool;
    HikariPoolMXBean bean = p == null ? null : p.getHikariPoolMXBean();
    return bean == null ? 0 : bean.getActiveConnections();
  }

  /** Physical connections now. */
  int openConnections() {
    HikariDataSource p = pool;
    HikariPoolMXBean bean = p == null ? null : p.getHikariPoolMXBean();
    return bean == null ? 0 : bean.getTotalConnections();
  }

  /** Closes the idle connections (and those in use when they come back): the budget is short. */
  void evictIdle() {
    HikariDataSource p = pool;
    HikariPoolMXBean bean = p == null || p.isClosed() ? null : p.getHikariPoolMXBean();
    if (bean != null) {
      bean.softEvictConnections();
    }
  }

  /** Stops new work: {@link #pool()} refuses from now on. */
  synchronized void retire() {
    closed = true;
    settings.budget().remove(this);
  }

  /** Closes the pool (its connections in use are aborted by HikariCP). */
  void close() {
    retire();
    HikariDataSource p;
    synchronized (this) {
      p = pool;
    }
    if (p != null) {
      p.close();
    }
  }

  TenantUnavailableException unreachable(Throwable cause) {
    return new TenantUnavailableException(
        tenant(),
        TenantUnavailableException.Reason.UNREACHABLE,
        "tenant "
            + tenant()
            + " is unreachable: its database did not answer ("
            + Unreachable.describe(cause, record.dsn())
            + "); calls are refused at once until a probe reaches it again",
        cause);
  }
}

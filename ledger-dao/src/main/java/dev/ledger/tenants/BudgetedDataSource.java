package dev.ledger.tenants;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * What a tenant's HikariCP pool opens its physical connections from: the tenant database's
 * non-pooled data source, behind the {@link ConnectionBudget}. Each connection holds one permit,
 * given back once when it is closed or aborted. A failed connect tells the tenant it is unreachable
 * (a refused budget does not: a busy service is not a down server). Its {@link #toString()} holds
 * no URL, so HikariCP's configuration log shows none.
 */
final class BudgetedDataSource extends DelegatingDataSource {

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(BudgetedDataSource.class);

  /** PostgreSQL's {@code too_many_connections}: what a spent budget reports. */
  static final String BUDGET_SQLSTATE = "53300";

  private final DataSource target;
  private final ConnectionBudget budget;
  private final ServedTenant tenant;
  private final Duration timeout;

  BudgetedDataSource(
      DataSource target, ConnectionBudget budget, ServedTenant tenant, Duration timeout) {
    super(target);
    this.target = target;
    this.budget = budget;
    this.tenant = tenant;
    this.timeout = timeout;
  }

  @Override
  public Connection getConnection() throws SQLException {
    try {
      ConnectionBudget.Grant grant = budget.acquire(timeout, tenant);
      if (grant == ConnectionBudget.Grant.NOT_NEEDED) {
        // HikariCP's connection adder logs this at debug and stops: its waiter was served
        throw new SQLTransientConnectionException(
            "tenant "
                + tenant.tenant()
                + ": no new connection made, the pool's own served its callers (budget spent)",
            BUDGET_SQLSTATE);
      }
      if (grant == ConnectionBudget.Grant.TIMED_OUT) {
        LOG.warn(
            "tenant {}: no connection within the budget ({}) for {} ms",
            tenant.tenant(),
            budget.describe(),
            timeout.toMillis());
        throw new SQLTransientConnectionException(
            "tenant "
                + tenant.tenant()
                + ": the connection budget ("
                + budget.limit()
                + " connections over all tenants) stayed spent for "
                + timeout.toMillis()
                + " ms ("
                + budget.describe()
                + "); raise connectionBudget or lower the load",
            BUDGET_SQLSTATE);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SQLTransientConnectionException(
          "tenant " + tenant.tenant() + ": interrupted waiting for the connection budget");
    }
    Connection physical;
    try {
      physical = target.getConnection();
    } catch (SQLException | RuntimeException e) {
      budget.release();
      tenant.connectFailed(e);
      throw e;
    }
    budget.connected();
    tenant.connected();
    return budgeted(physical);
  }

  private Connection budgeted(Connection physical) {
    AtomicBoolean released = new AtomicBoolean();
    return proxy(
        (proxy, method, args) -> {
          String name = method.getName();
          if (name.equals("toString") && args == null) {
            return "BudgetedConnection[" + tenant.tenant() + "]";
          }
          try {
            return pass(physical, method, args);
          } finally {
            if ((name.equals("close") || name.equals("abort"))
                && released.compareAndSet(false, true)) {
              budget.release();
            }
          }
        });
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    throw new SQLException("a tenant's data source does not unwrap");
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) {
    return false;
  }

  @Override
  public String toString() {
    return "BudgetedDataSource[tenant " + tenant.tenant() + ", dsn redacted]";
  }
}

package dev.ledger.tenants;

import com.zaxxer.hikari.HikariDataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLTransientConnectionException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * What a tenant's {@link dev.ledger.Ledger} takes its connections from: the tenant's HikariCP pool,
 * except while the tenant is known to be unreachable, when every request fails at once (SQLState
 * {@code 08001}) instead of waiting the connect timeout in the pool. So a ledger operation that
 * needs several connections waits at most once, and a caller that kept the tenant's ledger is
 * refused as fast as {@link TenantDirectory#ledger(String)} is.
 */
final class TenantDataSource implements DataSource {

  private final ServedTenant tenant;
  private final HikariDataSource pool;

  TenantDataSource(ServedTenant tenant, HikariDataSource pool) {
    this.tenant = tenant;
    this.pool = pool;
  }

  @Override
  public Connection getConnection() throws SQLException {
    if (!tenant.reachable()) {
      throw new SQLTransientConnectionException(
          "tenant " + tenant.tenant() + " is unreachable: refused at once until a probe reaches it",
          "08001");
    }
    tenant.used();
    return pool.getConnection();
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    throw new SQLFeatureNotSupportedException("credentials come from the tenant's DSN");
  }

  @Override
  public PrintWriter getLogWriter() throws SQLException {
    return pool.getLogWriter();
  }

  @Override
  public void setLogWriter(PrintWriter out) throws SQLException {
    pool.setLogWriter(out);
  }

  @Override
  public void setLoginTimeout(int seconds) throws SQLException {
    pool.setLoginTimeout(seconds);
  }

  @Override
  public int getLoginTimeout() throws SQLException {
    return pool.getLoginTimeout();
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    return pool.getParentLogger();
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) {
      return iface.cast(this);
    }
    throw new SQLException("a tenant's data source does not unwrap to " + iface.getName());
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) {
    return iface.isInstance(this);
  }

  @Override
  public String toString() {
    return "TenantDataSource[" + tenant.tenant() + ", dsn redacted]";
  }
}

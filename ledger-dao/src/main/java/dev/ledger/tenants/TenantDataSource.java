package dev.ledger.tenants;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a tenant's {@link dev.ledger.Ledger} takes its connections from: the tenant's HikariCP pool,
 * except while the tenant is known to be unreachable, when every request fails at once (SQLState
 * {@code 08001}) instead of waiting the connect timeout in the pool. So a ledger operation that
 * needs several connections waits at most once, and a caller that kept the tenant's ledger is
 * refused as fast as {@link TenantDirectory#ledger(String)} is. It counts the connections each
 * thread holds, so a second one asked for on a thread that holds one (nested) is known to the
 * budget, which then does not wait for the pool's own connections to come back.
 */
final class TenantDataSource extends DelegatingDataSource {

  private final ServedTenant tenant;
  private final HikariDataSource pool;

  /** This tenant's connections each thread holds now: a second one on one thread is nested. */
  private final ThreadLocal<AtomicInteger> held = ThreadLocal.withInitial(AtomicInteger::new);

  TenantDataSource(ServedTenant tenant, HikariDataSource pool) {
    super(pool);
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
    AtomicInteger mine = held.get();
    boolean nested = mine.get() > 0;
    Connection c;
    if (nested) {
      // this thread holds one already (a ledger filling its caches, making a schema): waiting for
      // the pool's own connection would wait for itself, so the budget must not make it wait
      tenant.nestedBegin();
      try {
        c = pool.getConnection();
      } finally {
        tenant.nestedEnd();
      }
    } else {
      c = pool.getConnection();
    }
    mine.incrementAndGet();
    return counted(c, mine);
  }

  /** The pool's connection, counted as held by the thread that asked until it is closed. */
  private static Connection counted(Connection c, AtomicInteger holder) {
    AtomicBoolean closed = new AtomicBoolean();
    return proxy(
        (proxy, method, args) -> {
          if (method.getName().equals("close")
              && args == null
              && closed.compareAndSet(false, true)) {
            holder.decrementAndGet();
          }
          return pass(c, method, args);
        });
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

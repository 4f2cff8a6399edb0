package dev.ledger.tenants;

import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The part of a tenant's data sources that only passes through: the log writer, the login timeout
 * and the parent logger go to the data source behind, and a connection with other credentials is
 * refused (a tenant's come from its DSN). A subclass says how a connection is made and whether it
 * unwraps ({@link BudgetedDataSource}, {@link TenantDataSource}); {@link #proxy} and {@link #pass}
 * are what its connection wrappers share.
 */
abstract class DelegatingDataSource implements DataSource {

  private final DataSource target;

  /**
   * @param target the data source behind, whose settings are passed through
   */
  DelegatingDataSource(DataSource target) {
    this.target = target;
  }

  @Override
  public final Connection getConnection(String username, String password) throws SQLException {
    throw new SQLFeatureNotSupportedException("credentials come from the tenant's DSN");
  }

  @Override
  public final PrintWriter getLogWriter() throws SQLException {
    return target.getLogWriter();
  }

  @Override
  public final void setLogWriter(PrintWriter out) throws SQLException {
    target.setLogWriter(out);
  }

  @Override
  public final void setLoginTimeout(int seconds) throws SQLException {
    target.setLoginTimeout(seconds);
  }

  @Override
  public final int getLoginTimeout() throws SQLException {
    return target.getLoginTimeout();
  }

  @Override
  public final Logger getParentLogger() throws SQLFeatureNotSupportedException {
    return target.getParentLogger();
  }

  /**
   * A connection that answers {@code hashCode} and {@code equals} by its own identity and hands
   * every other call to {@code calls}.
   *
   * @param calls the other calls, typically ending in {@link #pass}
   * @return the proxy
   */
  static Connection proxy(InvocationHandler calls) {
    return (Connection)
        Proxy.newProxyInstance(
            Connection.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              String name = method.getName();
              if (name.equals("hashCode") && args == null) {
                return System.identityHashCode(proxy);
              }
              if (name.equals("equals") && args != null && args.length == 1) {
                return proxy == args[0];
              }
              return calls.invoke(proxy, method, args);
            });
  }

  /**
   * Makes a call on the connection behind, throwing what it threw.
   *
   * @param target the connection behind
   * @param method the method
   * @param args its arguments
   * @return what it returned
   * @throws Throwable what it threw
   */
  static Object pass(Connection target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}

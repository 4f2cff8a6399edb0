package dev.ledger.kernel;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The caller's data source as the ledger's own machinery sees it outside {@link Engine#write} and
 * {@link Engine#read}: Flyway listing the migrations when the ledger opens, a new domain's schema
 * being made, the directory's checks. Each connection it hands out waits at most the network bound
 * for the server (JDBC {@code setNetworkTimeout}), and gets its socket timeout back when it is
 * closed, before the pool has it again: a blackholed link ends these calls too, instead of a socket
 * read that never returns. A connection already in a caller's transaction (autocommit off when it
 * is handed out: Spring's) is passed through untouched. Thread-safe.
 */
final class NetworkBoundDataSource implements DataSource {

  private final DataSource target;
  private final Bounds bounds;

  NetworkBoundDataSource(DataSource target, Bounds bounds) {
    this.target = target;
    this.bounds = bounds;
  }

  @Override
  public Connection getConnection() throws SQLException {
    return bound(target.getConnection());
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    return bound(target.getConnection(username, password));
  }

  private Connection bound(Connection c) throws SQLException {
    if (!c.getAutoCommit()) {
      return c; // a caller's transaction: its own settings bound it
    }
    int previous;
    try {
      previous = bounds.bindNetwork(c);
    } catch (SQLException | RuntimeException e) {
      c.close();
      throw e;
    }
    return (Connection)
        Proxy.newProxyInstance(
            Connection.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              switch (method.getName()) {
                case "close" -> {
                  Bounds.restore(c, previous);
                  c.close();
                  return null;
                }
                case "hashCode" -> {
                  return System.identityHashCode(proxy);
                }
                case "equals" -> {
                  return proxy == args[0];
                }
                default -> {
                  try {
                    return method.invoke(c, args);
                  } catch (InvocationTargetException e) {
                    throw e.getCause();
                  }
                }
              }
            });
  }

  @Override
  public PrintWriter getLogWriter() throws SQLException {
    return target.getLogWriter();
  }

  @Override
  public void setLogWriter(PrintWriter out) throws SQLException {
    target.setLogWriter(out);
  }

  @Override
  public void setLoginTimeout(int seconds) throws SQLException {
    target.setLoginTimeout(seconds);
  }

  @Override
  public int getLoginTimeout() throws SQLException {
    return target.getLoginTimeout();
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    return target.getParentLogger();
  }

  @Override
  public <T> T unwrap(Class<T> type) throws SQLException {
    return type.isInstance(this) ? type.cast(this) : target.unwrap(type);
  }

  @Override
  public boolean isWrapperFor(Class<?> type) throws SQLException {
    return type.isInstance(this) || target.isWrapperFor(type);
  }
}

package dev.ledger.diff;

import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * A data source that hands out the connections it was given back instead of opening new ones, each
 * reset to a new session's state first ({@code DISCARD ALL}: settings such as {@code search_path}
 * that a migration or a checked script set, prepared statements, temporary tables, advisory locks).
 *
 * <p>A diff applies three migration sets, reads three catalogs and lists the schemas around each;
 * over one new connection each (Flyway's own included), that is some fifteen PostgreSQL backends
 * started per diff, each with cold catalog caches for the catalog reader. A reused backend keeps
 * its caches warm; what it reads is the same, since {@code DISCARD ALL} leaves nothing of an
 * earlier use but the caches. A connection that does not come back clean (its reset fails) is
 * closed.
 */
final class ReusedConnections implements DataSource, AutoCloseable {

  private final DataSource target;
  private final Deque<Connection> idle = new ArrayDeque<>();
  private boolean closed;

  /**
   * Reuses the connections of a data source.
   *
   * @param target where new connections come from
   */
  ReusedConnections(DataSource target) {
    this.target = target;
  }

  /**
   * An idle connection in a new session's state, or a new one; closing it gives it back.
   *
   * @return a connection
   * @throws SQLException when a new connection cannot be opened
   */
  @Override
  public Connection getConnection() throws SQLException {
    Connection physical;
    synchronized (this) {
      physical = idle.pollFirst();
    }
    if (physical == null) {
      physical = target.getConnection();
    }
    return wrap(physical);
  }

  /**
   * Not supported: the credentials are the target's.
   *
   * @param user ignored
   * @param password ignored
   * @return never
   * @throws SQLFeatureNotSupportedException always
   */
  @Override
  public Connection getConnection(String user, String password) throws SQLException {
    throw new SQLFeatureNotSupportedException("the credentials are the target data source's");
  }

  private Connection wrap(Connection physical) {
    InvocationHandler handler =
        new InvocationHandler() {
          private boolean released;

          @Override
          public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            switch (method.getName()) {
              case "close":
                if (!released) {
                  released = true;
                  giveBack(physical);
                }
                return null;
              case "isClosed":
                return released || physical.isClosed();
              case "equals":
                return proxy == args[0];
              case "hashCode":
                return System.identityHashCode(proxy);
              case "toString":
                return "reused " + physical;
              default:
                if (released) {
                  throw new SQLException("connection closed");
                }
                try {
                  return method.invoke(physical, args);
                } catch (InvocationTargetException e) {
                  throw e.getCause();
                }
            }
          }
        };
    return (Connection)
        Proxy.newProxyInstance(
            ReusedConnections.class.getClassLoader(), new Class<?>[] {Connection.class}, handler);
  }

  /** Resets a returned connection to a new session's state and keeps it, or closes it. */
  private void giveBack(Connection physical) {
    boolean keep;
    try {
      if (physical.isClosed()) {
        return;
      }
      if (!physical.getAutoCommit()) {
        physical.rollback();
        physical.setAutoCommit(true);
      }
      try (Statement s = physical.createStatement()) {
        s.execute("DISCARD ALL");
      }
      keep = true;
    } catch (SQLException e) {
      keep = false;
    }
    synchronized (this) {
      if (keep && !closed) {
        idle.addFirst(physical);
        return;
      }
    }
    closeQuietly(physical);
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException e) {
      // the backend is gone or going: nothing of ours is left on it
    }
  }

  /** Closes the idle connections; connections in use are closed when they are given back. */
  @Override
  public void close() {
    Deque<Connection> toClose;
    synchronized (this) {
      closed = true;
      toClose = new ArrayDeque<>(idle);
      idle.clear();
    }
    toClose.forEach(ReusedConnections::closeQuietly);
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
  public <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) {
      return iface.cast(this);
    }
    return target.unwrap(iface);
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) throws SQLException {
    return iface.isInstance(this) || target.isWrapperFor(iface);
  }
}

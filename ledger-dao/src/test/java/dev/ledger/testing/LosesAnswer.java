package dev.ledger.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import javax.sql.DataSource;

/**
 * A data source wrapper that, once armed, loses the answer of the next execute of a statement that
 * commits itself (prepared on a connection in autocommit mode, its SQL text matching the armed
 * predicate): the execute runs on the server for real, committed before the server answered, then
 * the connection is aborted and the execute throws a connection-loss error (SQLState 08006), as
 * when the network drops the answer. The counterpart of {@link CommitDropProxy} for an operation
 * that sends no {@code COMMIT} (issue 26: a statement in autocommit mode commits itself). Fires
 * once per arming. Thread-safe.
 *
 * <pre>{@code
 * LosesAnswer lossy = new LosesAnswer();
 * Ledger ledger = Ledger.open(lossy.wrap(pool));
 * lossy.arm(sql -> sql.contains("\"routes\""));
 * }</pre>
 */
public final class LosesAnswer {

  private final AtomicReference<Predicate<String>> armed = new AtomicReference<>();
  private final AtomicInteger fired = new AtomicInteger();

  /**
   * Arms for the next matching execute of any connection.
   *
   * @param statement which SQL texts to lose the answer of
   */
  public void arm(Predicate<String> statement) {
    armed.set(statement);
  }

  /**
   * How often an answer was lost.
   *
   * @return the count
   */
  public int fired() {
    return fired.get();
  }

  /**
   * Wraps a data source: its connections lose an answer when armed.
   *
   * @param real the data source
   * @return the wrapper
   */
  public DataSource wrap(DataSource real) {
    return proxy(
        DataSource.class,
        real,
        (m, args, out) -> out instanceof Connection c ? connection(c) : out);
  }

  private Connection connection(Connection real) {
    return proxy(
        Connection.class,
        real,
        (m, args, out) -> {
          Predicate<String> p = armed.get();
          if (p != null
              && m.getName().equals("prepareStatement")
              && p.test((String) args[0])
              && real.getAutoCommit()) {
            return statement(real, (PreparedStatement) out, p);
          }
          return out;
        });
  }

  private PreparedStatement statement(Connection real, PreparedStatement ps, Predicate<String> p) {
    return proxy(
        PreparedStatement.class,
        ps,
        (m, args, out) -> {
          if (m.getName().startsWith("execute") && armed.compareAndSet(p, null)) {
            real.abort(Runnable::run);
            fired.incrementAndGet();
            throw new SQLException("connection lost", "08006");
          }
          return out;
        });
  }

  /** What a proxy returns after the real call: given the method, arguments and real result. */
  private interface After {
    Object after(Method m, Object[] args, Object result) throws Exception;
  }

  private static <T> T proxy(Class<T> type, T target, After after) {
    return type.cast(
        Proxy.newProxyInstance(
            type.getClassLoader(),
            new Class<?>[] {type},
            (p, m, args) -> {
              Object result;
              try {
                result = m.invoke(target, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
              return after.after(m, args, result);
            }));
  }
}

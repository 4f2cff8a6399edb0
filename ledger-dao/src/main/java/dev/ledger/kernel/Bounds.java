package dev.ledger.kernel;

import dev.ledger.Timeouts;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * Puts {@link Timeouts} on a connection for the span of one transaction the ledger owns: the socket
 * timeout (JDBC {@code setNetworkTimeout}, no round trip) and, in one statement that also opens the
 * transaction, PostgreSQL's {@code lock_timeout} and {@code statement_timeout} with {@code
 * set_config(..., true)}, which end with the transaction. The caller's connection settings are
 * never left changed: the transaction-local settings go with the commit or rollback, and the socket
 * timeout is put back before the connection is. Thread-safe (immutable).
 */
final class Bounds {

  /**
   * The statement that sets both server-side bounds, rendered once by jOOQ: {@code select
   * set_config('lock_timeout', ?, true), set_config('statement_timeout', ?, true)}.
   */
  private static final String SET_LOCAL =
      DSL.using(SQLDialect.POSTGRES)
          .render(
              DSL.select(
                  DSL.function(
                      "set_config",
                      String.class,
                      DSL.inline("lock_timeout"),
                      DSL.val(""),
                      DSL.inline(true)),
                  DSL.function(
                      "set_config",
                      String.class,
                      DSL.inline("statement_timeout"),
                      DSL.val(""),
                      DSL.inline(true))));

  private final String lock;
  private final String statement;
  private final int networkMillis;

  Bounds(Timeouts timeouts) {
    this.lock = Timeouts.setting(timeouts.lock());
    this.statement = Timeouts.setting(timeouts.statement());
    this.networkMillis = (int) timeouts.network().toMillis();
  }

  /**
   * The server-side bounds as PostgreSQL settings, for a statement that sets them itself ({@link
   * Tx#takeBounds()}).
   *
   * @return {@code lock_timeout} and {@code statement_timeout}, in that order
   */
  String[] settings() {
    return new String[] {lock, statement};
  }

  /**
   * Sets the socket timeout of a connection the ledger took from the pool.
   *
   * @param c the connection, in autocommit mode (not a caller's transaction)
   * @return the socket timeout it had, to give back with {@link #restore}
   * @throws SQLException when the driver refuses
   */
  int bindNetwork(Connection c) throws SQLException {
    int previous = c.getNetworkTimeout();
    c.setNetworkTimeout(Runnable::run, networkMillis);
    return previous;
  }

  /**
   * Puts a connection's socket timeout back.
   *
   * @param c the connection
   * @param previous what {@link #bindNetwork} returned
   */
  static void restore(Connection c, int previous) {
    try {
      if (!c.isClosed()) {
        c.setNetworkTimeout(Runnable::run, previous);
      }
    } catch (SQLException | RuntimeException e) {
      // a broken connection: the pool discards it, and its settings with it
    }
  }

  /**
   * Sets the lock and statement bounds for the transaction just begun on {@code c} (autocommit
   * off): the statement opens the transaction.
   *
   * @param c the connection
   * @throws SQLException when the statement fails
   */
  void bindTransaction(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SET_LOCAL)) {
      ps.setString(1, lock);
      ps.setString(2, statement);
      ps.execute();
    }
  }
}

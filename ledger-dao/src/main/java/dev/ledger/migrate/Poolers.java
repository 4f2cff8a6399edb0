package dev.ledger.migrate;

import java.sql.Connection;
import java.sql.SQLException;
import org.jooq.SQLDialect;
import org.jooq.conf.Settings;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.postgresql.PGConnection;

/**
 * Tells a connection through a transaction-mode (or statement-mode) pooler from a direct one or one
 * through a session-mode pool, before a migration run takes its session-level advisory lock:
 * through PgBouncer's {@code pool_mode=transaction} the lock would be taken on whichever server
 * connection served that one statement and stay there, held, after the run (issue #13, item 10).
 *
 * <p>How: a direct connection's {@code pg_backend_pid()} is the process id the server announced
 * when the connection started (pgjdbc's {@link PGConnection#getBackendPID()}); a pooler announces
 * one of its own, so a difference means a pooler. Then the probe tells the modes apart: a second
 * connection from the same source opens a transaction (in transaction mode that pins a server
 * connection to it, by PgBouncer's default the one the first connection used last) and the first
 * connection asks for its backend pid again. In session mode the first connection keeps its server
 * for its whole life: same pid, and the second connection has another. In transaction mode the
 * second got the first one's server, or the first now gets another one (or waits for one: the probe
 * gives it {@value #PROBE_TIMEOUT_MS} ms). Statement mode refuses the transaction outright. Costs
 * nothing on a direct connection (the check rides on the first lock attempt, see {@link
 * SessionLock}), one extra connection and three statements through a pooler.
 */
final class Poolers {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Poolers.class);

  /** How long the probe's second question may wait for a server connection, in milliseconds. */
  static final int PROBE_TIMEOUT_MS = 5_000;

  private Poolers() {}

  /**
   * The backend pid the server (or a pooler) announced when the connection started.
   *
   * @param connection a PostgreSQL connection, possibly a pool's proxy
   * @return the pid; -1 when the connection is no pgjdbc connection
   */
  static int announcedPid(Connection connection) {
    try {
      return connection.unwrap(PGConnection.class).getBackendPID();
    } catch (SQLException e) {
      return -1;
    }
  }

  /**
   * Refuses a connection that goes through a pooler in transaction or statement mode; returns for
   * one through a session-mode pool.
   *
   * @param first the run's dedicated connection, autocommit on, idle
   * @param firstPid the {@code pg_backend_pid()} it reported (differing from its announced pid)
   * @param source where a second connection comes from (the same URL)
   * @param subject what the run migrates, for the message, free of credentials
   * @throws MigrationException ({@link MigrationException.Reason#TRANSACTION_POOLER}) when the
   *     pooler hands server connections out per transaction or per statement
   * @throws SQLException when the second connection cannot be opened
   */
  static void refuseTransactionPooling(
      Connection first, int firstPid, ConnectionSource source, String subject) throws SQLException {
    boolean perTransaction;
    try (Connection second = source.open()) {
      int pinned;
      try {
        second.setAutoCommit(false);
        pinned = backendPid(second);
      } catch (SQLException | DataAccessException refused) {
        // statement mode ("transaction blocks not allowed in statement pooling mode"), or another
        // client's prepared statements on the server it was given
        throw refusal(subject);
      }
      int again;
      try {
        first.setNetworkTimeout(Runnable::run, PROBE_TIMEOUT_MS);
        again = backendPid(first);
        first.setNetworkTimeout(Runnable::run, 0);
      } catch (SQLException | DataAccessException waited) {
        // the first connection had to wait for a server: the pooler shares them per transaction
        again = -1;
      } finally {
        try {
          second.rollback();
        } catch (SQLException | DataAccessException e) {
          // the connection closes next; a failed rollback there ends its transaction too
          LOG.debug("the pooler probe's rollback failed: {}", e.getMessage());
        }
      }
      perTransaction = pinned == firstPid || again != firstPid;
    }
    if (perTransaction) {
      throw refusal(subject);
    }
  }

  /**
   * The connection's {@code pg_backend_pid()}.
   *
   * @param connection an open connection
   * @return the pid of the server process that answered
   * @throws DataAccessException when the statement fails
   */
  static int backendPid(Connection connection) {
    Integer pid =
        DSL.using(connection, SQLDialect.POSTGRES, new Settings().withExecuteLogging(false))
            .select(backendPid())
            .fetchOne(0, Integer.class);
    return pid == null ? -1 : pid;
  }

  /**
   * {@code pg_backend_pid()}.
   *
   * @return the field
   */
  static org.jooq.Field<Integer> backendPid() {
    return DSL.function("pg_backend_pid", Integer.class);
  }

  /**
   * Whether a failure is pgjdbc's server-side prepared statements colliding with another client's
   * on one server connection ({@code prepared statement "S_1" already exists}, or {@code ... does
   * not exist}): what only a pooler that shares server connections between clients causes.
   *
   * @param e a failure
   * @return true when some cause is such an error
   */
  static boolean preparedStatementCollision(Throwable e) {
    return dev.ledger.TransactionPoolerException.collisionState(e) != null;
  }

  /**
   * The refusal of a run through a pooler in transaction or statement mode.
   *
   * @param subject what the run migrates, free of credentials
   * @return the exception ({@link MigrationException.Reason#TRANSACTION_POOLER})
   */
  static MigrationException refusal(String subject) {
    return new MigrationException(
        MigrationException.Reason.TRANSACTION_POOLER,
        "the database of "
            + subject
            + " is reached through a connection pooler in transaction or statement mode (e.g."
            + " PgBouncer pool_mode=transaction), where the migration's session-level advisory"
            + " lock would stay behind on a pooled server connection; nothing was locked or"
            + " changed. Use a direct URL to PostgreSQL or one to a session-mode pool",
        null);
  }
}

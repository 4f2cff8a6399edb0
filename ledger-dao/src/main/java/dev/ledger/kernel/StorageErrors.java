package dev.ledger.kernel;

import dev.ledger.LedgerStorageException;
import dev.ledger.LedgerTimeoutException;
import dev.ledger.LedgerTimeoutException.Bound;
import dev.ledger.Timeouts;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;

/**
 * Turns a failure of the database or the driver into the ledger's typed error: a bound of {@link
 * Timeouts} that ran out becomes a {@link LedgerTimeoutException} naming it, a deadlock or
 * serialization failure a {@link dev.ledger.LedgerConflictException} (retryable), anything else a
 * {@link LedgerStorageException} with the real SQLState. Never a SQLState of {@code 00000} (jOOQ's
 * "no database error" for an exception it raised itself) nor none at all when the driver lost the
 * connection: an I/O failure under the driver is PostgreSQL's {@code 08006}, connection failure.
 * Thread-safe (immutable).
 */
final class StorageErrors {

  /** PostgreSQL's {@code lock_not_available}: {@code lock_timeout} ran out (or a NOWAIT). */
  static final String LOCK_NOT_AVAILABLE = "55P03";

  /** PostgreSQL's {@code query_canceled}: {@code statement_timeout}, or a cancel request. */
  static final String QUERY_CANCELED = "57014";

  /** PostgreSQL's {@code connection_failure}. */
  static final String CONNECTION_FAILURE = "08006";

  /** PostgreSQL's {@code sqlclient_unable_to_establish_sqlconnection}. */
  static final String CANNOT_CONNECT = "08001";

  private final Timeouts timeouts;

  StorageErrors(Timeouts timeouts) {
    this.timeouts = timeouts;
  }

  /**
   * The typed error of a failed statement or commit.
   *
   * @param operation the ledger operation, e.g. {@code complete}
   * @param failure what the driver or jOOQ threw
   * @param inCommit true when it failed in the ledger's own commit
   * @return the error to throw: a {@link dev.ledger.TransactionPoolerException} when pgjdbc's
   *     prepared statements collided through a transaction-mode pooler
   */
  dev.ledger.LedgerException of(String operation, Throwable failure, boolean inCommit) {
    String collision = dev.ledger.TransactionPoolerException.collisionState(failure);
    if (collision != null) {
      // pgjdbc's prepared statements through a transaction-mode pooler: the remedy is known
      return new dev.ledger.TransactionPoolerException(operation, collision, failure);
    }
    String state = sqlState(failure);
    boolean lost = lostConnection(state);
    if (has(failure, SocketTimeoutException.class)) {
      return new LedgerTimeoutException(
          operation, Bound.NETWORK, timeouts.network(), state, failure, inCommit);
    }
    if (LOCK_NOT_AVAILABLE.equals(state)) {
      return new LedgerTimeoutException(
          operation, Bound.LOCK, timeouts.lock(), state, failure, false);
    }
    if (dev.ledger.LedgerConflictException.conflict(state)) {
      // a deadlock or a serialization failure: the server ended the transaction; run it again
      return new dev.ledger.LedgerConflictException(operation, state, failure);
    }
    if (QUERY_CANCELED.equals(state) && !mentions(failure, "user request")) {
      return new LedgerTimeoutException(
          operation, Bound.STATEMENT, timeouts.statement(), state, failure, false);
    }
    return new LedgerStorageException(operation, state, failure, inCommit && lost);
  }

  /**
   * The typed error of a connection that could not be had from the data source.
   *
   * @param operation the ledger operation
   * @param failure what the data source threw
   * @return a {@link LedgerTimeoutException} of {@link Bound#CONNECT} when the server could not be
   *     reached or the pool gave none in its time, else a {@link LedgerStorageException} (a refused
   *     login, a bad database name)
   */
  LedgerStorageException connecting(String operation, SQLException failure) {
    String state = sqlState(failure);
    boolean unreachable =
        failure instanceof SQLTransientConnectionException
            || has(failure, ConnectException.class)
            || has(failure, SocketTimeoutException.class)
            || has(failure, NoRouteToHostException.class)
            || has(failure, UnknownHostException.class)
            || CANNOT_CONNECT.equals(state)
            || CONNECTION_FAILURE.equals(state);
    if (unreachable) {
      // the pool's own bound (HikariCP's connectionTimeout) is not known here
      Duration limit =
          failure instanceof SQLTransientConnectionException ? null : timeouts.connect();
      return new LedgerTimeoutException(
          operation, Bound.CONNECT, limit, state == null ? CANNOT_CONNECT : state, failure, false);
    }
    return new LedgerStorageException(operation, state, failure);
  }

  /**
   * The SQLState of a failure: the first the cause chain holds; {@code 08006} when there is none
   * but an I/O failure lies under it (the connection broke); else null.
   *
   * @param failure the failure
   * @return the state, never {@code 00000}
   */
  static String sqlState(Throwable failure) {
    for (Throwable t = failure; t != null; t = next(t)) {
      if (t instanceof SQLException s) {
        for (SQLException e = s; e != null; e = e.getNextException()) {
          String state = e.getSQLState();
          if (state != null && !state.isEmpty() && !"00000".equals(state)) {
            return state;
          }
        }
      }
    }
    return has(failure, IOException.class) ? CONNECTION_FAILURE : null;
  }

  /**
   * Whether a failure with this state means the connection may be gone: none known, class 08, or
   * class 57 (the server ended the session, e.g. {@code pg_terminate_backend}, or shuts down).
   */
  static boolean lostConnection(String state) {
    return state == null || state.startsWith("08") || state.startsWith("57");
  }

  /**
   * The converter failure behind a jOOQ error that no database error caused (jOOQ reports those
   * with SQLState {@code 00000}).
   *
   * @param e the error
   * @return the converter's {@link IllegalArgumentException}, or null
   */
  static IllegalArgumentException unreadableValue(org.jooq.exception.DataAccessException e) {
    if (e.getCause(java.sql.SQLException.class) != null) {
      return null;
    }
    for (Throwable t = e.getCause(); t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof IllegalArgumentException i) {
        return i;
      }
    }
    return null;
  }

  private static boolean has(Throwable failure, Class<? extends Throwable> type) {
    for (Throwable t = failure; t != null; t = next(t)) {
      if (type.isInstance(t)) {
        return true;
      }
    }
    return false;
  }

  private static boolean mentions(Throwable failure, String words) {
    for (Throwable t = failure; t != null; t = next(t)) {
      String m = t.getMessage();
      if (m != null && m.contains(words)) {
        return true;
      }
    }
    return false;
  }

  private static Throwable next(Throwable t) {
    Throwable c = t.getCause();
    return c == t ? null : c;
  }
}

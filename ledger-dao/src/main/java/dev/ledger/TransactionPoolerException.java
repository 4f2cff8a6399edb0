package dev.ledger;

/**
 * A ledger operation failed because its connection goes through a pooler that shares server
 * connections between clients per transaction (PgBouncer {@code pool_mode=transaction}) while
 * pgjdbc prepares statements on the server: once a statement has run {@code prepareThreshold} times
 * (default 5) pgjdbc names it ({@code S_1}, {@code S_2}, ...) on the server connection it happened
 * to get, and another client's {@code S_1} on that connection collides ({@code prepared statement
 * "S_1" already exists}) or is missing ({@code ... does not exist}). Nothing was written: the
 * statement failed, its transaction rolled back (or, in a caller's transaction, is aborted for the
 * caller to roll back).
 *
 * <p>Remedy, as the message says: {@code prepareThreshold=0} on the JDBC URL ({@code
 * jdbc:postgresql://pooler:6432/db?prepareThreshold=0}) or the data source ({@code
 * PGSimpleDataSource.setPrepareThreshold(0)}, HikariCP {@code
 * addDataSourceProperty("prepareThreshold", 0)}), or a session-mode pool. Migrations are refused
 * through such a pooler altogether ({@code dev.ledger.migrate.MigrationException.Reason
 * #TRANSACTION_POOLER}).
 */
public final class TransactionPoolerException extends LedgerException {

  private static final long serialVersionUID = 1L;

  private final String operation;
  private final String sqlState;

  /**
   * Creates the error.
   *
   * @param operation the ledger operation, e.g. {@code file}
   * @param sqlState PostgreSQL's SQLState: {@code 42P05} (already exists) or {@code 26000} (does
   *     not exist)
   * @param cause the driver's failure
   */
  public TransactionPoolerException(String operation, String sqlState, Throwable cause) {
    super(
        operation
            + " failed: the connection goes through a pooler in transaction mode (e.g. PgBouncer"
            + " pool_mode=transaction), where pgjdbc's server-side prepared statements of"
            + " different clients collide (SQLState "
            + sqlState
            + "); set prepareThreshold=0 on the JDBC URL or data source"
            + " (jdbc:postgresql://host:port/db?prepareThreshold=0), or use a session-mode pool",
        cause);
    this.operation = operation;
    this.sqlState = sqlState;
  }

  /**
   * The operation that failed.
   *
   * @return e.g. {@code file}
   */
  public String operation() {
    return operation;
  }

  /**
   * PostgreSQL's SQLState.
   *
   * @return {@code 42P05} or {@code 26000}
   */
  public String sqlState() {
    return sqlState;
  }

  /**
   * Whether a failure is such a collision: an {@link java.sql.SQLException} in its causes with
   * SQLState {@code 42P05} or {@code 26000} about a pgjdbc-named statement ({@code "S_<n>"}).
   *
   * @param failure any failure, may be null
   * @return the SQLState when it is, else null
   */
  public static String collisionState(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof java.sql.SQLException q
          && ("42P05".equals(q.getSQLState()) || "26000".equals(q.getSQLState()))
          && String.valueOf(q.getMessage()).contains("prepared statement \"S_")) {
        return q.getSQLState();
      }
    }
    return null;
  }
}

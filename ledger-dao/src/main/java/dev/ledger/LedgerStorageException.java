package dev.ledger;

/**
 * The database failed an operation (connection lost, statement refused). Keeps the cause and
 * PostgreSQL's SQLState; the message names the operation, never bind values or the DSN.
 */
public final class LedgerStorageException extends LedgerException {

  private static final long serialVersionUID = 1L;

  private final String sqlState;

  /**
   * Creates the error.
   *
   * @param operation the ledger operation, e.g. {@code file}
   * @param sqlState PostgreSQL's SQLState, or null when unknown
   * @param cause the failure
   */
  public LedgerStorageException(String operation, String sqlState, Throwable cause) {
    super(
        operation
            + " failed in the database"
            + (sqlState == null ? "" : " (SQLState " + sqlState + ")")
            + ": "
            + firstLine(cause),
        cause);
    this.sqlState = sqlState;
  }

  /**
   * PostgreSQL's SQLState.
   *
   * @return e.g. {@code 08006}, or null
   */
  public String sqlState() {
    return sqlState;
  }

  private static String firstLine(Throwable cause) {
    Throwable root = cause;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String m = String.valueOf(root.getMessage());
    int nl = m.indexOf('\n');
    return nl < 0 ? m : m.substring(0, nl);
  }
}

package dev.ledger;

/**
 * The database failed an operation (connection lost, statement refused). Keeps the cause and
 * PostgreSQL's SQLState; the message names the operation, never bind values or the DSN.
 *
 * <p>{@link #outcomeUnknown()} tells the one case where the write may have happened after all: the
 * connection was lost while the ledger committed its own transaction, so the server may have
 * committed without the answer arriving. Then retry only an idempotent operation (a filing with an
 * origin and upstream event returns the first task's id; a heartbeat or complete whose lease is
 * lost meanwhile says so), or read first. Every other storage failure left nothing written.
 */
public class LedgerStorageException extends LedgerException {

  private static final long serialVersionUID = 1L;

  private final String sqlState;
  private final boolean outcomeUnknown;

  /**
   * Creates the error of a failure that left nothing written.
   *
   * @param operation the ledger operation, e.g. {@code file}
   * @param sqlState PostgreSQL's SQLState, or null when unknown
   * @param cause the failure
   */
  public LedgerStorageException(String operation, String sqlState, Throwable cause) {
    this(operation, sqlState, cause, false);
  }

  /**
   * Creates the error.
   *
   * @param operation the ledger operation, e.g. {@code file}
   * @param sqlState PostgreSQL's SQLState, or null when unknown
   * @param cause the failure
   * @param outcomeUnknown true when the connection was lost during the commit, so the write may
   *     have been committed
   */
  public LedgerStorageException(
      String operation, String sqlState, Throwable cause, boolean outcomeUnknown) {
    super(
        operation
            + (outcomeUnknown
                ? ": the connection was lost during the commit, so the outcome is unknown (the"
                    + " write may have been committed; retry only an idempotent operation, or read"
                    + " first)"
                : " failed in the database")
            + (sqlState == null ? "" : " (SQLState " + sqlState + ")")
            + ": "
            + firstLine(cause),
        cause);
    this.sqlState = sqlState;
    this.outcomeUnknown = outcomeUnknown;
  }

  /**
   * Creates the error with a message of a subtype's own.
   *
   * @param message the whole message, naming the operation
   * @param sqlState PostgreSQL's SQLState, or null when unknown
   * @param cause the failure
   * @param outcomeUnknown true when the connection was lost during the commit
   */
  protected LedgerStorageException(
      String message, Throwable cause, String sqlState, boolean outcomeUnknown) {
    super(message, cause);
    this.sqlState = sqlState;
    this.outcomeUnknown = outcomeUnknown;
  }

  /**
   * Whether the write may have been committed although the operation failed: the connection was
   * lost while the ledger committed its own transaction. False for every failure before the commit,
   * for a commit the server refused (it rolled back), and inside a caller's transaction (the ledger
   * does not commit it).
   *
   * @return true when the outcome is unknown
   */
  public boolean outcomeUnknown() {
    return outcomeUnknown;
  }

  /**
   * PostgreSQL's SQLState.
   *
   * @return e.g. {@code 08006}, or null
   */
  public String sqlState() {
    return sqlState;
  }

  /**
   * What the failure says, on one line: the deepest message in the cause chain that says anything,
   * with the class of the root cause when that is not the message's own (a lost connection's root
   * is often an {@code EOFException} or {@code SocketException} with no message at all).
   *
   * @param cause the failure
   * @return e.g. {@code An I/O error occurred while sending to the backend. (EOFException)}
   */
  static String firstLine(Throwable cause) {
    if (cause == null) {
      return "no cause recorded";
    }
    String message = null;
    Throwable said = null;
    Throwable root = cause;
    for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
      root = t;
      String m = t.getMessage();
      if (m != null && !m.isBlank()) {
        message = m;
        said = t;
      }
    }
    if (message == null) {
      return root.getClass().getSimpleName();
    }
    int nl = message.indexOf('\n');
    String line = nl < 0 ? message : message.substring(0, nl);
    return said == root ? line : line + " (" + root.getClass().getSimpleName() + ")";
  }
}

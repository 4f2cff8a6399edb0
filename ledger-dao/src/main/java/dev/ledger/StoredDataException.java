package dev.ledger;

/**
 * A value stored in the database cannot be read as the ledger wrote it (a time that is not RFC
 * 3339, for example, written by hand or by another program): the data is bad, not the database. The
 * message names the operation and, where the ledger knows it, the row (an event's sequence number,
 * task and schema) and the stored text; it never holds task titles or bodies. Fix the row, or
 * replay once it is fixed. {@code ledger-app} exits 1.
 */
public final class StoredDataException extends LedgerException {

  private static final long serialVersionUID = 1L;

  private final String operation;

  /**
   * Creates the error.
   *
   * @param operation the ledger operation, e.g. {@code history}
   * @param what which value and why it cannot be read
   * @param cause the parse failure
   */
  public StoredDataException(String operation, String what, Throwable cause) {
    super(operation + " failed: bad stored data: " + what, cause);
    this.operation = operation;
  }

  /**
   * The operation that failed.
   *
   * @return e.g. {@code history}
   */
  public String operation() {
    return operation;
  }
}

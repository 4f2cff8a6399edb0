package dev.ledger;

/**
 * PostgreSQL ended the operation's transaction because it conflicted with another one: a deadlock
 * ({@code 40P01}, {@code deadlock_detected}) or, in a caller's {@code SERIALIZABLE} or {@code
 * REPEATABLE READ} transaction, a serialization failure ({@code 40001}). Nothing was written: the
 * server rolled the ledger's own transaction back, or aborted the caller's, for the caller to roll
 * back. The operation is worth running again as it is, from the start of its transaction: {@link
 * #retryable()} is always true.
 *
 * <p>Where a deadlock can come from since filings run concurrently (issue 26): two caller
 * transactions each filing the same two upstream events (origin keys) in opposite orders; two that
 * each file a task of one new claim class and then of another, in opposite orders; and a caller
 * transaction that files into a domain (the domain's lock shared) and then scrubs it or records a
 * promotion in it (the lock exclusive) while another does the same. File a transaction's upstream
 * events in one order (sorted) to avoid the first; PostgreSQL detects each after {@code
 * deadlock_timeout} (1 s by default) and ends one transaction, never both.
 *
 * <pre>{@code
 * for (int attempt = 1; ; attempt++) {
 *   try (Connection c = dataSource.getConnection()) {
 *     c.setAutoCommit(false);
 *     try {
 *       ledger.in(c).fileAndAdmit(a);
 *       ledger.in(c).fileAndAdmit(b);
 *       c.commit();
 *       break;
 *     } catch (LedgerConflictException e) {
 *       c.rollback();
 *       if (attempt == 3) throw e;
 *     }
 *   }
 * }
 * }</pre>
 */
public final class LedgerConflictException extends LedgerStorageException {

  private static final long serialVersionUID = 1L;

  /** PostgreSQL's {@code deadlock_detected}. */
  public static final String DEADLOCK = "40P01";

  /** PostgreSQL's {@code serialization_failure}. */
  public static final String SERIALIZATION_FAILURE = "40001";

  /**
   * Creates the error.
   *
   * @param operation the ledger operation, e.g. {@code file and admit}
   * @param sqlState {@link #DEADLOCK} or {@link #SERIALIZATION_FAILURE}
   * @param cause the driver's failure
   */
  public LedgerConflictException(String operation, String sqlState, Throwable cause) {
    super(
        operation
            + " failed: its transaction conflicted with another one ("
            + (DEADLOCK.equals(sqlState) ? "a deadlock" : "a serialization failure")
            + ", SQLState "
            + sqlState
            + ") and was ended by the server; nothing was written: roll back and run the"
            + " transaction again: "
            + firstLine(cause),
        cause,
        sqlState,
        false);
  }

  /**
   * Whether the failure is worth retrying as it is: always, from the start of the transaction.
   *
   * @return true
   */
  public boolean retryable() {
    return true;
  }

  /**
   * Whether a SQLState is one this error stands for.
   *
   * @param sqlState a SQLState, or null
   * @return true for {@link #DEADLOCK} and {@link #SERIALIZATION_FAILURE}
   */
  public static boolean conflict(String sqlState) {
    return DEADLOCK.equals(sqlState) || SERIALIZATION_FAILURE.equals(sqlState);
  }
}

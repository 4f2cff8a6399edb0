package dev.ledger;

/**
 * The root of every error the ledger throws on purpose; unchecked. Subtypes carry the ids involved
 * as fields and in the message, and say what to do. Messages never carry task titles, bodies or
 * connection strings.
 */
public class LedgerException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /**
   * Creates the error.
   *
   * @param message what went wrong and what to do, not null
   */
  public LedgerException(String message) {
    super(message);
  }

  /**
   * Creates the error with its cause.
   *
   * @param message what went wrong and what to do, not null
   * @param cause the underlying failure, may be null
   */
  public LedgerException(String message, Throwable cause) {
    super(message, cause);
  }
}

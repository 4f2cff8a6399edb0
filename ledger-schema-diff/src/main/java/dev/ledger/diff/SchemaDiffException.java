package dev.ledger.diff;

/**
 * A schema diff could not be made: a path that is neither a migrations directory nor a jar, a
 * migration that fails, a database that cannot be reached. The message is one line that names what
 * was wrong (for a failing migration: the script, the line and PostgreSQL's message) and never
 * holds a password.
 */
public class SchemaDiffException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /**
   * An error with a cause.
   *
   * @param message the one-line message
   * @param cause the cause, may be null
   */
  public SchemaDiffException(String message, Throwable cause) {
    super(message, cause);
  }

  /**
   * An error without a cause.
   *
   * @param message the one-line message
   */
  public SchemaDiffException(String message) {
    super(message);
  }
}

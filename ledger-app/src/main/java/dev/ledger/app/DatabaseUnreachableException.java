package dev.ledger.app;

/**
 * The database a command names could not be connected to (unknown host, refused, authentication):
 * raised when the command opens it, before anything else runs, so it fails in about a second
 * instead of waiting out a pool's 30-second connection timeout. Exit code {@link
 * ExitCodes#DATABASE}.
 *
 * <p>The message names the database as {@code host:port/database}, never the URL's credentials.
 */
public final class DatabaseUnreachableException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /**
   * An unreachable database.
   *
   * @param message e.g. {@code cannot connect to db.example:5432/app: unknown host db.example}
   * @param cause the driver's error
   */
  public DatabaseUnreachableException(String message, Throwable cause) {
    super(message, cause);
  }
}

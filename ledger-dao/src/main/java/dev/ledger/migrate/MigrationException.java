package dev.ledger.migrate;

import dev.ledger.LedgerException;

/**
 * A migration run that could not run at all: the database was unreachable, the lock stayed taken,
 * the control database failed, or an argument was refused. A schema or tenant that fails inside a
 * run is not an exception: it is reported in the run's report and the others go on.
 *
 * <p>A {@link LedgerException}, so one {@code catch} takes every error the ledger throws on
 * purpose. Messages never contain a connection string (it carries credentials).
 */
public class MigrationException extends LedgerException {

  private static final long serialVersionUID = 1L;

  /** Why the run could not run; the command line maps each to an exit code. */
  public enum Reason {
    /** The database could not be reached or used. */
    DATABASE_UNAVAILABLE,
    /** Another run held the advisory lock longer than the lock timeout. */
    LOCK_TIMEOUT,
    /** The fleet's control database could not be reached, bootstrapped, read or written. */
    CONTROL_DATABASE,
    /**
     * The control database holds no tenant registry, and the fleet was built not to make one
     * ({@code Fleet.Builder.createRegistry(false)}): it is likely not a fleet's control database.
     * Nothing was created or changed.
     */
    NO_REGISTRY,
    /**
     * The database is reached through a pooler in transaction or statement mode (PgBouncer {@code
     * pool_mode=transaction}), where a run's session-level advisory lock would outlive it: use a
     * direct URL or one to a session-mode pool. Nothing was locked or changed.
     */
    TRANSACTION_POOLER,
    /** An argument was refused (which one, and what is allowed, is in the message). */
    INVALID_ARGUMENT,
    /**
     * The migrations on the class path (and extra locations) could not be resolved, e.g. two
     * scripts with one version.
     */
    INVALID_MIGRATIONS
  }

  private final Reason reason;
  private final String sqlState;

  /**
   * Creates the exception.
   *
   * @param reason why, not null
   * @param message what happened and what to do, free of credentials
   * @param sqlState the SQLState of the database error behind it, or null
   */
  public MigrationException(Reason reason, String message, String sqlState) {
    super(message);
    this.reason = reason;
    this.sqlState = sqlState;
  }

  /**
   * Why the run could not run.
   *
   * @return the reason, not null
   */
  public Reason reason() {
    return reason;
  }

  /**
   * The SQLState of the database error behind it.
   *
   * @return e.g. {@code 08001}, or null when no database error was involved
   */
  public String sqlState() {
    return sqlState;
  }
}

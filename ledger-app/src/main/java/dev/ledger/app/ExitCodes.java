package dev.ledger.app;

import dev.ledger.migrate.MigrationException;

/**
 * The exit codes of {@code ledger-app}, for pipelines to act on (documented in the README).
 *
 * <ul>
 *   <li>{@value #OK}: success, nothing failed or degraded;
 *   <li>{@value #FAILED}: the operation ran and failed (a schema failed to migrate or verify, a
 *       checksum differs, a refused task operation, a schema-diff rule tripped; {@code fleet
 *       migrate --strict} with a degraded tenant);
 *   <li>{@value #USAGE}: bad usage or input (unknown option, invalid value; a migration URL that
 *       goes through a transaction-mode pooler);
 *   <li>{@value #DEGRADED}: a fleet run finished with some tenant {@code degraded} (or, for {@code
 *       fleet plan}, not plannable);
 *   <li>{@value #DATABASE}: the database (or the fleet's control database) could not be reached or
 *       used;
 *   <li>{@value #NOTHING}: {@code task claim} found nothing claimable;
 *   <li>{@value #FOREIGN_SCHEMA}: a domain's schema exists and holds tables that are not a ledger's
 *       (no ledger history, not the reference stack's): {@code migrate} left it alone, {@code task
 *       file} refused to make the domain there;
 *   <li>{@value #LOCKED}: another migration run held the database's migration lock for the whole
 *       {@code --lock-timeout} ({@code migrate}, {@code plan}); for {@code fleet migrate} and
 *       {@code fleet plan}: no tenant degraded, but some tenant was skipped because another run
 *       held its lock (its status unchanged; the next run migrates it);
 *   <li>{@value #REFUSED}: a task command's {@code --tenant} is unknown, provisioning or degraded
 *       in the control database's registry (a tenant whose database does not answer is {@value
 *       #DATABASE});
 *   <li>{@value #NO_REGISTRY}: {@code fleet list}, {@code fleet plan}, {@code fleet migrate}: the
 *       control database holds no tenant registry (likely not a fleet's control database; {@code
 *       fleet register}, or {@code fleet migrate --create-registry}, makes one);
 *   <li>{@value #BEHIND_RETENTION}: {@code feed}: a retention purge removed events the consumer had
 *       not received; {@code --accept-loss} goes on past them.
 * </ul>
 */
public final class ExitCodes {

  /** Success. */
  public static final int OK = 0;

  /** The operation ran and failed. */
  public static final int FAILED = 1;

  /** Bad usage or input. */
  public static final int USAGE = 2;

  /** Some tenant ended degraded. */
  public static final int DEGRADED = 3;

  /** The database could not be reached or used. */
  public static final int DATABASE = 4;

  /** Nothing to claim. */
  public static final int NOTHING = 5;

  /**
   * The migration lock stayed taken by another run, or a task stayed busy in another transaction.
   */
  public static final int LOCKED = 6;

  /** A domain's schema holds tables that are not a ledger's; left alone. */
  public static final int FOREIGN_SCHEMA = 7;

  /** {@code --tenant}: the tenant is unknown, provisioning or degraded, so it is not served. */
  public static final int REFUSED = 8;

  /** The control database holds no tenant registry: likely the wrong database; nothing made. */
  public static final int NO_REGISTRY = 9;

  /**
   * {@code feed}: a retention purge removed events the consumer had not received ({@link
   * dev.ledger.feed.FeedBehindRetentionException}); nothing printed past the gap.
   */
  public static final int BEHIND_RETENTION = 10;

  private ExitCodes() {}

  /**
   * The one-line message for an error: the ledger's own messages as they are (they name the field
   * or id and the remedy), others with their type.
   *
   * @param e the error
   * @return the message, without credentials (the ledger never puts a DSN in a message)
   */
  public static String message(Throwable e) {
    if (e instanceof dev.ledger.LedgerException
        || e instanceof picocli.CommandLine.PicocliException) {
      return e.getMessage();
    }
    String m = e.getMessage();
    return (m == null ? e.getClass().getSimpleName() : m).lines().findFirst().orElse("");
  }

  /**
   * The exit code for an exception that escaped a command.
   *
   * @param e the exception, not null
   * @return {@link #USAGE} for picocli's parameter errors and invalid arguments, {@link #LOCKED}
   *     for a lock timeout (the migration lock, or a task another transaction held past the
   *     ledger's lock bound), {@link #NO_REGISTRY} for a control database without a registry,
   *     {@link #BEHIND_RETENTION} for a feed consumer behind the retention horizon, {@link
   *     #DATABASE} for SQL, connection and control-database failures, {@link #FAILED} otherwise
   */
  public static int of(Throwable e) {
    if (e instanceof picocli.CommandLine.ParameterException
        || e instanceof dev.ledger.InvalidInputException) {
      return USAGE;
    }
    if (e instanceof dev.ledger.TransactionPoolerException) {
      return USAGE;
    }
    if (e instanceof dev.ledger.ForeignSchemaException) {
      return FOREIGN_SCHEMA;
    }
    if (e instanceof dev.ledger.feed.FeedBehindRetentionException) {
      return BEHIND_RETENTION;
    }
    if (e instanceof dev.ledger.tenants.TenantUnavailableException t) {
      return t.reason() == dev.ledger.tenants.TenantUnavailableException.Reason.UNREACHABLE
          ? DATABASE
          : REFUSED;
    }
    if (e instanceof dev.ledger.LedgerTimeoutException t
        && t.bound() == dev.ledger.LedgerTimeoutException.Bound.LOCK) {
      return LOCKED; // "task busy": another transaction held what the command needed
    }
    if (e instanceof dev.ledger.LedgerStorageException
        || e instanceof DatabaseUnreachableException) {
      return DATABASE;
    }
    if (e instanceof MigrationException m) {
      // a LedgerException too: its reason decides, not the catch-all below
      return of(m);
    }
    if (e instanceof dev.ledger.LedgerException) {
      return FAILED;
    }
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof MigrationException m) {
        return of(m);
      }
      if (t instanceof java.sql.SQLException) {
        return DATABASE;
      }
      if (t instanceof IllegalArgumentException) {
        return USAGE;
      }
    }
    return FAILED;
  }

  private static int of(MigrationException m) {
    return switch (m.reason()) {
      case LOCK_TIMEOUT -> LOCKED;
      case INVALID_ARGUMENT, TRANSACTION_POOLER -> USAGE;
      case DATABASE_UNAVAILABLE, CONTROL_DATABASE -> DATABASE;
      case NO_REGISTRY -> NO_REGISTRY;
      case INVALID_MIGRATIONS -> FAILED;
    };
  }
}

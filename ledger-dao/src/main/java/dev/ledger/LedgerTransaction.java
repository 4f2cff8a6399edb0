package dev.ledger;

import dev.ledger.kernel.Tx;
import java.sql.Connection;
import java.util.function.Function;
import org.jooq.ConnectionProvider;

/**
 * The ledger's operations inside a caller's transaction: every write and read runs on the caller's
 * connection, and the ledger never commits, rolls back or closes it. The caller's rollback leaves
 * no task, event, route or derived row; its commit makes them all visible at once; before it, other
 * connections see nothing. {@code txid_current()} is the same before and after every call. Get one
 * from {@link Ledger#in(Connection)}, {@link Ledger#in(org.jooq.DSLContext)} or {@link
 * Ledger#in(org.jooq.Configuration)}; it is cheap, so make one per transaction.
 *
 * <pre>{@code
 * try (Connection c = dataSource.getConnection()) {
 *   c.setAutoCommit(false);
 *   insertOrder(c, order);                                   // the caller's own write
 *   ledger.in(c).fileAndAdmit(TaskSpec.builder("orders", "Ship " + order.id()).build());
 *   c.commit();                                              // both, or neither
 * }
 * }</pre>
 *
 * <p>Inside the caller's transaction:
 *
 * <ul>
 *   <li>a typed refusal ({@link InvalidInputException}, {@link TaskNotFoundException}, {@link
 *       WrongStateException}, {@link LeaseLostException}) is raised before anything is written and
 *       leaves the transaction usable; a {@link LedgerStorageException} (a failed statement) leaves
 *       it aborted, for the caller to roll back;
 *   <li>a filing holds its domain's lock shared until the caller's transaction ends: other
 *       transactions filing into the domain go on, a replay, scrub or promotion of it waits (issue
 *       26);
 *   <li>an idempotent filing that races a concurrent transaction for its upstream event waits for
 *       that event's own lock and returns the winner's id (under {@code READ COMMITTED},
 *       PostgreSQL's default); one that still meets the unique key catches it inside a savepoint;
 *   <li>a deadlock with another transaction (two filing the same upstream events in opposite
 *       orders) is a {@link LedgerConflictException}: roll back and run the transaction again;
 *   <li>a domain's first filing makes the domain's schema in the caller's transaction (a rollback
 *       removes it too) and holds the domain's advisory lock ({@code
 *       pg_advisory_xact_lock(hashtext('ledger_domain:' || domain))}) until the caller's
 *       transaction ends: other first filings, promotions and scrubs of that domain wait for it.
 *       When the schema cannot be made in one transaction, a {@link SchemaVersionException} says to
 *       provision the domain ahead ({@link Ledger#provision});
 *   <li>a domain schema behind this code is refused with {@link SchemaVersionException} rather than
 *       migrated (migrating would commit the caller's work).
 * </ul>
 *
 * <p>A worker runtime's operations run in the caller's transaction too, through this view's {@link
 * #worker()}: {@code ledger.in(c).worker().completeAll(domain, completions)}.
 *
 * <p>Not thread-safe, as the caller's connection is not.
 */
public final class LedgerTransaction extends LedgerOperations {

  private final Connection connection;
  private final ConnectionProvider provider;

  LedgerTransaction(Ops ops, Connection connection) {
    super(ops);
    this.connection = connection;
    this.provider = null;
  }

  LedgerTransaction(Ops ops, ConnectionProvider provider) {
    super(ops);
    this.connection = null;
    this.provider = provider;
  }

  /**
   * Makes a domain's schema inside the caller's transaction when it has none, as its first filing
   * would: the caller's rollback removes it, and the domain's advisory lock is held until the
   * caller's transaction ends.
   *
   * @param domain the domain
   * @return the schema name, unquoted
   * @throws InvalidInputException naming {@code domain}
   * @throws SchemaVersionException when runtime DDL is off, or the schema cannot be made in one
   *     transaction
   */
  public String provision(String domain) {
    Validation.domain(domain);
    return write("provision", tx -> ops.engine.directory().provisionWithin(tx.directory(), domain));
  }

  @Override
  <T> T write(String operation, Function<Tx, T> body) {
    if (connection != null) {
      return ops.engine.joined(connection, operation, body);
    }
    Connection c;
    try {
      c = provider.acquire();
    } catch (org.jooq.exception.DataAccessException e) {
      throw new LedgerStorageException(operation, e.sqlState(), e);
    }
    if (c == null) {
      throw new InvalidInputException(
          "configuration", "its connection provider gave no connection");
    }
    try {
      return ops.engine.joined(c, operation, body);
    } finally {
      provider.release(c);
    }
  }

  @Override
  <T> T read(String operation, Function<Tx, T> body) {
    return write(operation, body);
  }
}

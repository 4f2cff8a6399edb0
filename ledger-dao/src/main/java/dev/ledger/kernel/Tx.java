package dev.ledger.kernel;

import dev.ledger.schema.RenderMappedDsl;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.jooq.DSLContext;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultConnectionProvider;

/**
 * The transaction context every ledger operation runs in: one JDBC connection inside one
 * transaction, and whether the ledger owns that transaction ({@link #owned()}: it began it and
 * commits or rolls it back) or joins a caller's (it never commits, rolls back or closes it). Hands
 * out jOOQ contexts bound to that one connection and render-mapped to the directory or a domain
 * schema, so every statement of an operation runs in the same transaction whoever owns it.
 *
 * <p>Internal to the ledger (its operations take one; callers use {@code Ledger} and its
 * transaction views). Not thread-safe: one operation on one thread uses it at a time, as a JDBC
 * connection is used.
 *
 * <pre>{@code
 * DSLContext ctx = tx.forSchema("ledger_acme_822b33ad");   // on tx's connection
 * ctx.selectFrom(TASKS).where(TASKS.ID.eq(id)).forUpdate().fetchOne();
 * }</pre>
 */
public final class Tx {

  private final Connection connection;
  private final boolean owned;
  private final RenderMappedDsl dsl;
  private final DefaultConnectionProvider provider;
  private final Map<String, DSLContext> contexts = new HashMap<>();

  /** The bounds still to set in this transaction (folded into its first statement), or null. */
  private Bounds pendingBounds;

  /**
   * Creates the context.
   *
   * @param connection the transaction's connection, not null; autocommit off
   * @param owned true when the ledger began the transaction and ends it
   * @param dsl the ledger's render-mapped contexts, whose settings and listeners are kept
   */
  Tx(Connection connection, boolean owned, RenderMappedDsl dsl) {
    this.connection = connection;
    this.owned = owned;
    this.dsl = dsl;
    this.provider = new DefaultConnectionProvider(connection);
  }

  /**
   * Whether the ledger owns the transaction.
   *
   * @return true when the ledger began it and commits it; false inside a caller's transaction
   */
  public boolean owned() {
    return owned;
  }

  /**
   * The transaction's connection. Never commit, roll back or close it: the owner of the transaction
   * does.
   *
   * @return the connection
   */
  public Connection connection() {
    return connection;
  }

  /**
   * A context on this transaction for the directory's routing tables.
   *
   * @return the context; cached for the life of this transaction context
   */
  public DSLContext directory() {
    return contexts.computeIfAbsent("", s -> on(dsl.directory()));
  }

  /**
   * A context on this transaction for a domain schema's tables (and the directory's).
   *
   * @param schema a domain schema name, unquoted, e.g. {@code ledger_acme_822b33ad}
   * @return the context; cached for the life of this transaction context
   * @throws IllegalArgumentException when {@code schema} is not a domain schema name
   */
  public DSLContext forSchema(String schema) {
    DSLContext ctx = contexts.get(schema);
    if (ctx == null) {
      ctx = on(dsl.forSchema(schema));
      contexts.put(schema, ctx);
    }
    return ctx;
  }

  /**
   * Runs {@code body} inside a savepoint of this transaction: released when the body returns,
   * rolled back to when it throws, so an expected failure of a statement (a unique key a concurrent
   * filing won) leaves the transaction usable and as it was before the body. The transaction's id
   * stays the same.
   *
   * @param body the work
   * @param <T> its result
   * @return the body's result
   * @throws DataAccessException when the savepoint cannot be set, released or rolled back to
   */
  public <T> T savepoint(Supplier<T> body) {
    Savepoint sp;
    try {
      sp = connection.setSavepoint();
    } catch (SQLException e) {
      throw new DataAccessException("SAVEPOINT failed: " + e.getMessage(), e);
    }
    T result;
    try {
      result = body.get();
    } catch (RuntimeException | Error e) {
      try {
        connection.rollback(sp);
      } catch (SQLException r) {
        e.addSuppressed(r);
      }
      throw e;
    }
    try {
      connection.releaseSavepoint(sp);
    } catch (SQLException e) {
      throw new DataAccessException("RELEASE SAVEPOINT failed: " + e.getMessage(), e);
    }
    return result;
  }

  /** Defers the transaction's bounds: the operation sets them in its first statement. */
  void deferBounds(Bounds bounds) {
    this.pendingBounds = bounds;
  }

  /**
   * Whether the transaction's lock and statement bounds are still to be set: the ledger owns the
   * transaction, began it without a statement of its own, and left the bounds to the operation's
   * first statement (issue 26, B13: one round trip fewer per filing). An operation that sees true
   * either folds {@link #takeBounds()} into its first statement or calls {@link #applyBounds()}
   * before it.
   *
   * @return true while no statement has set them
   */
  public boolean boundsPending() {
    return pendingBounds != null;
  }

  /**
   * Takes the deferred bounds, to set in the operation's first statement with {@code
   * set_config(name, value, true)} ahead of anything that may wait on a lock. The statement's own
   * run is bounded by the socket timeout only (PostgreSQL starts a statement's timer before it
   * reads the setting); every later statement by all three.
   *
   * @return {@code lock_timeout} and {@code statement_timeout} as PostgreSQL settings (e.g. {@code
   *     "5000ms"}, {@code "0"}), in that order
   * @throws IllegalStateException when none are pending
   */
  public String[] takeBounds() {
    if (pendingBounds == null) {
      throw new IllegalStateException("no bounds pending in this transaction");
    }
    String[] values = pendingBounds.settings();
    pendingBounds = null;
    return values;
  }

  /**
   * Sets the deferred bounds now, in a statement of their own; does nothing when none are pending.
   *
   * @throws DataAccessException when the statement fails
   */
  public void applyBounds() {
    if (pendingBounds == null) {
      return;
    }
    try {
      pendingBounds.bindTransaction(connection);
    } catch (SQLException e) {
      throw new DataAccessException(
          "setting the transaction's bounds failed: " + e.getMessage(), e);
    }
    pendingBounds = null;
  }

  private DSLContext on(DSLContext template) {
    return DSL.using(template.configuration().derive(provider));
  }
}

package dev.ledger.kernel;

import dev.ledger.LedgerStorageException;
import dev.ledger.schema.RenderMappedDsl;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.jooq.ConnectionProvider;
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
 * <p>A transaction of the ledger's own begun by {@link Engine#writeInOneRoundTrip} (or {@link
 * Engine#writeInOneStatement}) starts later: its connection stays in autocommit mode until the
 * first statement run through one of its contexts (or {@link #connection()}), which begins the
 * transaction and sets its bounds. Until then the operation may instead send statements that commit
 * themselves ({@link #commitItself}).
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
  private final ConnectionProvider provider;
  private final Map<String, DSLContext> contexts = new HashMap<>();

  /** The bounds still to set in this transaction (folded into its first statement), or null. */
  private Bounds pendingBounds;

  /**
   * The bounds of a transaction not begun yet (the connection is in autocommit mode; {@link
   * #begin()} begins it and sets them), or null once begun (and always outside {@link
   * Engine#writeInOneRoundTrip}).
   */
  private Bounds pendingBegin;

  /** The contexts on the autocommit connection for {@link #commitItself}, by schema. */
  private Map<String, DSLContext> selfCommitting;

  /** How many statements committed themselves ({@link #commitItself}) in this operation. */
  private int selfCommits;

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
    // every statement through this context's jOOQ contexts begins a deferred transaction first
    this.provider =
        new ConnectionProvider() {
          @Override
          public Connection acquire() {
            begin();
            return connection;
          }

          @Override
          public void release(Connection c) {
            // the connection is the operation's: the owner of the transaction closes it
          }
        };
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
   * @return the connection, in the transaction (a deferred one is begun first)
   * @throws DataAccessException when a deferred transaction cannot be begun
   */
  public Connection connection() {
    begin();
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
      sp = connection().setSavepoint();
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

  /**
   * Whether the transaction's lock and statement bounds are still to be set: the ledger owns the
   * transaction, began it without a statement of its own ({@link #beginFoldingBounds()}), and left
   * the bounds to the operation's first statement (issue 26, B13: one round trip fewer per filing).
   * An operation that sees true either folds {@link #takeBounds()} into its first statement or
   * calls {@link #applyBounds()} before it.
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

  /**
   * Defers the beginning of this transaction of the ledger's own (its connection in autocommit
   * mode) to its first statement, which then sets {@code bounds} first; until then the operation
   * may commit statements itself ({@link #commitItself}).
   */
  void deferBegin(Bounds bounds) {
    this.pendingBegin = bounds;
  }

  /**
   * Whether a transaction is open on the connection: always, except in a transaction of the
   * ledger's own begun by {@link Engine#writeInOneRoundTrip} before its first statement (or when
   * every statement of it committed itself): then the owner has nothing to commit.
   *
   * @return false while the connection is still in autocommit mode
   */
  boolean transactionOpen() {
    return pendingBegin == null;
  }

  /**
   * How many statements committed themselves in this operation.
   *
   * @return the count of {@link #commitItself} calls that returned
   */
  int selfCommits() {
    return selfCommits;
  }

  /**
   * Whether the operation may send a statement that commits itself ({@link #commitItself}): the
   * ledger owns the transaction, opened it with {@link Engine#writeInOneRoundTrip}, and no
   * statement has run in it yet. False in a caller's transaction, always.
   *
   * @return true while the connection is still in autocommit mode
   */
  public boolean canCommitItself() {
    return pendingBegin != null;
  }

  /**
   * Runs one execute on the connection in autocommit mode, with no transaction of the ledger's
   * around it: {@code statement} must send exactly one JDBC execute (a multi-statement text runs as
   * one implicit transaction of the server's, committed at the protocol's Sync, before the execute
   * returns), beginning with {@code set_config('lock_timeout', bounds[0], true),
   * set_config('statement_timeout', bounds[1], true)} in a statement of its own so that every later
   * statement of the text is bounded; or, for a text of one statement (a filing's: {@link
   * Engine#writeInOneStatement}), in that statement's first select list, ahead of any lock it may
   * wait for (its lock waits then bounded by {@code lock_timeout}, its run by the socket timeout,
   * as for a transaction's first statement that takes the bounds: {@link #takeBounds()}). Locks
   * taken in it are released by the server at that commit, never held across a client round trip.
   * Each call is its own transaction: what one saw or took is committed before the next begins. A
   * statement of the operation's through its contexts after this call is refused (it would run in a
   * transaction of its own whose failure could not undo what committed here).
   *
   * @param schema the domain schema the statement's context is render-mapped to
   * @param statement the execute, given a context on the autocommit connection and the bounds as
   *     {@link #takeBounds()} gives them
   * @param <T> its result
   * @return the statement's result, committed
   * @throws IllegalStateException when {@link #canCommitItself()} is false
   * @throws SelfCommitFailure when the database fails the execute: {@link Engine} reports its
   *     outcome as unknown when the connection was lost (the commit may have happened)
   */
  public <T> T commitItself(String schema, BiFunction<DSLContext, String[], T> statement) {
    if (pendingBegin == null) {
      throw new IllegalStateException("no statement may commit itself in this transaction");
    }
    if (selfCommitting == null) {
      selfCommitting = new HashMap<>();
    }
    DSLContext ctx =
        selfCommitting.computeIfAbsent(
            schema,
            s ->
                DSL.using(
                    dsl.forSchema(s)
                        .configuration()
                        .derive(new DefaultConnectionProvider(connection))));
    T result;
    try {
      result = statement.apply(ctx, pendingBegin.settings());
    } catch (DataAccessException e) {
      throw new SelfCommitFailure(e, selfCommits > 0);
    }
    selfCommits++;
    return result;
  }

  /**
   * Begins a transaction deferred by {@link Engine#writeInOneRoundTrip} (or {@link
   * Engine#writeInOneStatement}) without a statement of its own: its bounds are then pending
   * ({@link #boundsPending()}), for the operation's first statement to set ({@link #takeBounds()})
   * or to set on their own first ({@link #applyBounds()}). An operation that cannot commit itself
   * in one statement (a filing on Citus) so costs no round trip more than it did. Does nothing when
   * no transaction is deferred (it began, or it is a caller's).
   *
   * @throws IllegalStateException when a statement of the operation committed itself
   * @throws DataAccessException when the driver refuses to leave autocommit mode
   */
  public void beginFoldingBounds() {
    Bounds b = pendingBegin;
    if (b == null) {
      return;
    }
    checkNothingCommitted();
    try {
      connection.setAutoCommit(false);
    } catch (SQLException e) {
      throw new DataAccessException("beginning the transaction failed: " + e.getMessage(), e);
    }
    pendingBegin = null;
    pendingBounds = b;
  }

  /**
   * Declares that the last statement that committed itself ({@link #commitItself}) wrote nothing (a
   * filing whose upstream event was filed before: its one statement found the task, or met the
   * unique key, and inserted no row; a controlled claim's fast path that claimed nothing), so that
   * statements may follow, in a transaction or committing themselves: a failure of theirs is then
   * reported as their own, not as one after committed work, and is no unknown outcome. Call it only
   * when the statement's results prove it. Not thread-safe (a transaction is one thread's).
   */
  public void committedNothing() {
    if (selfCommits > 0) {
      selfCommits--;
    }
  }

  private void checkNothingCommitted() {
    if (selfCommits > 0) {
      throw new IllegalStateException(
          "a statement of this operation committed itself: no statement may follow it in a"
              + " transaction");
    }
  }

  /**
   * Begins a deferred transaction: autocommit off, then the bounds, in a statement that opens it.
   */
  private void begin() {
    beginFoldingBounds();
    applyBounds();
  }

  /**
   * A failure of a statement that commits itself ({@link #commitItself}), for {@link Engine} to
   * report: its cause is the database's failure; the statement's transaction was rolled back by the
   * server unless the connection was lost after the execute was sent.
   */
  static final class SelfCommitFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Whether an earlier statement of the operation committed itself before this one failed. */
    private final boolean afterCommitted;

    SelfCommitFailure(DataAccessException cause, boolean afterCommitted) {
      super(cause.getMessage(), cause, false, false);
      this.afterCommitted = afterCommitted;
    }

    boolean afterCommitted() {
      return afterCommitted;
    }
  }

  /**
   * Checks that a caller's connection is in a transaction the ledger can join.
   *
   * @param connection the connection
   * @throws dev.ledger.InvalidInputException naming {@code connection} when it is null, closed or
   *     in autocommit mode
   */
  static void checkJoinable(Connection connection) {
    if (connection == null) {
      throw new dev.ledger.InvalidInputException("connection", "must not be null");
    }
    boolean autoCommit;
    try {
      if (connection.isClosed()) {
        throw new dev.ledger.InvalidInputException("connection", "is closed");
      }
      autoCommit = connection.getAutoCommit();
    } catch (SQLException e) {
      throw new LedgerStorageException("join transaction", e.getSQLState(), e);
    }
    if (autoCommit) {
      throw new dev.ledger.InvalidInputException(
          "connection",
          "is in autocommit mode, so there is no transaction to join: call"
              + " setAutoCommit(false) first, or call the ledger itself for a transaction of its own");
    }
  }

  private DSLContext on(DSLContext template) {
    return DSL.using(template.configuration().derive(provider));
  }
}

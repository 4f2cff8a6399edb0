package dev.ledger.kernel;

import dev.ledger.LedgerConfig;
import dev.ledger.LedgerException;
import dev.ledger.LedgerStorageException;
import dev.ledger.TaskNotFoundException;
import dev.ledger.schema.RenderMappedDsl;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.exception.DataAccessException;

/**
 * What every ledger operation shares: the data source, the render-mapped jOOQ contexts, the cache
 * of rendered statements, the directory (routing and provisioning), the clock; and the running of
 * an operation in a transaction ({@link #write}) or on one connection ({@link #read}), with the
 * translation of database failures into {@link LedgerStorageException}.
 *
 * <p>Internal to the ledger: {@code Ledger} makes one and hands it to its operation classes.
 * Thread-safe.
 */
public final class Engine {

  private final DataSource dataSource;
  private final RenderMappedDsl dsl;
  private final RenderedStatement.Cache statements = new RenderedStatement.Cache();
  private final Directory directory;
  private final Clock clock;
  private final Bounds bounds;
  private final StorageErrors errors;
  private volatile Boolean citus;

  /**
   * Creates the engine.
   *
   * @param dataSource the database, not null
   * @param config the ledger's configuration, not null
   */
  public Engine(DataSource dataSource, LedgerConfig config) {
    this.dataSource = dataSource;
    // what runs outside write() and read() (Flyway, provisioning, the directory's checks) gets
    // connections that wait at most the network bound too
    this.bounds = new Bounds(config.timeouts());
    DataSource bounded = new NetworkBoundDataSource(dataSource, bounds);
    this.dsl = new RenderMappedDsl(bounded, config.directorySchema(), config.executeListeners());
    this.directory =
        new Directory(bounded, dsl, statements, config.runtimeDdl(), config.timeouts().lock());
    this.clock = config.clock();
    this.errors = new StorageErrors(config.timeouts());
  }

  /**
   * Whether the ledger's database is a Citus coordinator ({@link Citus#installed}), looked up once
   * (on a connection of its own, outside any transaction) and kept: the extension is not expected
   * to come or go under an open ledger.
   *
   * @return true in Citus mode
   */
  public boolean citus() {
    Boolean c = citus;
    if (c == null) {
      c = Citus.installed(dsl.directory());
      citus = c;
    }
    return c;
  }

  /**
   * The render-mapped contexts over the data source (each statement on a pooled connection).
   *
   * @return the contexts
   */
  public RenderMappedDsl dsl() {
    return dsl;
  }

  /**
   * The ledger's cache of rendered statements.
   *
   * @return the cache
   */
  public RenderedStatement.Cache statements() {
    return statements;
  }

  /**
   * Routing and provisioning.
   *
   * @return the directory
   */
  public Directory directory() {
    return directory;
  }

  /**
   * The current time, truncated to microseconds (what PostgreSQL and the event log keep).
   *
   * @return now
   */
  public Instant now() {
    return Instant.now(clock).truncatedTo(ChronoUnit.MICROS);
  }

  /**
   * Whether the ledger's clock is the system's ({@link Clock#systemUTC()} or another zone's view of
   * it): then the database server's clock on the same host (or one kept in step by NTP) reads the
   * same time, and a controlled claim reads its time there, after its lock (docs/controls.md).
   *
   * @return true for the system clock, false for any other (a test's settable clock)
   */
  public boolean systemClock() {
    return clock.getClass() == Clock.systemUTC().getClass();
  }

  /**
   * A new task id: time-ordered, unique across processes: {@code t} + 14 hex digits of epoch
   * microseconds + {@code -} + 8 random hex digits.
   *
   * @return e.g. {@code t0006467c2d6a1f0-3fa85f64}
   */
  public String newId() {
    Instant now = Instant.now(clock);
    long micros = ChronoUnit.MICROS.between(Instant.EPOCH, now);
    return String.format(
        "t%014x-%08x", micros, ThreadLocalRandom.current().nextInt() & 0xffffffffL);
  }

  /**
   * The schema of the domain a task belongs to, looked up on the operation's connection.
   *
   * @param tx the operation's transaction context
   * @param id the task id
   * @return the bare schema name
   * @throws dev.ledger.InvalidInputException naming {@code id} when it is null or empty
   * @throws TaskNotFoundException when no task has the id
   */
  public String schemaOfTask(Tx tx, String id) {
    if (id == null || id.isEmpty()) {
      throw new dev.ledger.InvalidInputException("id", "must not be empty");
    }
    return directory
        .schemaOfTask(tx.directory(), id, !tx.owned())
        .orElseThrow(() -> new TaskNotFoundException(id));
  }

  /**
   * The schema of a domain, looked up on the operation's connection.
   *
   * @param tx the operation's transaction context
   * @param domain the domain, validated
   * @return the bare schema name, or empty when the domain has none
   */
  public Optional<String> schemaOf(Tx tx, String domain) {
    return directory.schemaOf(tx.directory(), domain, !tx.owned());
  }

  /**
   * The schema of the domain a task belongs to, looked up on the operation's connection.
   *
   * @param tx the operation's transaction context
   * @param id the task id, not empty
   * @return the bare schema name, or empty when no task has the id
   */
  public Optional<String> findSchemaOfTask(Tx tx, String id) {
    return directory.schemaOfTask(tx.directory(), id, !tx.owned());
  }

  /**
   * The schema a write to a domain goes to, made first when the domain has none. In a transaction
   * the ledger owns, the domain is provisioned in a transaction of its own before the operation's
   * (which {@link #write} then runs again from the start; nothing of the first attempt was
   * committed), so that waiting for another provisioner of the domain holds no pooled connection.
   * In a caller's transaction it is provisioned inside that transaction ({@link
   * Directory#provisionWithin}: the caller's rollback removes the schema too, and the domain's
   * advisory lock is held until the caller's transaction ends).
   *
   * @param tx the operation's transaction context
   * @param domain the domain, validated
   * @return the bare schema name
   * @throws dev.ledger.SchemaVersionException when the domain has no schema and runtime DDL is off,
   *     or (in a caller's transaction) the schema cannot be made in one transaction
   */
  public String schemaForWrite(Tx tx, String domain) {
    if (!tx.owned()) {
      return directory.provisionWithin(tx.directory(), domain);
    }
    Optional<String> schema = directory.schemaOf(tx.directory(), domain, false);
    if (schema.isPresent()) {
      return schema.get();
    }
    throw new ProvisionFirst(domain);
  }

  /**
   * A context on the operation's transaction, render-mapped to a domain's schema: the one lookup
   * ({@link #schemaOf}) and mapping ({@link Tx#forSchema}) every operation on a domain starts with.
   *
   * @param tx the operation's transaction context
   * @param domain the domain, validated
   * @return the context, or empty when the domain has no schema
   */
  public Optional<DSLContext> domain(Tx tx, String domain) {
    return schemaOf(tx, domain).map(tx::forSchema);
  }

  /**
   * A context on the operation's transaction, render-mapped to the schema of a task's domain.
   *
   * @param tx the operation's transaction context
   * @param id the task id
   * @return the context
   * @throws dev.ledger.InvalidInputException naming {@code id} when it is null or empty
   * @throws TaskNotFoundException when no task has the id
   */
  public DSLContext taskDomain(Tx tx, String id) {
    return tx.forSchema(schemaOfTask(tx, id));
  }

  /**
   * A context on the operation's transaction, render-mapped to the schema of a task's domain, when
   * the task exists.
   *
   * @param tx the operation's transaction context
   * @param id the task id, not empty
   * @return the context, or empty when no task has the id
   */
  public Optional<DSLContext> findTaskDomain(Tx tx, String id) {
    return findSchemaOfTask(tx, id).map(tx::forSchema);
  }

  /**
   * A context on the operation's transaction, render-mapped to the schema a write to a domain goes
   * to, made first when the domain has none ({@link #schemaForWrite}).
   *
   * @param tx the operation's transaction context
   * @param domain the domain, validated
   * @return the context
   * @throws dev.ledger.SchemaVersionException as {@link #schemaForWrite}
   */
  public DSLContext domainForWrite(Tx tx, String domain) {
    return tx.forSchema(schemaForWrite(tx, domain));
  }

  /**
   * Runs an operation, turning jOOQ's database failures into {@link LedgerStorageException}.
   *
   * @param operation the operation's name, for messages, e.g. {@code file}
   * @param body the operation
   * @param <T> its result
   * @return the body's result
   * @throws LedgerStorageException when the database fails
   * @throws dev.ledger.TransactionPoolerException when pgjdbc's prepared statements collide through
   *     a transaction-mode pooler (the message says to set {@code prepareThreshold=0})
   * @throws LedgerException when a stored value cannot be read
   */
  public <T> T run(String operation, Supplier<T> body) {
    try {
      return body.get();
    } catch (DataAccessException e) {
      String collision = dev.ledger.TransactionPoolerException.collisionState(e);
      if (collision != null) {
        throw new dev.ledger.TransactionPoolerException(operation, collision, e);
      }
      IllegalArgumentException unreadable = StorageErrors.unreadableValue(e);
      if (unreadable != null) {
        // a converter could not read a stored value: bad data, not a database failure
        throw new dev.ledger.StoredDataException(operation, unreadable.getMessage(), e);
      }
      throw errors.of(operation, e, false);
    } catch (org.flywaydb.core.api.FlywayException e) {
      // provisioning a new domain's schema failed (connection lost, migration refused)
      throw errors.of(operation, e, false);
    } catch (IllegalArgumentException e) {
      // a stored value a converter could not read
      throw new LedgerException(operation + ": " + e.getMessage(), e);
    }
  }

  /**
   * Runs an operation that has no result, as {@link #run(String, Supplier)} does.
   *
   * @param operation the operation's name, for messages, e.g. {@code open}
   * @param body the operation
   * @throws LedgerStorageException when the database fails
   * @throws LedgerException when a stored value cannot be read
   */
  public void run(String operation, Runnable body) {
    run(
        operation,
        () -> {
          body.run();
          return Boolean.TRUE;
        });
  }

  /**
   * Runs {@code body} in a transaction the ledger owns, on one pooled connection: committed when
   * the body returns, rolled back when it throws. When the data source hands out a connection that
   * is already in a transaction (autocommit off on acquisition: Spring's {@code
   * TransactionAwareDataSourceProxy} inside {@code @Transactional}, or any data source that binds a
   * transaction's connection to the thread), the body joins that transaction instead: the ledger
   * never commits, rolls back or closes it (the connection handle is released with {@code close()},
   * which such a data source turns into a release).
   *
   * @param operation the operation's name, for messages
   * @param body the work, given the transaction context
   * @param <T> its result
   * @return the body's result
   * @throws LedgerStorageException when the connection cannot be had, a statement fails or the
   *     commit fails; {@link LedgerStorageException#outcomeUnknown()} when the connection was lost
   *     during the commit
   */
  public <T> T write(String operation, Function<Tx, T> body) {
    return write(operation, body, Mode.BOUND);
  }

  /**
   * Runs {@code body} as {@link #write} does, except that a transaction of the ledger's own is not
   * begun until the body's first statement through the {@link Tx}'s contexts: before that, the body
   * may instead send statements that commit themselves, one round trip each, bounds included
   * ({@link Tx#canCommitItself()}, {@link Tx#commitItself}). A controlled claim so holds its
   * domain's controls row for the server's time only, not across the round trip of a commit (issue
   * 25, B16). The connection is the pool's, in autocommit mode, with the network bound set; it is
   * left as it was. In a caller's transaction (joined) and when execute listeners are configured
   * (they see a lead statement on its own, which would commit alone), the same as {@link #write}:
   * nothing commits itself.
   *
   * @param operation the operation's name, for messages
   * @param body the work; once a statement committed itself it may send more that do, but none in
   *     the transaction
   * @param <T> its result
   * @return the body's result
   * @throws LedgerStorageException as {@link #write}; {@link
   *     LedgerStorageException#outcomeUnknown()} also when the connection was lost during a
   *     statement that commits itself, or when such a statement failed after an earlier one of the
   *     operation committed
   */
  public <T> T writeInOneRoundTrip(String operation, Function<Tx, T> body) {
    boolean observed = dsl.directory().configuration().executeListenerProviders().length > 0;
    return write(operation, body, observed ? Mode.BOUND : Mode.ONE_ROUND_TRIP);
  }

  /**
   * Runs {@code body} as {@link #writeInOneRoundTrip} does, for a body whose statements that commit
   * themselves are each one statement taking the bounds in its own select list ({@link
   * Tx#commitItself}): execute listeners see such a statement whole, so it commits itself with
   * listeners configured too. A filing in a transaction of the ledger's own is so one round trip,
   * its commit included (issue 26, B13). A body that cannot commit itself calls {@link
   * Tx#beginFoldingBounds()} before its first statement to keep the bounds folded into it.
   *
   * @param operation the operation's name, for messages
   * @param body the work
   * @param <T> its result
   * @return the body's result
   * @throws LedgerStorageException as {@link #writeInOneRoundTrip}
   */
  public <T> T writeInOneStatement(String operation, Function<Tx, T> body) {
    return write(operation, body, Mode.ONE_ROUND_TRIP);
  }

  /** How a transaction of the ledger's own opens: its bounds set, or begun on demand. */
  private enum Mode {
    BOUND,
    ONE_ROUND_TRIP
  }

  private <T> T write(String operation, Function<Tx, T> body, Mode mode) {
    return run(
        operation,
        () -> {
          try {
            return once(operation, body, mode);
          } catch (ProvisionFirst p) {
            directory.ensure(p.domain);
          }
          try {
            return once(operation, body, mode);
          } catch (ProvisionFirst p) {
            throw new LedgerException(
                operation + ": domain '" + p.domain + "' has no route although it was provisioned");
          }
        });
  }

  private <T> T once(String operation, Function<Tx, T> body, Mode mode) {
    Connection c = connect(operation);
    try {
      if (!autoCommit(operation, c)) {
        // the data source's connection is in a caller's transaction: join it
        return body.apply(new Tx(c, false, dsl));
      }
      return owned(operation, c, body, mode);
    } finally {
      closeQuietly(c);
    }
  }

  /**
   * Runs {@code body} in a transaction of the ledger's own on {@code c} (in autocommit mode when
   * given), under the {@link dev.ledger.Timeouts}: committed when the body returns, rolled back
   * when it throws; the connection is left in autocommit mode with its socket timeout as it was. In
   * {@link Mode#ONE_ROUND_TRIP} the transaction begins at the body's first statement, if any; a
   * statement that committed itself is reported as a commit is.
   */
  private <T> T owned(String operation, Connection c, Function<Tx, T> body, Mode mode) {
    int network = bindNetwork(operation, c);
    try {
      Tx tx = new Tx(c, true, dsl);
      if (mode == Mode.ONE_ROUND_TRIP) {
        tx.deferBegin(bounds);
      } else {
        setAutoCommit(operation, c, false);
      }
      T result;
      try {
        if (mode == Mode.BOUND) {
          bounds.bindTransaction(c);
        }
        result = body.apply(tx);
      } catch (Tx.SelfCommitFailure f) {
        // an I/O failure after the execute was sent may have come after the server's commit; a
        // failure after an earlier statement committed leaves that one's work in place
        Throwable cause = f.getCause();
        if (f.afterCommitted()) {
          throw new LedgerStorageException(operation, StorageErrors.sqlState(cause), cause, true);
        }
        throw errors.of(operation, cause, true);
      } catch (SQLException e) {
        rollbackQuietly(c, e);
        throw errors.of(operation, e, false);
      } catch (RuntimeException | Error e) {
        if (tx.transactionOpen()) {
          rollbackQuietly(c, e);
        }
        throw e;
      }
      if (tx.transactionOpen()) {
        try {
          c.commit();
        } catch (SQLException e) {
          throw errors.of(operation, e, true);
        }
        setAutoCommit(operation, c, true);
      }
      return result;
    } finally {
      Bounds.restore(c, network);
    }
  }

  private int bindNetwork(String operation, Connection c) {
    try {
      return bounds.bindNetwork(c);
    } catch (SQLException e) {
      throw errors.of(operation, e, false);
    }
  }

  /**
   * Runs {@code body} in a caller's transaction on its connection: never commits, rolls back or
   * closes it. A failure of a statement leaves the caller's transaction aborted (PostgreSQL's
   * rule), for the caller to roll back; a typed refusal ({@link dev.ledger.InvalidInputException},
   * {@link dev.ledger.WrongStateException}, ...) is raised before anything is written and leaves it
   * usable.
   *
   * @param connection the caller's connection, autocommit off
   * @param operation the operation's name, for messages
   * @param body the work, given the transaction context
   * @param <T> its result
   * @return the body's result
   * @throws dev.ledger.InvalidInputException naming {@code connection} when it is null, closed or
   *     in autocommit mode (there is no transaction to join)
   * @throws LedgerStorageException when a statement fails
   */
  public <T> T joined(Connection connection, String operation, Function<Tx, T> body) {
    return run(
        operation,
        () -> {
          Tx.checkJoinable(connection);
          return body.apply(new Tx(connection, false, dsl));
        });
  }

  /**
   * Checks, when the ledger opens (outside any transaction), that the data source hands out
   * connections in autocommit mode: one handed out with autocommit off outside any transaction (a
   * pool configured {@code autoCommit=false}) would make every ledger call join a transaction
   * nobody commits.
   *
   * @throws dev.ledger.InvalidInputException naming {@code dataSource} when it does
   */
  public void checkAutoCommitOnOpen() {
    run(
        "open",
        () -> {
          Connection c = connect("open");
          try {
            if (!autoCommit("open", c)) {
              throw new dev.ledger.InvalidInputException(
                  "dataSource",
                  "hands out connections with autocommit off outside any transaction (e.g."
                      + " HikariCP autoCommit=false): the ledger would join transactions nobody"
                      + " commits. Configure autocommit on (a Spring transaction still turns it"
                      + " off for its own connection), and open the ledger outside a transaction");
            }
          } finally {
            closeQuietly(c);
          }
        });
  }

  /**
   * Runs a read on one pooled connection, in a read-committed transaction of its own so that the
   * {@link dev.ledger.Timeouts} bound it (each statement still its own snapshot); on a connection
   * already in a caller's transaction (see {@link #write}), in that transaction.
   *
   * @param operation the operation's name, for messages
   * @param body the read, given the connection's context
   * @param <T> its result
   * @return the body's result
   * @throws LedgerStorageException when the connection cannot be had
   */
  public <T> T read(String operation, Function<Tx, T> body) {
    return run(
        operation,
        () -> {
          Connection c = connect(operation);
          try {
            if (!autoCommit(operation, c)) {
              return body.apply(new Tx(c, true, dsl));
            }
            return owned(operation, c, body, Mode.BOUND);
          } finally {
            closeQuietly(c);
          }
        });
  }

  private Connection connect(String operation) {
    try {
      return dataSource.getConnection();
    } catch (SQLException e) {
      throw errors.connecting(operation, e);
    }
  }

  private boolean autoCommit(String operation, Connection c) {
    try {
      return c.getAutoCommit();
    } catch (SQLException e) {
      throw errors.of(operation, e, false);
    }
  }

  private void setAutoCommit(String operation, Connection c, boolean on) {
    try {
      c.setAutoCommit(on);
    } catch (SQLException e) {
      throw errors.of(operation, e, false);
    }
  }

  private static void rollbackQuietly(Connection c, Throwable failure) {
    try {
      c.rollback();
      c.setAutoCommit(true);
    } catch (SQLException | RuntimeException e) {
      failure.addSuppressed(e);
    }
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException e) {
      // the pool discards a broken connection; nothing of the operation depends on it
    }
  }
}

package dev.ledger.migrate;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record2;
import org.jooq.SQLDialect;
import org.jooq.conf.Settings;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session-level advisory lock held on a dedicated connection for a whole run, taken with {@code
 * pg_try_advisory_lock} and back-off (as Flyway's {@code PostgreSQLAdvisoryLockTemplate} does), not
 * with a blocking {@code pg_advisory_lock}: a session waiting inside a blocking lock call holds a
 * snapshot, and a {@code CREATE INDEX CONCURRENTLY} the lock holder runs would wait for that
 * snapshot while the waiter waits for the lock, a deadlock. The connection stays in autocommit and
 * idle between calls for the same reason. Closing releases the lock and the connection; a process
 * that dies releases it with its connection. A connection through a transaction-mode pooler
 * (PgBouncer {@code pool_mode=transaction}) is refused before anything is locked: there the lock
 * would stay on a pooled server connection after the run ({@link Poolers}); a session-mode pool is
 * fine.
 *
 * <pre>{@code
 * try (SessionLock lock = SessionLock.acquire(dataSource::getConnection, key,
 *     Duration.ofMinutes(2), "the directory schema public")) {
 *   ... migrate ...
 * }
 * }</pre>
 */
public final class SessionLock implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(SessionLock.class);
  private static final Duration FIRST_WAIT = Duration.ofMillis(20);
  private static final Duration LONGEST_WAIT = Duration.ofSeconds(1);

  private final Connection connection;
  private final long key;

  private SessionLock(Connection connection, long key) {
    this.connection = connection;
    this.key = key;
  }

  /**
   * Opens a dedicated connection and takes the lock on it, retrying with back-off (20 ms doubling
   * to 1 s, with jitter) until the timeout.
   *
   * @param source where the dedicated connection comes from
   * @param key the lock key
   * @param timeout how long to keep trying, positive
   * @param subject what is locked, for messages (e.g. {@code tenant acme}), free of credentials
   * @return the held lock
   * @throws SQLException when the connection cannot be opened or used
   * @throws MigrationException ({@link MigrationException.Reason#LOCK_TIMEOUT}) when the lock
   *     stayed taken for the whole timeout; ({@link MigrationException.Reason#TRANSACTION_POOLER})
   *     when the source's connections go through a pooler in transaction or statement mode, where
   *     the lock would outlive the run ({@link Poolers}): then nothing is locked
   * @throws InterruptedException when the thread is interrupted while waiting
   */
  public static SessionLock acquire(
      ConnectionSource source, long key, Duration timeout, String subject)
      throws SQLException, InterruptedException {
    Connection connection = source.open();
    try {
      connection.setAutoCommit(true);
      DSLContext ctx = context(connection);
      long deadline = System.nanoTime() + timeout.toNanos();
      long waitMs = FIRST_WAIT.toMillis();
      int attempts = 0;
      int announced = Poolers.announcedPid(connection);
      Field<Boolean> tryLock = DSL.function("pg_try_advisory_lock", Boolean.class, DSL.val(key));
      // the first attempt locks only when this is the server process the connection started
      // with, i.e. no pooler sits between: through one the lock could land on a shared server
      Record2<Integer, Boolean> first =
          ctx.select(
                  Poolers.backendPid(),
                  DSL.when(Poolers.backendPid().eq(DSL.val(announced)), tryLock))
              .fetchOne();
      if (first == null || first.value1() == null || first.value1() != announced) {
        Poolers.refuseTransactionPooling(
            connection,
            first == null || first.value1() == null ? -1 : first.value1(),
            source,
            subject);
        LOG.debug("{} is reached through a session-mode pooler", subject);
      }
      Boolean taken = first == null ? null : first.value2();
      while (true) {
        attempts++;
        if (attempts > 1 || taken == null) {
          taken = ctx.select(tryLock).fetchOne(0, Boolean.class);
        }
        if (Boolean.TRUE.equals(taken)) {
          if (attempts > 1) {
            LOG.debug("took the lock of {} after {} attempts", subject, attempts);
          }
          return new SessionLock(connection, key);
        }
        if (System.nanoTime() >= deadline) {
          throw new MigrationException(
              MigrationException.Reason.LOCK_TIMEOUT,
              "another migration run has held the lock of "
                  + subject
                  + " for longer than "
                  + timeout
                  + "; wait for it to finish and run again",
              null);
        }
        long jitter = ThreadLocalRandom.current().nextLong(waitMs / 4 + 1);
        Thread.sleep(waitMs + jitter);
        waitMs = Math.min(waitMs * 2, LONGEST_WAIT.toMillis());
      }
    } catch (SQLException | RuntimeException e) {
      connection.close();
      if (Poolers.preparedStatementCollision(e)) {
        // another client's prepared statements on this server connection: a sharing pooler
        throw Poolers.refusal(subject);
      }
      throw e;
    } catch (InterruptedException e) {
      connection.close();
      throw e;
    }
  }

  private static DSLContext context(Connection connection) {
    return DSL.using(connection, SQLDialect.POSTGRES, new Settings().withExecuteLogging(false));
  }

  /**
   * Releases the lock and closes its connection (which releases it too, should the unlock fail).
   */
  @Override
  public void close() throws SQLException {
    try (connection) {
      context(connection)
          .select(DSL.function("pg_advisory_unlock", Boolean.class, DSL.val(key)))
          .fetchOne();
    }
  }
}

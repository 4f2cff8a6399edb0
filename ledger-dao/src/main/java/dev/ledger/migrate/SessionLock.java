package dev.ledger.migrate;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.jooq.DSLContext;
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
 * that dies releases it with its connection.
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
   *     stayed taken for the whole timeout
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
      while (true) {
        attempts++;
        Boolean taken =
            ctx.select(DSL.function("pg_try_advisory_lock", Boolean.class, DSL.val(key)))
                .fetchOne(0, Boolean.class);
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
    } catch (SQLException | RuntimeException | InterruptedException e) {
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

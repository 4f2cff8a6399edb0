package dev.ledger.migrate;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import org.jooq.exception.DataAccessException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Locking of a migration job's run: a migrate or plan holds the job's {@link SessionLock} for the
 * whole run; a status takes no lock but refuses a transaction-mode pooler as the lock would ({@link
 * Poolers}). Closing releases the lock; a release that fails is logged, not thrown (the lock goes
 * with its connection).
 */
final class JobLock implements AutoCloseable {

  /** The job's logger: the lock's lines keep the category they always had. */
  private static final Logger LOG = LoggerFactory.getLogger(MigrationJob.class);

  private final SessionLock lock;
  private final String subject;

  private JobLock(SessionLock lock, String subject) {
    this.lock = lock;
    this.subject = subject;
  }

  /**
   * Takes what an operation needs: the session lock for migrate and plan; for status, only the
   * pooler check.
   *
   * @param operation what the run does
   * @param connections where the lock's dedicated connection comes from
   * @param key the lock key
   * @param timeout how long to keep trying to take the lock
   * @param subject what the lock protects, for messages
   * @return the held lock (for status, one that holds nothing)
   * @throws SQLException when the connection cannot be opened or used
   * @throws InterruptedException when the thread is interrupted while waiting for the lock
   */
  static JobLock take(
      Operation operation, ConnectionSource connections, long key, Duration timeout, String subject)
      throws SQLException, InterruptedException {
    if (operation != Operation.STATUS) {
      return new JobLock(SessionLock.acquire(connections, key, timeout, subject), subject);
    }
    refuseTransactionPooling(connections, subject);
    return new JobLock(null, subject);
  }

  /**
   * What {@link SessionLock#acquire} checks before it locks, for {@link MigrationJob#status()},
   * which takes no lock: a connection through a transaction-mode pooler is refused there too (its
   * Flyway reads would fail on pgjdbc's prepared statements with the pooler's other clients).
   */
  private static void refuseTransactionPooling(ConnectionSource connections, String subject)
      throws SQLException {
    try (Connection c = connections.open()) {
      c.setAutoCommit(true);
      int pid = Poolers.backendPid(c);
      if (pid != Poolers.announcedPid(c)) {
        Poolers.refuseTransactionPooling(c, pid, connections, subject);
      }
    } catch (SQLException | DataAccessException e) {
      if (Poolers.preparedStatementCollision(e)) {
        throw Poolers.refusal(subject);
      }
      throw e;
    }
  }

  /** Releases the lock, if one is held; a failure is logged (the lock goes with its connection). */
  @Override
  public void close() {
    if (lock == null) {
      return;
    }
    try {
      lock.close();
    } catch (SQLException | DataAccessException e) {
      LOG.warn("could not release the lock of {} (closed with its connection)", subject);
    }
  }
}

package dev.ledger.migrate;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Opens a dedicated database connection: a new physical connection, never one borrowed from a pool,
 * because it holds a session-level advisory lock for a whole run and must close (releasing the
 * lock) with it.
 */
@FunctionalInterface
public interface ConnectionSource {

  /**
   * Opens a connection.
   *
   * @return an open connection; the caller closes it
   * @throws SQLException when the database cannot be reached
   */
  Connection open() throws SQLException;
}

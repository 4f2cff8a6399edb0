package dev.ledger.replay;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * What {@link CopyReader} and {@link CopyWriter} do with a connection whose {@code COPY} could not
 * be ended: abort it. pgjdbc gives a {@code COPY} its connection's lock until the copy ends; when
 * the connection dies mid-copy (a killed backend, a blackholed link) the copy never ends, and every
 * later call on the connection (the rollback of the ledger's transaction first) waits for that lock
 * forever. Aborting closes the socket at once, so the rollback fails fast, and the pool, handed a
 * closed connection back, discards it.
 */
final class CopyConnections {

  private CopyConnections() {}

  /**
   * Aborts {@code c} when its {@code COPY} is still active after a failure.
   *
   * @param c the copy's connection
   * @param stillActive whether the copy still holds the connection
   * @param failure the failure being thrown, which keeps whatever aborting throws as suppressed
   */
  static void abortIfStuck(Connection c, boolean stillActive, Throwable failure) {
    if (!stillActive) {
      return;
    }
    try {
      c.abort(Runnable::run);
    } catch (SQLException | RuntimeException e) {
      failure.addSuppressed(e);
    }
  }
}

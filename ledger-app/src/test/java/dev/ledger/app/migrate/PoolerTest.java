package dev.ledger.app.migrate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.app.Cli;
import dev.ledger.app.ExitCodes;
import dev.ledger.testing.PgBouncer;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * The migration commands through a real PgBouncer (issue #13, item 10): in transaction mode they
 * refuse at once with one line (exit 2), before anything is locked, so no advisory lock is left on
 * a pooled server connection and a later direct run is not blocked; in session mode they work and
 * leave no lock behind while PgBouncer keeps its server connections open.
 */
class PoolerTest {

  private static final String REFUSAL =
      " is reached through a connection pooler in transaction or statement mode (e.g. PgBouncer"
          + " pool_mode=transaction), where the migration's session-level advisory lock would stay"
          + " behind on a pooled server connection; nothing was locked or changed. Use a direct URL"
          + " to PostgreSQL or one to a session-mode pool";

  @Test
  void
      through_a_transaction_mode_pooler_migrate_plan_and_status_refuse_in_one_line_and_lock_nothing()
          throws Exception {
    String db = PostgresExtension.newDatabase();
    try (PgBouncer bouncer = PgBouncer.start("transaction", 2)) {
      String pooled = bouncer.urlFor(db);
      for (String command : new String[] {"migrate", "plan", "status"}) {
        Cli.Result r = Cli.run(command, "--url", pooled, "--lock-timeout", "2s");
        assertThat(r.exit()).as(r.all()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.out()).isEmpty();
        assertThat(r.err())
            .isEqualTo(
                "ledger-app "
                    + command
                    + ": the database of directory public of 127.0.0.1:"
                    + pooled.replaceAll("^jdbc:postgresql://127\\.0\\.0\\.1:(\\d+)/.*$", "$1")
                    + "/"
                    + db
                    + REFUSAL
                    + "\n");
        // PgBouncer still holds its server connections: none of them holds a lock
        assertThat(advisoryLocks(db)).as(command).isZero();
      }
      assertThat(directoryTables(db)).as("nothing was changed").isZero();
      Cli.Result direct = Cli.run("migrate", "--url", TestServer.get().urlFor(db));
      assertThat(direct.exit()).as(direct.all()).isEqualTo(ExitCodes.OK);
    } finally {
      PostgresExtension.dropDatabase(db);
    }
  }

  @Test
  void through_a_session_mode_pooler_migrate_works_twice_and_leaves_no_lock() throws Exception {
    String db = PostgresExtension.newDatabase();
    try (PgBouncer bouncer = PgBouncer.start("session", 4)) {
      String pooled = bouncer.urlFor(db);
      Cli.Result first = Cli.run("migrate", "--url", pooled);
      assertThat(first.exit()).as(first.all()).isEqualTo(ExitCodes.OK);
      assertThat(advisoryLocks(db)).isZero();
      Cli.Result again = Cli.run("migrate", "--url", pooled);
      assertThat(again.exit()).as(again.all()).isEqualTo(ExitCodes.OK);
      assertThat(again.err()).isEmpty();
      assertThat(again.out()).contains("0 failed");
      assertThat(advisoryLocks(db)).isZero();
      Cli.Result direct = Cli.run("migrate", "--url", TestServer.get().urlFor(db));
      assertThat(direct.exit()).as(direct.all()).isEqualTo(ExitCodes.OK);
    } finally {
      PostgresExtension.dropDatabase(db);
    }
  }

  private static long advisoryLocks(String db) throws SQLException {
    return count(
        db,
        "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database"
            + " WHERE l.locktype = 'advisory' AND d.datname = current_database()");
  }

  private static long directoryTables(String db) throws SQLException {
    return count(db, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'");
  }

  private static long count(String db, String sql) throws SQLException {
    try (Connection c = PostgresExtension.connect(db);
        PreparedStatement s = c.prepareStatement(sql);
        ResultSet rs = s.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }
}

package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The connections schema-diff reuses: a closed connection's backend serves the next caller, in a
 * new session's state (settings, temporary tables, an open transaction are gone), and two callers
 * at once get two backends.
 */
class ReusedConnectionsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static ReusedConnections connections() {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(PG.jdbcUrl());
    return new ReusedConnections(ds);
  }

  private static String one(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet r = s.executeQuery(sql)) {
      assertThat(r.next()).isTrue();
      return r.getString(1);
    }
  }

  @Test
  void a_given_back_backend_serves_the_next_caller_in_a_new_sessions_state() throws Exception {
    try (ReusedConnections ds = connections()) {
      String pid;
      String defaultPath;
      try (Connection c = ds.getConnection()) {
        pid = one(c, "SELECT pg_backend_pid()");
        defaultPath = one(c, "SHOW search_path");
        try (Statement s = c.createStatement()) {
          s.execute("SET search_path = nowhere");
          s.execute("SET check_function_bodies = false");
          s.execute("CREATE TEMPORARY TABLE scratch (id int)");
        }
        c.setAutoCommit(false);
        try (Statement s = c.createStatement()) {
          s.execute("CREATE TABLE public.never_committed (id int)");
        }
      }
      try (Connection c = ds.getConnection()) {
        assertThat(one(c, "SELECT pg_backend_pid()")).isEqualTo(pid);
        assertThat(c.getAutoCommit()).isTrue();
        assertThat(one(c, "SHOW search_path")).isEqualTo(defaultPath);
        assertThat(one(c, "SHOW check_function_bodies")).isEqualTo("on");
        assertThat(one(c, "SELECT to_regclass('pg_temp.scratch') IS NULL")).isEqualTo("t");
        assertThat(one(c, "SELECT to_regclass('public.never_committed') IS NULL")).isEqualTo("t");
      }
    }
  }

  @Test
  void callers_at_once_get_backends_of_their_own_and_a_closed_handle_is_dead() throws Exception {
    try (ReusedConnections ds = connections()) {
      Connection first = ds.getConnection();
      Connection second = ds.getConnection();
      assertThat(one(first, "SELECT pg_backend_pid()"))
          .isNotEqualTo(one(second, "SELECT pg_backend_pid()"));
      second.close();
      first.close();
      assertThat(first.isClosed()).isTrue();
      assertThatThrownBy(first::createStatement)
          .isInstanceOf(SQLException.class)
          .hasMessage("connection closed");
    }
  }
}

package dev.ledger.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * {@code EXPLAIN (ANALYZE, BUFFERS)} of a statement with its bind values, run in a transaction that
 * is rolled back, so a claim explained claims nothing.
 */
final class Explain {

  private Explain() {}

  /**
   * Explains a statement.
   *
   * @param dataSource the database
   * @param sql the statement, with {@code ?} placeholders
   * @param binds the values, in order
   * @return the plan as PostgreSQL prints it, one line per row
   * @throws SQLException when the server refuses
   */
  static String analyze(DataSource dataSource, String sql, Object... binds) throws SQLException {
    StringBuilder out = new StringBuilder();
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement p = c.prepareStatement("EXPLAIN (ANALYZE, BUFFERS) " + sql)) {
        for (int i = 0; i < binds.length; i++) {
          p.setObject(i + 1, binds[i]);
        }
        try (ResultSet rs = p.executeQuery()) {
          while (rs.next()) {
            out.append(rs.getString(1)).append('\n');
          }
        }
      } finally {
        c.rollback();
        c.setAutoCommit(true);
      }
    }
    return out.toString();
  }
}

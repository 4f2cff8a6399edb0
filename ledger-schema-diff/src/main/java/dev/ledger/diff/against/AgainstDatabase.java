package dev.ledger.diff.against;

import dev.ledger.diff.SchemaDiff;
import dev.ledger.diff.SchemaDiffException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Runs a diff's data checks on a real database, read-only ({@code --against JDBC}: a staging copy
 * or a replica): how many rows each new {@code NOT NULL}, unique key, {@code CHECK} or foreign key
 * would reject, how many rows a dropped column or table holds, and the size and row estimate of
 * each table a change locks.
 *
 * <pre>{@code
 * SchemaDiff.Compared compared = SchemaDiff.compare(request);
 * AgainstReport against =
 *     AgainstDatabase.check(compared, "jdbc:postgresql://replica/app?user=ci", Duration.ofSeconds(30), 1000);
 * System.out.print(against.markdown(compared.report().markdown()));
 * }</pre>
 *
 * <p>Every query runs in a transaction of its own, opened {@code READ ONLY} ({@code SET TRANSACTION
 * READ ONLY}, on a connection set read-only too) with a {@code statement_timeout}, and is rolled
 * back: nothing is written, even by a function a new check calls. Unqualified tables are found
 * through the connection's search path (set it with the URL's {@code currentSchema}). A database
 * that cannot be reached, a query that times out or fails: the checks concerned are {@link
 * DataCheck.Status#NOT_RUN not run}, with the reason, and the rest still run; nothing here throws
 * for them. No message holds the URL's password.
 *
 * <p>Thread-safe: each call opens and closes a connection of its own.
 */
public final class AgainstDatabase {

  private AgainstDatabase() {}

  /** The default bound of each query ({@code --against-timeout}). */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

  /** How many rows a count goes up to before it stops. */
  public static final long DEFAULT_LIMIT = 1000;

  /**
   * Checks a URL before the diff runs, so that a mistyped one is a usage error.
   *
   * @param jdbcUrl the URL given to {@code --against}
   * @throws SchemaDiffException naming {@code --against} when it is not a PostgreSQL JDBC URL
   */
  public static void validate(String jdbcUrl) {
    if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:postgresql:")) {
      throw new SchemaDiffException(
          "--against: expected jdbc:postgresql://host[:port]/database[?user=...&password=...]");
    }
  }

  /**
   * Runs the checks of a diff.
   *
   * @param compared the diff and its catalogs ({@link SchemaDiff#compare})
   * @param jdbcUrl the database to check against, a PostgreSQL JDBC URL ({@link #validate})
   * @param timeout each query's {@code statement_timeout}, at least 1 ms
   * @param limit how many rows a count goes up to, at least 1
   * @return what the checks found; when the database cannot be reached, every check not run
   */
  public static AgainstReport check(
      SchemaDiff.Compared compared, String jdbcUrl, Duration timeout, long limit) {
    validate(jdbcUrl);
    if (timeout.toMillis() < 1 || limit < 1) {
      throw new IllegalArgumentException("timeout and limit must be positive");
    }
    CheckPlan plan = CheckPlan.of(compared, limit);
    String where = AgainstReport.displayName(jdbcUrl);
    PGSimpleDataSource ds = new PGSimpleDataSource();
    try {
      ds.setURL(jdbcUrl);
    } catch (RuntimeException e) {
      throw new SchemaDiffException("--against: not a valid PostgreSQL JDBC URL");
    }
    int seconds = (int) Math.max(1, Math.min(30, timeout.toSeconds()));
    ds.setConnectTimeout(seconds);
    ds.setLoginTimeout(seconds);
    // A query the server does not end (statement_timeout) still ends here.
    ds.setSocketTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toSeconds() + 30));
    ds.setApplicationName("ledger-schema-diff --against");
    ds.setReadOnly(true);
    List<DataCheck> checks = new ArrayList<>();
    List<TableSize> sizes = new ArrayList<>();
    String unreachable = null;
    try (Connection c = ds.getConnection()) {
      c.setReadOnly(true);
      c.setAutoCommit(false);
      for (CheckPlan.Count count : plan.counts()) {
        checks.add(run(c, count, timeout, limit, jdbcUrl));
      }
      for (TableSize size : plan.sizes()) {
        sizes.add(size(c, size, timeout, jdbcUrl));
      }
    } catch (SQLException e) {
      unreachable = SchemaDiff.errorLine("unreachable: " + e.getMessage(), jdbcUrl);
    }
    if (unreachable != null) {
      checks.clear();
      sizes.clear();
      for (CheckPlan.Count count : plan.counts()) {
        checks.add(
            new DataCheck(
                count.kind(),
                count.table(),
                count.object(),
                count.sql() == null ? DataCheck.Status.NOT_COUNTED : DataCheck.Status.NOT_RUN,
                0,
                false,
                count.sql() == null ? count.note() : unreachable));
      }
      for (TableSize size : plan.sizes()) {
        sizes.add(
            new TableSize(
                size.table(), size.verb(), size.lock(), size.change(), null, null, unreachable));
      }
    }
    return new AgainstReport(where, timeout, limit, unreachable, checks, sizes);
  }

  private static DataCheck run(
      Connection c, CheckPlan.Count count, Duration timeout, long limit, String jdbcUrl)
      throws SQLException {
    if (count.sql() == null) {
      return new DataCheck(
          count.kind(),
          count.table(),
          count.object(),
          DataCheck.Status.NOT_COUNTED,
          0,
          false,
          count.note());
    }
    try {
      long rows;
      if (!exists(c, count.table(), timeout)) {
        return new DataCheck(
            count.kind(),
            count.table(),
            count.object(),
            DataCheck.Status.NOT_RUN,
            0,
            false,
            "the database has no table `" + count.table() + "`");
      }
      begin(c, timeout);
      try (Statement s = c.createStatement();
          ResultSet r = s.executeQuery(count.sql())) {
        r.next();
        rows = r.getLong(1);
      } finally {
        c.rollback();
      }
      return new DataCheck(
          count.kind(),
          count.table(),
          count.object(),
          rows == 0 ? DataCheck.Status.CLEAN : DataCheck.Status.ROWS,
          rows,
          rows > limit,
          null);
    } catch (SQLException e) {
      rollbackQuietly(c);
      if (lost(c)) {
        throw e;
      }
      return new DataCheck(
          count.kind(),
          count.table(),
          count.object(),
          DataCheck.Status.NOT_RUN,
          0,
          false,
          failure(e, timeout, jdbcUrl));
    }
  }

  private static TableSize size(Connection c, TableSize size, Duration timeout, String jdbcUrl)
      throws SQLException {
    try {
      begin(c, timeout);
      try (PreparedStatement s =
          c.prepareStatement(
              """
              SELECT to_regclass(?) IS NOT NULL,
                     pg_size_pretty(sum(pg_total_relation_size(p.relid))),
                     sum(greatest(r.reltuples, 0)) FILTER (WHERE r.relkind = 'r')::bigint,
                     coalesce(bool_or(r.reltuples < 0) FILTER (WHERE r.relkind = 'r'), false)
              FROM (SELECT relid FROM pg_partition_tree(to_regclass(?))
                    UNION SELECT to_regclass(?)) AS p
              JOIN pg_class AS r ON r.oid = p.relid
              """)) {
        s.setString(1, sqlNameOf(size.table()));
        s.setString(2, sqlNameOf(size.table()));
        s.setString(3, sqlNameOf(size.table()));
        try (ResultSet r = s.executeQuery()) {
          r.next();
          if (!r.getBoolean(1)) {
            return withNote(size, "the database has no table `" + size.table() + "`");
          }
          long rows = r.getLong(3);
          boolean unknown = r.getBoolean(4);
          return new TableSize(
              size.table(),
              size.verb(),
              size.lock(),
              size.change(),
              r.getString(2),
              unknown ? null : rows,
              null);
        }
      } finally {
        c.rollback();
      }
    } catch (SQLException e) {
      rollbackQuietly(c);
      if (lost(c)) {
        throw e;
      }
      return withNote(size, failure(e, timeout, jdbcUrl));
    }
  }

  private static boolean exists(Connection c, String table, Duration timeout) throws SQLException {
    begin(c, timeout);
    try (PreparedStatement s = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
      s.setString(1, sqlNameOf(table));
      try (ResultSet r = s.executeQuery()) {
        r.next();
        return r.getBoolean(1);
      }
    } finally {
      c.rollback();
    }
  }

  /** Opens a read-only transaction bounded by the statement timeout. */
  private static void begin(Connection c, Duration timeout) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("SET TRANSACTION READ ONLY");
    }
    try (PreparedStatement s =
        c.prepareStatement("SELECT set_config('statement_timeout', ?, true)")) {
      s.setString(1, timeout.toMillis() + "ms");
      s.execute();
    }
  }

  private static String failure(SQLException e, Duration timeout, String jdbcUrl) {
    if ("57014".equals(e.getSQLState())) {
      return "timed out (statement_timeout " + AgainstReport.duration(timeout) + ")";
    }
    return SchemaDiff.errorLine(
        e.getMessage() + (e.getSQLState() == null ? "" : " (SQL state " + e.getSQLState() + ")"),
        jdbcUrl);
  }

  /** The normalised name as {@code to_regclass} reads it: the table's name, schema-qualified. */
  private static String sqlNameOf(String table) {
    int dot = table.indexOf('.');
    return dot < 0
        ? quote(table)
        : quote(table.substring(0, dot)) + "." + quote(table.substring(dot + 1));
  }

  private static String quote(String name) {
    return '"' + name.replace("\"", "\"\"") + '"';
  }

  private static TableSize withNote(TableSize size, String note) {
    return new TableSize(size.table(), size.verb(), size.lock(), size.change(), null, null, note);
  }

  private static void rollbackQuietly(Connection c) {
    try {
      c.rollback();
    } catch (SQLException ignored) {
      // the connection is gone; lost() says so
    }
  }

  private static boolean lost(Connection c) {
    try {
      return c.isClosed() || !c.isValid(5);
    } catch (SQLException e) {
      return true;
    }
  }
}

package dev.ledger.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * What every benchmark gets: the options, the server, the results table, where to write files, and
 * helpers to alternate ours and the baseline.
 *
 * @param quick scaled-down workloads ({@code --quick})
 * @param server the server
 * @param results the table
 * @param out the directory for plots and EXPLAIN output
 */
record Context(boolean quick, Server server, Results results, Path out) {

  /** One measurement of one side, returning its number (a rate or a time). */
  @FunctionalInterface
  interface Measurement {
    /**
     * Runs once.
     *
     * @return the measured number
     * @throws Exception any failure
     */
    double run() throws Exception;
  }

  /**
   * Ours and the baseline, measured alternately: round r runs ours first when r is even and the
   * baseline first when it is odd, so neither always goes first on a warmer cache.
   *
   * @param rounds rounds, at least one
   * @param ours our measurement
   * @param baseline the baseline's
   * @return the median of ours and of the baseline
   * @throws Exception any failure
   */
  static double[] alternate(int rounds, Measurement ours, Measurement baseline) throws Exception {
    List<Double> a = new ArrayList<>();
    List<Double> b = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      if (r % 2 == 0) {
        a.add(ours.run());
        b.add(baseline.run());
      } else {
        b.add(baseline.run());
        a.add(ours.run());
      }
    }
    return new double[] {Stats.median(a), Stats.median(b)};
  }

  /**
   * Picks the quick or the full size.
   *
   * @param quickValue the {@code --quick} size
   * @param fullValue the full size
   * @return one of them
   */
  int size(int quickValue, int fullValue) {
    return quick ? quickValue : fullValue;
  }

  /**
   * Opens our ledger with the default configuration (no listeners: nothing extra on the measured
   * path).
   *
   * @param dataSource the database
   * @return the ledger
   */
  static Ledger ledger(DataSource dataSource) {
    return Ledger.open(dataSource, LedgerConfig.defaults());
  }

  /**
   * Captures our statements on a ledger with a capture listener, on the given pool.
   *
   * @param pool the database
   * @return our statements
   */
  static OursSql captureSql(HikariDataSource pool) {
    SqlCapture capture = new SqlCapture();
    Ledger capturing = Ledger.open(pool, LedgerConfig.builder().executeListener(capture).build());
    return OursSql.capture(capturing, capture);
  }

  /**
   * One number from a query.
   *
   * @param dataSource the database
   * @param sql a query returning one row, one numeric column
   * @return the value
   * @throws SQLException when the server refuses
   */
  static long count(DataSource dataSource, String sql) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /**
   * Runs statements.
   *
   * @param dataSource the database
   * @param sql the statements, each run in order in autocommit
   * @throws SQLException when the server refuses
   */
  static void execute(DataSource dataSource, String... sql) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      for (String q : sql) {
        s.execute(q);
      }
    }
  }

  /**
   * Fails the run unless a condition holds.
   *
   * @param ok the condition
   * @param message what was checked and found
   */
  static void check(boolean ok, String message) {
    if (!ok) {
      throw new BenchFailure(message);
    }
  }

  /**
   * The no-double-claim check on one domain schema: every task was claimed at most once, every
   * claim was completed (when {@code completed} is true), and the counts match what the workers
   * counted.
   *
   * @param dataSource the database
   * @param schema the domain schema, bare
   * @param who which side, for the message
   * @param claims claims the workers counted
   * @param completed whether every claim was also completed
   * @throws SQLException when the server refuses
   */
  static void checkClaims(
      DataSource dataSource, String schema, String who, long claims, boolean completed)
      throws SQLException {
    String events = "\"" + schema + "\".events";
    long doubles =
        count(
            dataSource,
            "SELECT count(*) FROM (SELECT task_id FROM "
                + events
                + " WHERE kind = 'claimed' GROUP BY task_id HAVING count(*) > 1) d");
    long claimed = count(dataSource, "SELECT count(*) FROM " + events + " WHERE kind = 'claimed'");
    check(doubles == 0, who + ": " + doubles + " tasks were claimed more than once");
    check(
        claimed == claims,
        who + ": " + claimed + " claimed events, but the workers counted " + claims + " claims");
    if (completed) {
      long done = count(dataSource, "SELECT count(*) FROM " + events + " WHERE kind = 'completed'");
      check(done == claims, who + ": " + done + " completions for " + claims + " claims");
    }
  }
}

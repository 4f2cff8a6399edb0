package dev.ledger.diff;

import dev.ledger.diff.PartitionRebuild.Placement;
import dev.ledger.diff.PartitionRebuild.RowCheck;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.UnaryOperator;

/**
 * Runs the {@link RowCheck}s of a script on the scratch schema it is checked on: writes the sample
 * rows into the base's tables before the script, reads them back (the compared columns) and, after
 * the script, reads them again from the new table and counts, for each placement, the rows that
 * match its condition in the whole table and in the partition. Not thread-safe; one per check.
 */
final class RowCheckRun {

  /**
   * What one row check found.
   *
   * @param table the rebuilt table's normalised name
   * @param status the outcome
   * @param rows how many sample rows were written
   * @param detail for {@link Status#CHECKED}, the partitions the rows were found in; for {@link
   *     Status#NOT_RUN}, why there were no rows; for {@link Status#UNWRITABLE}, PostgreSQL's error;
   *     for {@link Status#LOST}, what differed
   */
  record Outcome(String table, Status status, int rows, String detail) {

    /**
     * One phrase for the verdict.
     *
     * @return e.g. {@code the copy of `k` checked with 4 rows: each kept, in its partition}
     */
    String sentence() {
      return switch (status) {
        case CHECKED ->
            "the copy of `"
                + table
                + "` checked with "
                + rows
                + (rows == 1 ? " row" : " rows")
                + ": each kept"
                + (detail.isEmpty() ? "" : ", in its partition (" + detail + ")");
        case NOT_RUN -> "the copy of `" + table + "` not checked with rows: " + detail;
        case UNWRITABLE ->
            "the copy of `"
                + table
                + "` (sample rows could not be written before it: "
                + detail
                + ")";
        case LOST -> "the rows of `" + table + "` (" + detail + ")";
      };
    }
  }

  /** The outcomes of a row check. */
  enum Status {
    /** Every sample row was found after the script, each in its partition. */
    CHECKED,
    /** No sample row could be made; the copy was checked on an empty table only. */
    NOT_RUN,
    /** The sample rows could not be written into the base's table. */
    UNWRITABLE,
    /** A sample row was missing, changed or in the wrong partition after the script. */
    LOST
  }

  private final List<RowCheck> checks;
  private final UnaryOperator<String> redact;
  private final Map<String, List<String>> before = new HashMap<>();
  private final List<Outcome> outcomes = new ArrayList<>();

  RowCheckRun(List<RowCheck> checks, UnaryOperator<String> redact) {
    this.checks = checks;
    this.redact = redact;
  }

  /**
   * Writes the sample rows and reads them back.
   *
   * @param c a connection in autocommit mode
   * @param schema the scratch schema
   * @throws SQLException when reading fails
   */
  void before(Connection c, String schema) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("SET search_path = " + Sql.quoteIdentifier(schema));
    }
    for (RowCheck check : checks) {
      if (check.inserts().isEmpty()) {
        continue;
      }
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        for (String insert : check.inserts()) {
          s.execute(insert);
        }
        c.commit();
      } catch (SQLException e) {
        c.rollback();
        outcomes.add(
            new Outcome(
                check.table(),
                Status.UNWRITABLE,
                check.inserts().size(),
                redact.apply(MigrationErrors.oneLine(e.getMessage()))));
        continue;
      } finally {
        c.setAutoCommit(true);
      }
      before.put(check.table(), rows(c, check));
    }
  }

  /**
   * Reads the rows again after the script and compares.
   *
   * @param c a connection in autocommit mode
   * @param schema the scratch schema
   * @throws SQLException when reading fails
   */
  void after(Connection c, String schema) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("SET search_path = " + Sql.quoteIdentifier(schema));
    }
    for (RowCheck check : checks) {
      if (check.inserts().isEmpty()) {
        outcomes.add(new Outcome(check.table(), Status.NOT_RUN, 0, check.note()));
        continue;
      }
      List<String> was = before.get(check.table());
      if (was == null) {
        continue; // unwritable, already reported
      }
      List<String> now = rows(c, check);
      if (!now.equals(was)) {
        outcomes.add(
            new Outcome(
                check.table(),
                Status.LOST,
                was.size(),
                was.size()
                    + " sample rows before the script, "
                    + now.size()
                    + " after, or changed"));
        continue;
      }
      TreeSet<String> partitions = new TreeSet<>();
      String misplaced = null;
      for (Placement p : check.placements()) {
        long all = count(c, check.sqlName(), p.condition());
        long there = count(c, p.sqlName(), p.condition());
        if (all == 0 || all != there) {
          misplaced =
              all
                  + " rows where "
                  + p.condition()
                  + ", "
                  + there
                  + " of them in `"
                  + p.partition()
                  + "`";
          break;
        }
        partitions.add(p.partition());
      }
      if (misplaced != null) {
        outcomes.add(new Outcome(check.table(), Status.LOST, was.size(), misplaced));
      } else {
        outcomes.add(
            new Outcome(check.table(), Status.CHECKED, was.size(), String.join(", ", partitions)));
      }
    }
  }

  List<Outcome> outcomes() {
    return List.copyOf(outcomes);
  }

  private static List<String> rows(Connection c, RowCheck check) throws SQLException {
    String columns = check.columns().isEmpty() ? "1" : String.join(", ", check.columns());
    List<String> rows = new ArrayList<>();
    try (Statement s = c.createStatement();
        ResultSet r =
            s.executeQuery(
                "SELECT ROW(" + columns + ")::text FROM " + check.sqlName() + " ORDER BY 1")) {
      while (r.next()) {
        rows.add(r.getString(1));
      }
    }
    return rows;
  }

  private static long count(Connection c, String table, String condition) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT count(*) FROM " + table + " WHERE " + condition)) {
      r.next();
      return r.getLong(1);
    }
  }
}

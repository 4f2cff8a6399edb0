package dev.ledger.diff.against;

import java.util.Locale;

/**
 * One data-dependent check of a diff against a real database ({@code --against}): how many rows a
 * new constraint would reject, or how many rows a dropped column or table holds.
 *
 * @param kind what is checked
 * @param table the table's normalised name, e.g. {@code orders}
 * @param object what the check is about, e.g. {@code column `placed`} or {@code constraint
 *     `orders_total_positive`}
 * @param status what the check found
 * @param rows the rows counted, 0 or more; at most {@code limit + 1} (see {@code more}); 0 when not
 *     run
 * @param more whether the count stopped at the limit: there are more rows than {@code rows - 1}
 * @param note why it was not run (a timeout, an error, a column the diff adds), or null when it ran
 */
public record DataCheck(
    Kind kind, String table, String object, Status status, long rows, boolean more, String note) {

  /** The checks. */
  public enum Kind {
    /** Rows with a NULL where a column becomes {@code NOT NULL} (or every row, for a new one). */
    NOT_NULL,
    /** Rows beyond the first of each key value a new unique key or unique index rejects. */
    UNIQUE,
    /** Rows for which a new {@code CHECK} constraint's expression is false. */
    CHECK,
    /** Rows whose key a new foreign key finds no referenced row for. */
    FOREIGN_KEY,
    /** Rows holding a value in a dropped column. */
    DROPPED_COLUMN,
    /** Rows of a dropped table. */
    DROPPED_TABLE;

    /**
     * The name used in reports.
     *
     * @return e.g. {@code not-null}, {@code dropped-column}
     */
    public String label() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /**
     * Whether rows found mean the statement fails (a constraint), rather than data lost (a drop).
     *
     * @return true for the constraint checks
     */
    public boolean rejects() {
      return this != DROPPED_COLUMN && this != DROPPED_TABLE;
    }
  }

  /** What a check found. */
  public enum Status {
    /** No row is rejected, or the dropped object holds no data. */
    CLEAN,
    /** Rows are rejected (the statement fails there) or data is lost with the drop. */
    ROWS,
    /**
     * The check did not run: the database was unreachable or lacks the table, or the query timed
     * out or failed. The diff's outcome on that database is unknown.
     */
    NOT_RUN,
    /**
     * The tool does not count this kind (an exclusion constraint, a partial or expression unique
     * index, a constraint on a column the diff adds): said so, never taken as clean.
     */
    NOT_COUNTED;

    /**
     * The name used in reports.
     *
     * @return {@code clean}, {@code rows}, {@code not run} or {@code not counted}
     */
    public String label() {
      return name().toLowerCase(Locale.ROOT).replace('_', ' ');
    }
  }

  /**
   * The count as a reviewer reads it, e.g. {@code 3} or {@code more than 1,000}.
   *
   * @return the count, or {@code -} when the check did not run or is not counted
   */
  public String count() {
    if (status == Status.NOT_RUN || status == Status.NOT_COUNTED) {
      return "-";
    }
    return more
        ? String.format(Locale.ROOT, "more than %,d", rows - 1)
        : String.format(Locale.ROOT, "%,d", rows);
  }
}

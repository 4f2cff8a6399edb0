package dev.ledger.diff;

import java.util.List;

/**
 * What checking a diff's SQL found: the base's migrations applied to a fresh scratch schema, then
 * the SQL, then the catalog compared with the head's.
 *
 * @param status the outcome
 * @param failedStatement for {@link Status#SQL_FAILED}, the statement that failed; else null
 * @param failedChange for {@link Status#SQL_FAILED}, the change the statement belongs to, e.g.
 *     {@code column ts on events}; else null
 * @param error for {@link Status#SQL_FAILED}, PostgreSQL's error, one line; else null
 * @param remaining for {@link Status#DIFFERS}, the objects where base plus the SQL still differs
 *     from the head, e.g. {@code view active_tasks}; else empty
 * @param refused the changes the tool refuses to make, each with why, e.g. {@code table events:
 *     PostgreSQL cannot change how a table is partitioned ...}; empty when none
 * @param rows for a script that makes a table again with its rows, what its sample rows showed on
 *     the scratch schema, e.g. {@code the copy of `k` checked with 4 rows: each kept, in its
 *     partition (k_eu, k_us)}, or why the copy was not checked with rows; empty when no table is
 *     made again
 */
public record Verification(
    Status status,
    String failedStatement,
    String failedChange,
    String error,
    List<String> remaining,
    List<String> refused,
    List<String> rows) {

  /** Copies the lists. */
  public Verification {
    remaining = List.copyOf(remaining);
    refused = List.copyOf(refused);
    rows = List.copyOf(rows);
  }

  /**
   * A verification of a script that makes no table again with its rows.
   *
   * @param status the outcome
   * @param failedStatement the statement that failed, or null
   * @param failedChange the change it belongs to, or null
   * @param error PostgreSQL's error, or null
   * @param remaining what still differs
   * @param refused the refused changes
   */
  public Verification(
      Status status,
      String failedStatement,
      String failedChange,
      String error,
      List<String> remaining,
      List<String> refused) {
    this(status, failedStatement, failedChange, error, remaining, refused, List.of());
  }

  /** The outcomes of a check. */
  public enum Status {
    /** Base plus the SQL is exactly the head (or there is no difference). */
    EXACT,
    /** Some changes are refused; the rest was checked. */
    REFUSED,
    /** A statement failed. */
    SQL_FAILED,
    /** The SQL ran, but base plus the SQL is not the head. */
    DIFFERS;

    /**
     * The name used in reports.
     *
     * @return e.g. {@code sql failed}
     */
    public String label() {
      return name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ');
    }
  }

  /**
   * Whether the SQL can be trusted as printed.
   *
   * @return true for {@link Status#EXACT}
   */
  public boolean exact() {
    return status == Status.EXACT;
  }

  /**
   * One sentence for the verdict line.
   *
   * @return e.g. {@code checked: base + this SQL gives exactly the head}
   */
  public String sentence() {
    return switch (status) {
      case EXACT ->
          "checked: the base plus this SQL gives exactly the head"
              + (rows.isEmpty() ? "" : "; " + String.join("; ", rows));
      case REFUSED -> "REFUSED: the tool cannot migrate " + String.join("; ", refused);
      case SQL_FAILED ->
          "NOT SAFE TO RUN: checked on a scratch schema, this SQL fails at "
              + failedChange
              + " ("
              + error
              + ")";
      case DIFFERS ->
          "NOT EXACT: checked on a scratch schema, the base plus this SQL still differs from the"
              + " head in "
              + String.join(", ", remaining);
    };
  }
}

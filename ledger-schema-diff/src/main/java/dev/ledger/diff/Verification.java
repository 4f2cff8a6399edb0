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
 */
public record Verification(
    Status status,
    String failedStatement,
    String failedChange,
    String error,
    List<String> remaining,
    List<String> refused) {

  /** Copies the lists. */
  public Verification {
    remaining = List.copyOf(remaining);
    refused = List.copyOf(refused);
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
      case EXACT -> "checked: the base plus this SQL gives exactly the head";
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

package dev.ledger.diff.review;

import java.util.List;

/**
 * The severities of findings, most severe first: {@value #ERROR} (the head cannot be deployed as it
 * is: an edited applied migration, a version below the base's latest), {@value #WARNING} (breaks
 * the release still running, or blocks reads or writes while it rewrites or scans a table), and
 * {@code advice} ({@link dev.ledger.diff.Finding#ADVICE}, the linter's rules). None changes the
 * exit code.
 */
public final class Severity {

  /** The head cannot be deployed on a database at the base's version as it is. */
  public static final String ERROR = "error";

  /** Breaks the running release, or blocks reads or writes on an existing table. */
  public static final String WARNING = "warning";

  private static final List<String> ORDER = List.of(ERROR, WARNING, "advice");

  private Severity() {}

  /**
   * The rank of a severity for sorting, most severe first.
   *
   * @param severity a severity, not null
   * @return 0 for {@value #ERROR}, 1 for {@value #WARNING}, 2 for {@code advice}, 3 otherwise
   */
  public static int rank(String severity) {
    int i = ORDER.indexOf(severity);
    return i < 0 ? ORDER.size() : i;
  }
}

package dev.ledger.diff.review;

import dev.ledger.diff.Finding;
import java.util.ArrayList;
import java.util.List;

/**
 * What reviewing the pull request's own statements found.
 *
 * @param status whether the statements were measured, and if not why
 * @param message one sentence for the reviewer: what was measured, or why the review fell back to
 *     the catalog diff
 * @param statements each statement of the new migrations in the order they ran; empty unless {@link
 *     Status#MEASURED}
 * @param findings findings about the history as a whole (an edited applied migration, a version
 *     below the base's latest); the statements' own are on each statement
 * @param renames the renames the whole pull request makes, net (base name to final name), with the
 *     SQL that makes each; empty unless {@link Status#MEASURED}
 */
public record Review(
    Status status,
    String message,
    List<ReviewedStatement> statements,
    List<Finding> findings,
    List<RenamePlan.Planned> renames) {

  /** Copies the lists. */
  public Review {
    statements = List.copyOf(statements);
    findings = List.copyOf(findings);
    renames = List.copyOf(renames);
  }

  /** Whether, and how, the statements were reviewed. */
  public enum Status {
    /** The head appends new migrations; each statement was run and measured. */
    MEASURED,
    /** The head adds no migration. */
    NO_NEW_MIGRATIONS,
    /** The head rewrites the base's history: the catalog diff only. */
    HISTORY_REWRITTEN,
    /** A new statement failed when run on its own on top of the base: the catalog diff only. */
    FAILED;

    /**
     * The name used in JSON.
     *
     * @return e.g. {@code measured}, {@code history-rewritten}
     */
    public String label() {
      return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }
  }

  /**
   * A review that did not run: no new migrations.
   *
   * @return the review
   */
  public static Review none() {
    return new Review(
        Status.NO_NEW_MIGRATIONS,
        "the head adds no migration to the base's",
        List.of(),
        List.of(),
        List.of());
  }

  /**
   * Every finding of the run: the history's, then each statement's in order.
   *
   * @return an immutable list
   */
  public List<Finding> allFindings() {
    List<Finding> all = new ArrayList<>(findings);
    statements.forEach(s -> all.addAll(s.findings()));
    return List.copyOf(all);
  }

  /**
   * The statements, most severe finding first, the order of the migrations otherwise.
   *
   * @return an immutable list
   */
  public List<ReviewedStatement> bySeverity() {
    List<ReviewedStatement> sorted = new ArrayList<>(statements);
    sorted.sort(java.util.Comparator.comparingInt(ReviewedStatement::severityRank));
    return List.copyOf(sorted);
  }

  /**
   * The review's part of the verdict line, e.g. {@code the pull request's 3 statements measured: 1
   * rename, 1 rewrite, 2 warnings}, or null when there is nothing to say (no new migration, or
   * statements with no rename, rewrite or finding).
   *
   * @return a clause without a trailing period, or null
   */
  public String verdictClause() {
    return switch (status) {
      case NO_NEW_MIGRATIONS -> null;
      case HISTORY_REWRITTEN -> "the head rewrites the migration history: statements not measured";
      case FAILED -> "a new statement failed when measured: statements not reviewed";
      case MEASURED -> {
        List<String> parts = new ArrayList<>();
        count(parts, statements.stream().mapToLong(s -> s.renames().size()).sum(), "rename");
        count(parts, statements.stream().mapToLong(s -> s.rewrites().size()).sum(), "rewrite");
        List<Finding> all = allFindings();
        count(
            parts, all.stream().filter(f -> f.severity().equals(Severity.ERROR)).count(), "error");
        count(
            parts,
            all.stream().filter(f -> f.severity().equals(Severity.WARNING)).count(),
            "warning");
        if (parts.isEmpty()) {
          yield null;
        }
        yield "the pull request's "
            + statements.size()
            + (statements.size() == 1 ? " statement" : " statements")
            + " measured: "
            + String.join(", ", parts);
      }
    };
  }

  private static void count(List<String> parts, long n, String noun) {
    if (n > 0) {
      parts.add(n + " " + noun + (n == 1 ? "" : "s"));
    }
  }
}

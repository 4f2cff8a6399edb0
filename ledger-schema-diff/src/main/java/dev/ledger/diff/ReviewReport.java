package dev.ledger.diff;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.diff.review.Review;
import dev.ledger.diff.review.ReviewedStatement;
import java.util.List;
import java.util.stream.Collectors;

/** The review of the pull request's own statements in the report's Markdown and JSON. */
final class ReviewReport {

  private ReviewReport() {}

  /**
   * The review's Markdown section: the history's findings, then a table of the statements, most
   * severe first; a sentence when it fell back to the catalog diff; nothing when the head adds no
   * migration.
   *
   * @param review the review
   * @return Markdown, starting with a blank line, or empty
   */
  static String markdown(Review review) {
    if (review.status() == Review.Status.NO_NEW_MIGRATIONS) {
      return "";
    }
    StringBuilder md = new StringBuilder("\n### The pull request's statements, measured\n\n");
    for (Finding f : review.findings()) {
      md.append("- ").append(finding(f)).append('\n');
    }
    if (!review.findings().isEmpty()) {
      md.append('\n');
    }
    if (review.status() != Review.Status.MEASURED) {
      return md.append("> ").append(cell(sentence(review.message()))).append("\n").toString();
    }
    md.append(cell(sentence(review.message())))
        .append(" Each ran in a transaction of its own; locks as `pg_locks` names them, on")
        .append(" relations that existed before it.\n\n");
    md.append("| statement | locks | rewrites | scans | renames | findings |\n");
    md.append("| --- | --- | --- | --- | --- | --- |\n");
    for (ReviewedStatement s : review.bySeverity()) {
      md.append("| `")
          .append(s.migration())
          .append("` line ")
          .append(s.line())
          .append(": ")
          .append(code(firstLine(s.sql())))
          .append(" | ")
          .append(
              !s.transactional()
                  ? notMeasured(s)
                  : s.locks().stream()
                      .map(l -> code(l.relation()) + " " + l.mode())
                      .collect(Collectors.joining(", ")))
          .append(" | ")
          .append(names(s.rewrites()))
          .append(" | ")
          .append(s.transactional() ? names(s.scans()) : "not read")
          .append(" | ")
          .append(
              s.renames().stream()
                  .map(r -> r.kind() + " " + code(r.from()) + " → " + code(r.to()))
                  .collect(Collectors.joining(", ")))
          .append(" | ")
          .append(
              s.findings().stream().map(ReviewReport::finding).collect(Collectors.joining("<br>")))
          .append(" |\n");
    }
    return md.toString();
  }

  /**
   * Adds the review to a report's JSON: {@code review} ({@code status}: {@code measured}, {@code
   * no-new-migrations}, {@code history-rewritten} or {@code failed}; {@code message}) and {@code
   * statements}, one per statement of the new migrations in order, each with {@code migration},
   * {@code line}, {@code sql}, {@code transactional}, {@code locks} ({@code relation}, {@code
   * mode}), {@code locksMeasured} (false for a statement that ran outside a transaction), {@code
   * documentedLocks} (its kind's locks as documented, not measured; like {@code locks}), {@code
   * rewrites}, {@code scans}, {@code renames} ({@code kind}, {@code from}, {@code to}) and {@code
   * findings} ({@code rule}, {@code severity}, {@code message}, {@code alternative}).
   *
   * @param review the review
   * @param root the report's JSON object
   */
  static void json(Review review, ObjectNode root) {
    ObjectNode r = root.putObject("review");
    r.put("status", review.status().label());
    r.put("message", review.message());
    ArrayNode statements = root.putArray("statements");
    for (ReviewedStatement s : review.statements()) {
      ObjectNode node = statements.addObject();
      node.put("migration", s.migration());
      node.put("line", s.line());
      node.put("sql", s.sql());
      node.put("transactional", s.transactional());
      ArrayNode locks = node.putArray("locks");
      s.locks().forEach(l -> locks.addObject().put("relation", l.relation()).put("mode", l.mode()));
      node.put("locksMeasured", s.transactional());
      ArrayNode documented = node.putArray("documentedLocks");
      s.documentedLocks()
          .forEach(l -> documented.addObject().put("relation", l.relation()).put("mode", l.mode()));
      ArrayNode rewrites = node.putArray("rewrites");
      s.rewrites().forEach(rewrites::add);
      ArrayNode scans = node.putArray("scans");
      s.scans().forEach(scans::add);
      ArrayNode renames = node.putArray("renames");
      s.renames()
          .forEach(
              x ->
                  renames
                      .addObject()
                      .put("kind", x.kind())
                      .put("from", x.from())
                      .put("to", x.to()));
      ArrayNode findings = node.putArray("findings");
      for (Finding f : s.findings()) {
        findings
            .addObject()
            .put("rule", f.rule())
            .put("severity", f.severity())
            .put("message", f.message())
            .put("alternative", f.alternative());
      }
    }
  }

  /** The locks cell of a statement that ran outside a transaction: documented, not measured. */
  private static String notMeasured(ReviewedStatement s) {
    String ran = "not measured: cannot run inside a transaction block, ran on its own";
    if (s.documentedLocks().isEmpty()) {
      return ran;
    }
    return ran
        + "; documented for its kind: "
        + s.documentedLocks().stream()
            .map(l -> code(l.relation()) + " " + l.mode())
            .collect(Collectors.joining(", "));
  }

  private static String finding(Finding f) {
    return "**"
        + f.severity()
        + "** `"
        + f.rule()
        + "`: "
        + cell(f.message())
        + ". Instead: "
        + cell(f.alternative());
  }

  private static String names(List<String> names) {
    return names.stream().map(ReviewReport::code).collect(Collectors.joining(", "));
  }

  private static String sentence(String text) {
    return Character.toUpperCase(text.charAt(0)) + text.substring(1) + ".";
  }

  private static String firstLine(String sql) {
    String flat = sql.strip().replaceAll("\\s+", " ");
    return flat.length() <= 120 ? flat : flat.substring(0, 117) + "...";
  }

  private static String code(String text) {
    String flat = text.replace('\n', ' ').replace("|", "\\|");
    return flat.contains("`") ? "`` " + flat + " ``" : "`" + flat + "`";
  }

  private static String cell(String text) {
    return text.replace("\n", " ").replace("|", "\\|");
  }
}

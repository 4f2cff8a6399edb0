package dev.ledger.diff;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.diff.review.Review;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A schema diff ready to print: as Markdown for a pull request comment, as an SQL script, or as
 * JSON for a pipeline.
 *
 * @param base how the base set was named, e.g. its path
 * @param head how the head set was named
 * @param diff the differences
 * @param failOn the rule that decides whether the diff fails
 * @param verification what checking the SQL on a scratch schema found
 * @param online whether the SQL is the online plan ({@code --online})
 * @param findings the advice on the head's new columns and migrations ({@link Finding}), never
 *     failing the diff; empty when there is none
 * @param review the review of the pull request's own statements ({@link Review}): an {@code error}
 *     finding of it (an applied migration edited or removed, a version below the base's latest)
 *     fails the diff unless the rule is {@link FailOn#NEVER}; its warnings never do
 */
public record DiffReport(
    String base,
    String head,
    CatalogDiff diff,
    FailOn failOn,
    Verification verification,
    boolean online,
    List<Finding> findings,
    Review review) {

  /** Copies the findings. */
  public DiffReport {
    findings = List.copyOf(findings);
  }

  /**
   * The hidden last line of every Markdown report, by which a CI job finds its previous comment on
   * a pull request and updates it in place.
   */
  public static final String MARKER = "<!-- ledger-schema-diff -->";

  /**
   * A report without a review of the pull request's statements ({@link Review#none()}).
   *
   * @param base how the base set was named
   * @param head how the head set was named
   * @param diff the differences
   * @param failOn the rule that decides whether the diff fails
   * @param verification what checking the SQL found
   * @param online whether the SQL is the online plan
   * @param findings the advice
   */
  public DiffReport(
      String base,
      String head,
      CatalogDiff diff,
      FailOn failOn,
      Verification verification,
      boolean online,
      List<Finding> findings) {
    this(base, head, diff, failOn, verification, online, findings, Review.none());
  }

  /** Every printed script's first statement: one that cannot get its lock fails instead. */
  static final String LOCK_TIMEOUT = "SET lock_timeout = '5s';";

  /**
   * The header of an online script: the lock timeout, and no statement timeout (a concurrent index
   * build may run long).
   */
  static final List<String> ONLINE_HEADER = List.of(LOCK_TIMEOUT, "SET statement_timeout = '0';");

  private static final String CLASSES =
      "`safe`: catalog only, or on a new object; `locking`: blocks reads or writes while it runs;"
          + " `destructive`: loses data, or fails on data that may be there.";

  /**
   * Whether the diff trips the {@code --fail-on} rule: a change the rule fails on, or, unless the
   * rule is {@link FailOn#NEVER}, an {@code error} finding of the review (the head rewrites the
   * base's migration history, which breaks every database the base migrated).
   *
   * @return true when {@code schema-diff} exits with 1
   */
  public boolean failed() {
    return failOn.trippedBy(diff) || (failOn != FailOn.NEVER && errorFindings() > 0);
  }

  private long errorFindings() {
    return review.allFindings().stream()
        .filter(f -> f.severity().equals(dev.ledger.diff.review.Severity.ERROR))
        .count();
  }

  /**
   * One line for a reviewer, e.g. {@code Schema diff: 3 changes (1 destructive, 2 safe); fails
   * --fail-on destructive.}
   *
   * @return the verdict
   */
  public String verdict() {
    String summary = diff.summary();
    return "Schema diff: "
        + summary
        + (diff.isEmpty() ? "" : "; " + verification.sentence())
        + (failed()
            ? "; fails --fail-on "
                + failOn.label()
                + (failOn.trippedBy(diff) ? "" : " (an error finding)")
            : "")
        + (review.verdictClause() == null ? "" : "; " + review.verdictClause())
        + ".";
  }

  /**
   * Whether the SQL was checked and reaches the head exactly; when not, {@code schema-diff} exits
   * with its own code whatever {@code --fail-on} says.
   *
   * @return true when the SQL can be trusted as printed
   */
  public boolean verified() {
    return verification.exact();
  }

  /**
   * The report as Markdown: the verdict on the first line, then a table of changes per table, then
   * the SQL that brings the base to the head; the last line is the hidden {@link #MARKER}.
   *
   * @return Markdown text ending with a line break
   */
  public String markdown() {
    StringBuilder md = new StringBuilder();
    md.append("**").append(verdict()).append("**\n\n");
    if (!diff.isEmpty() && !verified()) {
      md.append("> **Do not run this SQL as it is.** ")
          .append(verification.sentence())
          .append(".\n");
      if (verification.failedStatement() != null) {
        md.append("> Failing statement: ")
            .append(code(verification.failedStatement()))
            .append("\n");
      }
      md.append('\n');
    }
    md.append("Base ").append(code(base)).append(" → head ").append(code(head)).append(".\n");
    if (diff.isEmpty()) {
      return md.append(ReviewReport.markdown(review))
          .append('\n')
          .append(MARKER)
          .append('\n')
          .toString();
    }
    md.append(CLASSES).append('\n');
    for (Map.Entry<String, List<Change>> group : groups().entrySet()) {
      md.append("\n### ").append(heading(group.getKey(), group.getValue())).append("\n\n");
      md.append("| change | object | definition | class | reason | lock | online alternative |\n");
      md.append("| --- | --- | --- | --- | --- | --- | --- |\n");
      for (Change c : group.getValue()) {
        md.append("| ")
            .append(c.action().label())
            .append(" | ")
            .append(c.kind().label())
            .append(' ')
            .append(code(c.name()))
            .append(" | ")
            .append(cell(definition(c)))
            .append(" | ")
            .append(c.risk() == Risk.SAFE ? "safe" : "**" + c.risk().label() + "**")
            .append(" | ")
            .append(cell(c.reason() + (c.hint() == null ? "" : ". Hint: " + c.hint())))
            .append(" | ")
            .append(c.lock() == null ? "" : c.lock())
            .append(" | ")
            .append(onlineCell(c))
            .append(" |\n");
      }
    }
    md.append(ReviewReport.markdown(review));
    if (!findings.isEmpty()) {
      md.append("\n### Advice (does not fail the diff)\n\n");
      md.append("| rule | finding | instead |\n| --- | --- | --- |\n");
      for (Finding f : findings) {
        md.append("| `")
            .append(f.rule())
            .append("` | ")
            .append(cell(f.message()))
            .append(" | ")
            .append(cell(f.alternative()))
            .append(" |\n");
      }
      md.append(
          "\nSilence a rule for one statement with `-- ledger:allow RULE` in it, or for the"
              + " project in `.ledger/schema-diff.json`.\n");
    }
    md.append("\n### SQL from base to head\n\n```sql\n").append(script()).append("```\n");
    return md.append('\n').append(MARKER).append('\n').toString();
  }

  /**
   * The report as an SQL script: a header with the verdict, then every statement; a statement of a
   * locking or destructive change is preceded by a comment with its class and reason.
   *
   * @return SQL text ending with a line break
   */
  public String sql() {
    return "-- "
        + verdict()
        + "\n-- Base "
        + base
        + " -> head "
        + head
        + ".\n"
        + adviceComments()
        + (diff.isEmpty() ? "" : "\n" + script());
  }

  /**
   * The report as JSON: {@code verdict}, {@code base}, {@code head}, {@code failOn}, {@code
   * failed}, {@code counts} per class, {@code changes} (each with {@code table}, {@code kind},
   * {@code name}, {@code action}, {@code before}, {@code after}, {@code class}, {@code reason},
   * {@code hint}, {@code sql}), the whole {@code sql} script and the {@code findings} (each with
   * {@code rule}, {@code severity}, {@code message}, {@code alternative}): the advice, then the
   * review's; and the review of the pull request's statements: {@code review} ({@code status},
   * {@code message}) and {@code statements} ({@link ReviewReport#json}).
   *
   * @return JSON on one line, ending with a line break
   */
  public String json() {
    ObjectMapper mapper = new ObjectMapper();
    ObjectNode root = mapper.createObjectNode();
    root.put("verdict", verdict());
    root.put("base", base);
    root.put("head", head);
    root.put("failOn", failOn.label());
    root.put("failed", failed());
    ObjectNode check = root.putObject("verification");
    check.put("status", verification.status().label());
    check.put("failedStatement", verification.failedStatement());
    check.put("failedChange", verification.failedChange());
    check.put("error", verification.error());
    ArrayNode remaining = check.putArray("remaining");
    verification.remaining().forEach(remaining::add);
    ArrayNode refused = check.putArray("refused");
    verification.refused().forEach(refused::add);
    ArrayNode rows = check.putArray("rows");
    verification.rows().forEach(rows::add);
    ObjectNode counts = root.putObject("counts");
    for (Risk risk : Risk.values()) {
      counts.put(risk.label(), diff.count(risk));
    }
    ArrayNode changes = root.putArray("changes");
    for (Change c : diff.changes()) {
      ObjectNode node = changes.addObject();
      node.put("table", c.table());
      node.put("kind", c.kind().label());
      node.put("name", c.name());
      node.put("action", c.action().label());
      node.put("before", c.before());
      node.put("after", c.after());
      node.put("class", c.risk().label());
      node.put("reason", c.reason());
      node.put("hint", c.hint());
      node.put("refusal", c.refusal());
      node.put("lock", c.lock());
      node.put("online", c.online());
      ArrayNode sql = node.putArray("sql");
      c.sql().forEach(sql::add);
    }
    ArrayNode sql = root.putArray("sql");
    diff.script().forEach(sql::add);
    ReviewReport.json(review, root);
    ArrayNode advice = root.putArray("findings");
    List<Finding> all = new ArrayList<>(findings);
    all.addAll(review.allFindings());
    for (Finding f : all) {
      ObjectNode node = advice.addObject();
      node.put("rule", f.rule());
      node.put("severity", f.severity());
      node.put("message", f.message());
      node.put("alternative", f.alternative());
    }
    try {
      return mapper.writeValueAsString(root) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a JSON tree always serialises", e);
    }
  }

  private String adviceComments() {
    StringBuilder sql = new StringBuilder();
    for (Finding f : findings) {
      sql.append("-- advice ")
          .append(f.rule())
          .append(": ")
          .append(f.message().replace('\n', ' '))
          .append("; instead: ")
          .append(f.alternative())
          .append('\n');
    }
    return sql.toString();
  }

  private String onlineCell(Change c) {
    if (c.online() == null) {
      return c.risk() == Risk.SAFE ? "" : "none";
    }
    if (c.online().startsWith("not online")) {
      return cell(c.online());
    }
    return cell(online ? "printed: " + c.online() : c.online() + " (`--online`)");
  }

  private String script() {
    StringBuilder sql = new StringBuilder();
    if (online && !diff.isEmpty()) {
      sql.append(
          "-- online plan: a statement that cannot get its lock within 5 s fails; run again\n");
      ONLINE_HEADER.forEach(s -> sql.append(s).append('\n'));
    } else if (!diff.isEmpty()) {
      sql.append(
          "-- a statement that cannot get its lock within 5 s fails instead of queueing every"
              + " query on its table behind it; run again\n");
      sql.append(LOCK_TIMEOUT).append('\n');
    }
    if (diff.script().stream()
        .anyMatch(s -> s.contains(SchemaCatalog.DEFAULT_SCHEMA_PLACEHOLDER))) {
      sql.append("-- ")
          .append(SchemaCatalog.DEFAULT_SCHEMA_PLACEHOLDER)
          .append(": the schema the migration runs in; Flyway fills it in\n");
    }
    for (Change c : diff.changes()) {
      if (c.refusal() != null) {
        sql.append("-- REFUSED, not in this script: ")
            .append(c.kind().label())
            .append(' ')
            .append(c.name())
            .append(": ")
            .append(c.refusal().replace('\n', ' '))
            .append('\n');
      }
    }
    Set<Change> commented = Collections.newSetFromMap(new IdentityHashMap<>());
    for (CatalogDiff.Statement s : diff.statements()) {

      Change c = s.change();
      if (c.risk() != Risk.SAFE && commented.add(c)) {
        sql.append("-- ")
            .append(c.risk().label())
            .append(", ")
            .append(c.kind().label())
            .append(' ')
            .append(c.name())
            .append(c.table() == null || c.kind() == Change.Kind.TABLE ? "" : " on " + c.table())
            .append(' ')
            .append(c.action().label())
            .append(": ")
            .append(c.reason().replace('\n', ' '))
            .append('\n');
      }
      if (Sql.outsideTransaction(s.sql())) {
        sql.append("-- runs outside a transaction block\n");
      }
      String lock = c.lock() == null ? null : Locks.of(s.sql());
      if (lock != null) {
        sql.append("-- lock: ").append(lock).append('\n');
      }
      sql.append(s.sql()).append('\n');
    }
    return sql.toString();
  }

  /** The changes by table, in order; changes of no table last, under the key null. */
  private Map<String, List<Change>> groups() {
    Map<String, List<Change>> byTable = new LinkedHashMap<>();
    List<Change> other = new ArrayList<>();
    for (Change c : diff.changes()) {
      if (c.table() == null) {
        other.add(c);
      } else {
        byTable.computeIfAbsent(c.table(), k -> new ArrayList<>()).add(c);
      }
    }
    if (!other.isEmpty()) {
      byTable.put(null, other);
    }
    return byTable;
  }

  private static String heading(String table, List<Change> changes) {
    if (table == null) {
      return "Other objects";
    }
    for (Change c : changes) {
      if (c.kind() != Change.Kind.TABLE || !c.name().equals(table)) {
        continue; // a partition of a table made again is listed under that table
      }
      if (c.action() == Change.Action.ADDED) {
        return "Table " + code(table) + " (new)";
      }
      if (c.action() == Change.Action.DROPPED) {
        return "Table " + code(table) + " (dropped)";
      }
    }
    return "Table " + code(table);
  }

  private static String definition(Change c) {
    if (c.kind() == Change.Kind.TABLE || c.kind() == Change.Kind.SCHEMA) {
      return Objects.requireNonNullElse(c.after(), c.before());
    }
    if (c.before() == null) {
      return code(c.after());
    }
    if (c.after() == null) {
      return "~~" + code(c.before()) + "~~";
    }
    return code(c.before()) + " → " + code(Objects.requireNonNull(c.after()));
  }

  private static String code(String text) {
    String flat = text.replace('\n', ' ');
    return flat.contains("`") ? "`` " + flat + " ``" : "`" + flat + "`";
  }

  private static String cell(String text) {
    return text.replace("\n", " ").replace("|", "\\|");
  }
}

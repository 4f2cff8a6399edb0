package dev.ledger.diff;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The differences between two catalogs: each change with its risk, and the SQL script that brings
 * the base to the head.
 *
 * <pre>{@code
 * CatalogDiff diff = CatalogDiff.between(base, head);
 * diff.changes().forEach(c -> System.out.println(c.risk() + " " + c.reason()));
 * diff.script().forEach(System.out::println);
 * }</pre>
 *
 * <p>The script runs in this order, so that every statement finds what it needs: new schemas;
 * dropped identities; new sequences; dropped foreign keys, constraints and indexes; dropped tables
 * (tables that reference others first); new tables; new and changed columns; new constraints and
 * indexes; new foreign keys; sequence owners; dropped columns, sequences and schemas. {@code
 * CatalogDiff.between(SchemaCatalog.empty(), c).script()} is therefore the canonical DDL of {@code
 * c}.
 */
public final class CatalogDiff {

  private final List<Change> changes;
  private final List<Statement> statements;

  private final List<PartitionRebuild.RowCheck> rowChecks;

  CatalogDiff(List<Change> changes, List<Statement> statements) {
    this(changes, statements, List.of());
  }

  CatalogDiff(
      List<Change> changes, List<Statement> statements, List<PartitionRebuild.RowCheck> rowChecks) {
    this.changes = List.copyOf(changes);
    this.statements = List.copyOf(statements);
    this.rowChecks = List.copyOf(rowChecks);
  }

  /**
   * The sample rows that check the copy of each table the script makes again ({@link
   * PartitionRebuild}).
   *
   * @return the checks, empty when no table is rebuilt
   */
  List<PartitionRebuild.RowCheck> rowChecks() {
    return rowChecks;
  }

  /**
   * One statement of the script and the change it makes.
   *
   * @param sql the statement, ending with {@code ;}
   * @param change the change it belongs to
   */
  public record Statement(String sql, Change change) {}

  /**
   * Compares two catalogs.
   *
   * @param base the catalog before, not null
   * @param head the catalog after, not null
   * @return the differences; empty when the catalogs are equal
   */
  public static CatalogDiff between(SchemaCatalog base, SchemaCatalog head) {
    return between(base, head, false);
  }

  /**
   * Compares two catalogs, printing the online plan when asked ({@code --online}): indexes built
   * {@code CONCURRENTLY}, foreign keys and checks added {@code NOT VALID} then validated, {@code
   * SET NOT NULL} through a validated check, unique keys added {@code USING INDEX}.
   *
   * @param base the catalog before, not null
   * @param head the catalog after, not null
   * @param online whether to print the online plan
   * @return the differences; empty when the catalogs are equal
   */
  public static CatalogDiff between(SchemaCatalog base, SchemaCatalog head, boolean online) {
    return new Differ(base, head, online).diff();
  }

  /**
   * Compares two catalogs, converting the columns named in {@code using} with the author's
   * expression ({@code ALTER COLUMN ... TYPE ... USING EXPR}) instead of a cast.
   *
   * @param base the catalog before, not null
   * @param head the catalog after, not null
   * @param online whether to print the online plan
   * @param using {@code table.column} (names as the report prints them) to the expression; each
   *     must name a column whose type changes ({@link Using#validate})
   * @return the differences
   */
  static CatalogDiff between(
      SchemaCatalog base, SchemaCatalog head, boolean online, Map<String, String> using) {
    return new Differ(base, head, online, using).diff();
  }

  /**
   * The changes, grouped by table (tables by name; within a table: the table, its columns in column
   * order, constraints, indexes, sequences it owns), then other sequences, then schemas.
   *
   * @return an immutable list, empty when there is no difference
   */
  public List<Change> changes() {
    return changes;
  }

  /**
   * The SQL that brings a database from the base to the head, one statement per element, each
   * ending with {@code ;}.
   *
   * @return an immutable list, empty when there is no difference
   */
  public List<String> script() {
    return statements.stream().map(Statement::sql).toList();
  }

  /**
   * The script's statements with the change each makes, in script order.
   *
   * @return an immutable list, empty when there is no difference
   */
  public List<Statement> statements() {
    return statements;
  }

  /**
   * Whether the catalogs are equal.
   *
   * @return true when there is no change
   */
  public boolean isEmpty() {
    return changes.isEmpty();
  }

  /**
   * How many changes have a risk.
   *
   * @param risk the risk, not null
   * @return the count, 0 or more
   */
  public long count(Risk risk) {
    return changes.stream().filter(c -> c.risk() == risk).count();
  }

  /**
   * The most severe risk among the changes.
   *
   * @return the risk, or empty when there is no change
   */
  public Optional<Risk> highestRisk() {
    return changes.stream().map(Change::risk).reduce(Risk::max);
  }

  /**
   * The changes counted, e.g. {@code 3 changes (1 destructive, 2 safe)} or {@code no changes}.
   *
   * @return the summary, without a trailing period
   */
  public String summary() {
    if (changes.isEmpty()) {
      return "no changes";
    }
    StringBuilder line =
        new StringBuilder()
            .append(changes.size())
            .append(changes.size() == 1 ? " change (" : " changes (");
    String separator = "";
    for (Risk risk : List.of(Risk.DESTRUCTIVE, Risk.LOCKING, Risk.SAFE)) {
      long n = count(risk);
      if (n > 0) {
        line.append(separator).append(n).append(' ').append(risk.label());
        separator = ", ";
      }
    }
    return line.append(')').toString();
  }
}

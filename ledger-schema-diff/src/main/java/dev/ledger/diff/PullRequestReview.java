package dev.ledger.diff;

import dev.ledger.diff.review.MigrationHistory;
import dev.ledger.diff.review.RenamePlan;
import dev.ledger.diff.review.Review;
import dev.ledger.diff.review.StatementRunner;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reviews the pull request's own statements ({@link dev.ledger.diff.review}) on a scratch schema of
 * the diff's server, and turns the renames it measured into renames in the diff: the catalog diff
 * is taken against the head with the renames undone (on the same scratch schema, so no migration
 * runs again), and the renames run last, each a {@link Change.Action#RENAMED} change.
 *
 * <p>Costs one migration run more than a diff without it: the base's migrations, then the new
 * statements one at a time.
 */
final class PullRequestReview {

  /**
   * The review and, when it measured renames that can be undone on the head, the head's catalog
   * with them undone.
   *
   * @param review the review
   * @param unrenamedHead the head's catalog under the base's names, or null
   */
  record Outcome(Review review, SchemaCatalog unrenamedHead) {

    /**
     * The diff from base to head: with renames as renames when there are any.
     *
     * @param base the base's catalog
     * @param head the head's catalog
     * @param online whether to plan online
     * @param using the author's conversions of retyped columns ({@code --using})
     * @return the diff
     */
    CatalogDiff diff(
        SchemaCatalog base, SchemaCatalog head, boolean online, Map<String, String> using) {
      if (unrenamedHead == null) {
        return CatalogDiff.between(base, head, online, using);
      }
      CatalogDiff rest = CatalogDiff.between(base, unrenamedHead, online, using);
      List<Change> changes = new ArrayList<>();
      List<CatalogDiff.Statement> statements = new ArrayList<>(rest.statements());
      for (RenamePlan.Planned p : review.renames()) {
        Change c = change(p);
        changes.add(c);
        statements.add(new CatalogDiff.Statement(p.forward(), c));
      }
      changes.addAll(rest.changes());
      return new CatalogDiff(changes, statements, rest.rowChecks());
    }
  }

  private PullRequestReview() {}

  /**
   * Reviews the head's new statements, when the head only appends to the base's history.
   *
   * @param pg the server
   * @param base the base's scripts
   * @param head the head's scripts
   * @param basePlaceholders the base's placeholders
   * @param headPlaceholders the head's placeholders
   * @return the outcome
   * @throws SchemaDiffException when the base's migrations fail, or the database does
   */
  static Outcome run(
      ScratchPostgres pg,
      MigrationSource base,
      MigrationSource head,
      Map<String, String> basePlaceholders,
      Map<String, String> headPlaceholders) {
    MigrationHistory history = MigrationHistory.compare(base.directory(), head.directory());
    switch (history.status()) {
      case UNCHANGED:
        return new Outcome(Review.none(), null);
      case REWRITTEN:
        return new Outcome(
            new Review(
                Review.Status.HISTORY_REWRITTEN,
                "the head rewrites the base's migration history, so its statements are not"
                    + " measured one by one: the changes are the catalog diff of both sets",
                List.of(),
                history.findings(),
                List.of()),
            null);
      default:
        break;
    }
    return pg.applyAndUse(
        base,
        "review",
        basePlaceholders,
        (c, schema, before) -> {
          Review review =
              StatementRunner.run(
                  c,
                  schema,
                  before,
                  headPlaceholders,
                  ScratchPostgres.HISTORY_TABLE,
                  history.added());
          if (review.status() != Review.Status.MEASURED || review.renames().isEmpty()) {
            return new Outcome(review, null);
          }
          return new Outcome(review, undoRenames(c, schema, before, review.renames()));
        });
  }

  /** The head's catalog with the renames undone, or null when one cannot be undone. */
  private static SchemaCatalog undoRenames(
      Connection c, String schema, Set<String> before, List<RenamePlan.Planned> renames)
      throws SQLException {
    c.setAutoCommit(false);
    try (Statement s = c.createStatement()) {
      s.execute("SET LOCAL search_path = " + Sql.quoteIdentifier(schema));
      for (RenamePlan.Planned p : renames) {
        s.execute(p.backward().replace(SchemaCatalog.DEFAULT_SCHEMA_PLACEHOLDER, schema));
      }
      List<String> others = new ArrayList<>();
      try (var r = s.executeQuery("SELECT nspname FROM pg_namespace")) {
        while (r.next()) {
          String n = r.getString(1);
          if (!before.contains(n) && !n.equals(schema)) {
            others.add(n);
          }
        }
      }
      return new CatalogReader(c, schema, others, ScratchPostgres.HISTORY_TABLE).read();
    } catch (SQLException e) {
      // A name the head reuses (a table renamed away and a new one under its name): the renames
      // stay as the catalog diff sees them, and the statements still list them.
      return null;
    } finally {
      c.rollback();
      c.setAutoCommit(true);
    }
  }

  private static Change change(RenamePlan.Planned p) {
    Change.Kind kind =
        switch (p.kind()) {
          case "table" -> Change.Kind.TABLE;
          case "view" -> Change.Kind.VIEW;
          case "materialized view" -> Change.Kind.MATERIALIZED_VIEW;
          case "sequence" -> Change.Kind.SEQUENCE;
          case "index" -> Change.Kind.INDEX;
          case "column" -> Change.Kind.COLUMN;
          case "constraint" -> Change.Kind.CONSTRAINT;
          case "trigger" -> Change.Kind.TRIGGER;
          case "function" -> Change.Kind.FUNCTION;
          case "procedure" -> Change.Kind.PROCEDURE;
          case "enum" -> Change.Kind.ENUM;
          case "domain" -> Change.Kind.DOMAIN;
          case "type" -> Change.Kind.COMPOSITE_TYPE;
          default -> Change.Kind.OTHER;
        };
    boolean onTable = p.table() != null || kind == Change.Kind.INDEX;
    return new Change(
        p.table(),
        kind,
        p.to(),
        Change.Action.RENAMED,
        p.from(),
        p.to(),
        Risk.SAFE,
        "renamed in place by the pull request's migration (matched by OID): catalog only, no data"
            + " moves; the release still running uses the old name (see the statements below)",
        null,
        List.of(p.forward()),
        null,
        onTable ? "ACCESS EXCLUSIVE" : null,
        null);
  }
}

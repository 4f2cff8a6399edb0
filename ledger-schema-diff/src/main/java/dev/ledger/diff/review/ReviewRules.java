package dev.ledger.diff.review;

import dev.ledger.diff.Finding;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The findings of one measured statement, on objects of the base only (what the pull request makes
 * itself, nobody uses yet): what breaks the release still running during a rolling deploy (a
 * column, table, view or function of the base renamed or dropped, and its old name gone at the end
 * of the pull request's migrations), with the expand-and-contract alternative; and a table of the
 * base rewritten, or read in full under a lock that blocks writes.
 */
final class ReviewRules {

  /** Rule: a base column renamed. */
  static final String RENAME_COLUMN = "rename-column";

  /** Rule: a base table renamed. */
  static final String RENAME_TABLE = "rename-table";

  /** Rule: a base view renamed. */
  static final String RENAME_VIEW = "rename-view";

  /** Rule: a base function renamed. */
  static final String RENAME_FUNCTION = "rename-function";

  /** Rule: a base column dropped. */
  static final String DROP_COLUMN = "drop-column";

  /** Rule: a base table dropped. */
  static final String DROP_TABLE = "drop-table";

  /** Rule: a base view dropped. */
  static final String DROP_VIEW = "drop-view";

  /** Rule: a base function dropped. */
  static final String DROP_FUNCTION = "drop-function";

  /** Rule: a base table rewritten. */
  static final String TABLE_REWRITE = "table-rewrite";

  /** Rule: a base table read in full under a lock that blocks writes. */
  static final String VALIDATION_SCAN = "validation-scan";

  /** Lock modes from weakest to strongest, as {@code pg_locks} names them. */
  static final List<String> MODES =
      List.of(
          "AccessShareLock",
          "RowShareLock",
          "RowExclusiveLock",
          "ShareUpdateExclusiveLock",
          "ShareLock",
          "ShareRowExclusiveLock",
          "ExclusiveLock",
          "AccessExclusiveLock");

  private static final String RUNNING = ": the release still running during a rolling deploy uses ";

  private ReviewRules() {}

  /**
   * The findings of one statement.
   *
   * @param m what it did
   * @param base the snapshot after the base's migrations
   * @param end the snapshot after every new statement
   * @param naming how to name objects
   * @return the findings, most severe first (all are warnings)
   */
  static List<Finding> of(Measured m, CatalogSnapshot base, CatalogSnapshot end, Naming naming) {
    List<Finding> out = new ArrayList<>();
    for (CatalogSnapshot.Entry[] pair : m.renames()) {
      CatalogSnapshot.Entry was = pair[0];
      CatalogSnapshot.Entry now = pair[1];
      if (base.get(was.key()) == null || was.inherited() > 0) {
        continue;
      }
      switch (was.category()) {
        case 'a' -> {
          CatalogSnapshot.Entry table = m.tables().get(was.owner());
          if (table == null || !isTable(table.kind()) || hasColumn(end, was.owner(), was.name())) {
            continue;
          }
          String t = naming.display(table);
          String old = "`" + t + "." + was.name() + "`";
          String neu = "`" + t + "." + now.name() + "`";
          out.add(
              warning(
                  RENAME_COLUMN,
                  "renames " + old + " to " + neu + RUNNING + old + " and fails until it is gone",
                  "expand and contract: add "
                      + neu
                      + ", write both (in the code or with a trigger), backfill it in batches,"
                      + " move the reads, and drop "
                      + old
                      + " in a later release"));
        }
        case 'r' -> {
          boolean view = was.kind().equals("v") || was.kind().equals("m");
          if (!(view || isTable(was.kind())) || hasRelation(end, was.schema(), was.name())) {
            continue;
          }
          String old = "`" + naming.display(was) + "`";
          String neu = "`" + naming.display(now) + "`";
          out.add(
              warning(
                  view ? RENAME_VIEW : RENAME_TABLE,
                  "renames " + old + " to " + neu + RUNNING + old + " and fails until it is gone",
                  view
                      ? "create the view under the new name beside the old one, and drop "
                          + old
                          + " in a later release"
                      : "expand and contract: keep a view "
                          + old
                          + " over "
                          + neu
                          + " (CREATE VIEW "
                          + naming.display(was)
                          + " AS SELECT * FROM "
                          + naming.display(now)
                          + ") while the old release runs, and drop it in a later release"));
        }
        case 'f' -> {
          if (hasFunction(end, was)) {
            continue;
          }
          String old = "`" + naming.display(was) + "(" + naming.clean(was.args()) + ")`";
          out.add(
              warning(
                  RENAME_FUNCTION,
                  "renames "
                      + old
                      + " to `"
                      + naming.display(now)
                      + "`"
                      + RUNNING
                      + old
                      + " and fails until it is gone",
                  "keep "
                      + old
                      + " as a wrapper that calls the new one, and drop it in a later"
                      + " release"));
        }
        default -> {
          // constraints, indexes, triggers, types: the running code does not name them
        }
      }
    }
    for (CatalogSnapshot.Entry d : m.drops()) {
      if (base.get(d.key()) == null) {
        continue;
      }
      switch (d.category()) {
        case 'r' -> {
          boolean view = d.kind().equals("v") || d.kind().equals("m");
          if (!(view || isTable(d.kind())) || hasRelation(end, d.schema(), d.name())) {
            continue;
          }
          String old = "`" + naming.display(d) + "`";
          out.add(
              warning(
                  view ? DROP_VIEW : DROP_TABLE,
                  "drops " + old + ", which the base schema has" + RUNNING + "it and fails",
                  "contract in two releases: ship the code that no longer uses "
                      + old
                      + " first, and drop it in a later migration"));
        }
        case 'a' -> {
          CatalogSnapshot.Entry table = m.tables().get(d.owner());
          if (table == null
              || !isTable(table.kind())
              || end.relation(d.owner()) == null
              || hasColumn(end, d.owner(), d.name())) {
            continue;
          }
          String old = "`" + naming.display(table) + "." + d.name() + "`";
          out.add(
              warning(
                  DROP_COLUMN,
                  "drops " + old + ", which the base schema has" + RUNNING + "it and fails",
                  "contract in two releases: ship the code that no longer reads or writes "
                      + old
                      + " first, and drop the column in a later migration"));
        }
        case 'f' -> {
          if (hasFunction(end, d)) {
            continue;
          }
          String old = "`" + naming.display(d) + "(" + naming.clean(d.args()) + ")`";
          out.add(
              warning(
                  DROP_FUNCTION,
                  "drops " + old + ", which the base schema has" + RUNNING + "it and fails",
                  "contract in two releases: ship the code that no longer calls "
                      + old
                      + " first, and drop it in a later migration"));
        }
        default -> {
          // not used by name by the running release
        }
      }
    }
    List<Long> rewritten = new ArrayList<>();
    for (CatalogSnapshot.Entry r : m.rewrites()) {
      if (base.get(r.key()) == null || !isTable(r.kind())) {
        continue;
      }
      rewritten.add(r.oid());
      String mode = m.locks().getOrDefault(r.oid(), "AccessExclusiveLock");
      out.add(
          warning(
              TABLE_REWRITE,
              "rewrites `"
                  + naming.display(r)
                  + "` (every row copied to a new file: its relfilenode changed) under "
                  + mode
                  + ": "
                  + blocked(mode)
                  + " until it ends",
              rewriteAlternative(m.sql())));
    }
    for (CatalogSnapshot.Entry s : m.scans()) {
      String mode = m.locks().get(s.oid());
      if (base.get(s.key()) == null
          || rewritten.contains(s.oid())
          || mode == null
          || MODES.indexOf(mode) < MODES.indexOf("ShareLock")) {
        continue;
      }
      out.add(
          warning(
              VALIDATION_SCAN,
              "reads all of `"
                  + naming.display(s)
                  + "` (a sequential scan, counted by PostgreSQL) while holding "
                  + mode
                  + ": "
                  + blocked(mode)
                  + " until the scan ends",
              scanAlternative(m.sql())));
    }
    return List.copyOf(out);
  }

  private static Finding warning(String rule, String message, String alternative) {
    return new Finding(rule, Severity.WARNING, message, alternative);
  }

  private static String blocked(String mode) {
    return mode.equals("AccessExclusiveLock") ? "reads and writes wait" : "writes wait";
  }

  private static boolean isTable(String relkind) {
    return relkind.equals("r") || relkind.equals("p") || relkind.equals("f");
  }

  private static boolean hasColumn(CatalogSnapshot s, long table, String name) {
    return s.entries().values().stream()
        .anyMatch(e -> e.category() == 'a' && e.oid() == table && e.name().equals(name));
  }

  private static boolean hasRelation(CatalogSnapshot s, String schema, String name) {
    return s.entries().values().stream()
        .anyMatch(e -> e.category() == 'r' && e.schema().equals(schema) && e.name().equals(name));
  }

  private static boolean hasFunction(CatalogSnapshot s, CatalogSnapshot.Entry f) {
    return s.entries().values().stream()
        .anyMatch(
            e ->
                e.category() == 'f'
                    && e.schema().equals(f.schema())
                    && e.name().equals(f.name())
                    && e.args().equals(f.args()));
  }

  private static final Pattern ADD_WITH_DEFAULT =
      Pattern.compile("\\bADD\\b.*\\bDEFAULT\\b", Pattern.CASE_INSENSITIVE | Pattern.DOTALL);
  private static final Pattern TYPE_CHANGE =
      Pattern.compile("\\bALTER\\b.*\\bTYPE\\b", Pattern.CASE_INSENSITIVE | Pattern.DOTALL);

  private static String rewriteAlternative(String sql) {
    if (ADD_WITH_DEFAULT.matcher(sql).find()) {
      return "add the column without the volatile default, then SET DEFAULT (new rows only) and"
          + " fill the existing rows in batches";
    }
    if (TYPE_CHANGE.matcher(sql).find()) {
      return "expand and contract: add a column of the new type, keep it in step (a trigger),"
          + " backfill it in batches, then swap the names in one short transaction";
    }
    return "build the new shape beside the old one, fill it in batches, and swap in one short"
        + " transaction";
  }

  private static String scanAlternative(String sql) {
    String s = sql.toUpperCase(Locale.ROOT);
    if (s.matches("(?s)\\s*CREATE\\s+(UNIQUE\\s+)?INDEX\\b.*")) {
      return "CREATE INDEX CONCURRENTLY, in a migration of its own (SHARE UPDATE EXCLUSIVE: reads"
          + " and writes go on)";
    }
    if (s.contains("SET NOT NULL")) {
      return "ADD CONSTRAINT ... CHECK (column IS NOT NULL) NOT VALID, VALIDATE CONSTRAINT in a"
          + " later transaction, then SET NOT NULL (no scan) and drop the check";
    }
    if (s.contains("PRIMARY KEY") || s.contains("UNIQUE")) {
      return "CREATE UNIQUE INDEX CONCURRENTLY, then ADD CONSTRAINT ... USING INDEX";
    }
    if (s.contains("FOREIGN KEY") || s.contains("REFERENCES") || s.contains("CHECK")) {
      return "ADD CONSTRAINT ... NOT VALID, then VALIDATE CONSTRAINT in a later transaction"
          + " (SHARE UPDATE EXCLUSIVE: reads and writes go on)";
    }
    return "run it when the table is quiet, with a lock_timeout";
  }
}

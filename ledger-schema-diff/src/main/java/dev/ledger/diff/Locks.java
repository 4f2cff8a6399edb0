package dev.ledger.diff;

import java.util.List;

/**
 * The table lock a statement of the script takes, read from its text; the script only holds
 * statements the differs write, so their shapes are known.
 */
final class Locks {

  /** Lock modes from weakest to strongest, as PostgreSQL names them. */
  private static final List<String> ORDER =
      List.of(
          "SHARE UPDATE EXCLUSIVE",
          "SHARE",
          "SHARE ROW EXCLUSIVE",
          "EXCLUSIVE",
          "ACCESS EXCLUSIVE");

  private Locks() {}

  /**
   * The lock one statement takes on the table it changes.
   *
   * @param statement a statement of the script
   * @return e.g. {@code ACCESS EXCLUSIVE}, or null when it takes no lock on an existing table
   *     ({@code CREATE TABLE}, {@code CREATE VIEW}, {@code COMMENT}, {@code GRANT}, ...)
   */
  static String of(String statement) {
    if (statement.contains(" CONCURRENTLY ")) {
      return "SHARE UPDATE EXCLUSIVE";
    }
    if (statement.startsWith("CREATE INDEX ") || statement.startsWith("CREATE UNIQUE INDEX ")) {
      return "SHARE";
    }
    if (statement.startsWith("CREATE TRIGGER ")
        || statement.startsWith("CREATE CONSTRAINT TRIGGER ")) {
      return "SHARE ROW EXCLUSIVE";
    }
    if (statement.startsWith("CREATE STATISTICS ")) {
      return "SHARE UPDATE EXCLUSIVE";
    }
    if (statement.startsWith("ALTER TABLE ")) {
      if (statement.contains(" VALIDATE CONSTRAINT ") || statement.contains(" ATTACH PARTITION ")) {
        return "SHARE UPDATE EXCLUSIVE";
      }
      if (statement.contains(" FOREIGN KEY ") && statement.contains(" ADD CONSTRAINT ")) {
        return "SHARE ROW EXCLUSIVE";
      }
      return "ACCESS EXCLUSIVE";
    }
    if (statement.startsWith("DROP TABLE ")
        || statement.startsWith("DROP INDEX ")
        || statement.startsWith("DROP TRIGGER ")
        || statement.startsWith("CREATE RULE ")
        || statement.startsWith("DROP RULE ")
        || statement.startsWith("CREATE POLICY ")
        || statement.startsWith("DROP POLICY ")
        || statement.startsWith("DROP MATERIALIZED VIEW ")
        || statement.startsWith("DROP VIEW ")) {
      return "ACCESS EXCLUSIVE";
    }
    return null;
  }

  /**
   * The strongest lock among statements.
   *
   * @param statements the statements
   * @return the strongest lock, or null when none takes one
   */
  static String strongest(List<String> statements) {
    String strongest = null;
    for (String s : statements) {
      String lock = of(s);
      if (lock != null && (strongest == null || ORDER.indexOf(lock) > ORDER.indexOf(strongest))) {
        strongest = lock;
      }
    }
    return strongest;
  }
}

package dev.ledger.app.diff;

import java.util.List;
import java.util.Locale;

/**
 * One difference between the base and the head catalog, with its risk and the SQL that makes it.
 *
 * @param table the normalised name of the table the change belongs to (for a sequence: the table
 *     that owns it), or null for a schema or an unowned sequence
 * @param kind what kind of object changed
 * @param name the object's normalised name (for a table, the table's)
 * @param action whether the object was added, dropped or changed
 * @param before how the base defines the object, or null when it was added
 * @param after how the head defines the object, or null when it was dropped
 * @param risk how the change affects a database that holds data
 * @param reason why it has that risk, one sentence
 * @param hint advice for the reviewer (e.g. a drop and an add that look like a rename), or null
 * @param sql the statements of this change in the order the script runs them; empty when the change
 *     is made by another change's statement (a column of a new table)
 */
public record Change(
    String table,
    Kind kind,
    String name,
    Action action,
    String before,
    String after,
    Risk risk,
    String reason,
    String hint,
    List<String> sql) {

  /** Copies the statement list. */
  public Change {
    sql = List.copyOf(sql);
  }

  /** The kinds of object compared. */
  public enum Kind {
    /** A schema the set created besides its default schema. */
    SCHEMA,
    /** A table. */
    TABLE,
    /** A column of a table. */
    COLUMN,
    /** A primary key, unique, foreign key, check or exclusion constraint. */
    CONSTRAINT,
    /** An index that backs no constraint. */
    INDEX,
    /** A sequence. */
    SEQUENCE;

    /**
     * The name used in reports.
     *
     * @return e.g. {@code column}
     */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** What happened to the object between base and head. */
  public enum Action {
    /** Only the head has it. */
    ADDED,
    /** Only the base has it. */
    DROPPED,
    /** Both have it, defined differently. */
    CHANGED;

    /**
     * The name used in reports.
     *
     * @return {@code added}, {@code dropped} or {@code changed}
     */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }
}

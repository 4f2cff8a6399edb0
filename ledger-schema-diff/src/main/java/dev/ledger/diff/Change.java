package dev.ledger.diff;

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
 * @param refusal why the tool cannot make this change (a kind it does not migrate, a conversion it
 *     cannot write), or null when it can; a refused change fails the diff with its own exit code
 * @param lock the strongest lock its statements take on an existing table, e.g. {@code ACCESS
 *     EXCLUSIVE}, or null when they take none (or the object is new)
 * @param online for a locking or destructive change, the online way to make it (the plan {@code
 *     --online} prints), or null when there is none
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
    List<String> sql,
    String refusal,
    String lock,
    String online) {

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
    SEQUENCE,
    /** An extension installed in a schema of the set. */
    EXTENSION,
    /** A collation. */
    COLLATION,
    /** An enum type. */
    ENUM,
    /** A domain. */
    DOMAIN,
    /** A composite type. */
    COMPOSITE_TYPE,
    /** A function. */
    FUNCTION,
    /** A procedure. */
    PROCEDURE,
    /** A view. */
    VIEW,
    /** A materialized view, with its indexes. */
    MATERIALIZED_VIEW,
    /** A trigger. */
    TRIGGER,
    /** A rewrite rule ({@code CREATE RULE}) on a table or view. */
    RULE,
    /** A row-level security policy. */
    POLICY,
    /** Whether a table enables or forces row-level security. */
    ROW_SECURITY,
    /** A table's {@code REPLICA IDENTITY} when it is not the default. */
    REPLICA_IDENTITY,
    /** A table's storage when it is not the default: {@code UNLOGGED}, storage parameters. */
    TABLE_STORAGE,
    /** Extended statistics ({@code CREATE STATISTICS}). */
    STATISTICS,
    /** A comment ({@code COMMENT ON}). */
    COMMENT,
    /** The privileges one role holds on one object ({@code GRANT}). */
    GRANT,
    /**
     * An object of a kind the tool does not migrate (an aggregate, an operator, a range type, a
     * text search object, a foreign table...): named and refused when it differs.
     */
    OTHER;

    /**
     * The name used in reports.
     *
     * @return e.g. {@code column}, {@code materialized view}
     */
    public String label() {
      return name().toLowerCase(Locale.ROOT).replace('_', ' ');
    }
  }

  /** What happened to the object between base and head. */
  public enum Action {
    /** Only the head has it. */
    ADDED,
    /** Only the base has it. */
    DROPPED,
    /** Both have it, defined differently. */
    CHANGED,
    /**
     * Both have it under another name: renamed in place by the pull request's migration (matched by
     * OID when its statements were measured), no data lost.
     */
    RENAMED;

    /**
     * The name used in reports.
     *
     * @return {@code added}, {@code dropped}, {@code changed} or {@code renamed}
     */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }
}

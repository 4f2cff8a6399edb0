package dev.ledger.app.diff;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The schema objects one migration set leaves behind, as PostgreSQL's catalog describes them after
 * the set was applied to a scratch schema.
 *
 * <p>Names are normalised so that the same set applied to two differently named scratch schemas
 * gives equal catalogs: an object in the set's own (default) schema is named without a schema
 * ({@code tasks}); an object in another schema the set created is named {@code schema.name}.
 * Definitions come from PostgreSQL itself ({@code format_type}, {@code pg_get_expr}, {@code
 * pg_get_constraintdef}, {@code pg_get_indexdef}), read with the search path on the scratch schema,
 * so they qualify exactly the objects that live elsewhere. No OIDs are kept. Every map is sorted by
 * name, so a catalog renders the same way on every run.
 *
 * @param schemas the schemas the set created besides its default schema: each name (unquoted) to
 *     the name as SQL writes it; often empty
 * @param tables the ordinary and partitioned tables by name, the Flyway history table excluded
 * @param sequences the sequences by name, except those PostgreSQL makes for identity columns
 */
public record Catalog(
    SortedMap<String, String> schemas,
    SortedMap<String, Table> tables,
    SortedMap<String, Sequence> sequences) {

  /** Copies every collection, so a catalog is immutable. */
  public Catalog {
    schemas = Collections.unmodifiableSortedMap(new TreeMap<>(schemas));
    tables = Collections.unmodifiableSortedMap(new TreeMap<>(tables));
    sequences = Collections.unmodifiableSortedMap(new TreeMap<>(sequences));
  }

  /**
   * The catalog of an empty migration set.
   *
   * @return a catalog with no objects
   */
  public static Catalog empty() {
    return new Catalog(new TreeMap<>(), new TreeMap<>(), new TreeMap<>());
  }

  /**
   * A table and what belongs to it.
   *
   * @param name the normalised name, e.g. {@code tasks} or {@code audit.log}
   * @param sqlName the name as SQL writes it, quoted where PostgreSQL's {@code quote_ident} quotes
   * @param columns the columns in their physical order ({@code attnum}), dropped ones left out
   * @param constraints primary key, unique, foreign key, check and exclusion constraints by name
   * @param indexes the indexes by name, except those that back a constraint
   */
  public record Table(
      String name,
      String sqlName,
      List<Column> columns,
      SortedMap<String, Constraint> constraints,
      SortedMap<String, Index> indexes) {

    /** Copies every collection. */
    public Table {
      columns = List.copyOf(columns);
      constraints = Collections.unmodifiableSortedMap(new TreeMap<>(constraints));
      indexes = Collections.unmodifiableSortedMap(new TreeMap<>(indexes));
    }

    /**
     * A column by name.
     *
     * @param columnName the column's name, unquoted
     * @return the column, or empty when the table has none of that name
     */
    public Optional<Column> column(String columnName) {
      return columns.stream().filter(c -> c.name().equals(columnName)).findFirst();
    }

    /**
     * The columns by name.
     *
     * @return a map from name to column, in the columns' physical order
     */
    public Map<String, Column> columnsByName() {
      Map<String, Column> byName = new LinkedHashMap<>();
      columns.forEach(c -> byName.put(c.name(), c));
      return byName;
    }
  }

  /**
   * A column.
   *
   * @param name the name, unquoted
   * @param sqlName the name as SQL writes it
   * @param type the type as {@code format_type} prints it, e.g. {@code character varying(20)}
   * @param collation the collation as SQL writes it when it differs from the type's default, else
   *     null
   * @param notNull whether the column is {@code NOT NULL}
   * @param defaultExpression the default expression, e.g. {@code 0}, or null when there is none
   * @param identity {@code ALWAYS} or {@code BY DEFAULT} for an identity column, else null
   * @param generatedExpression the expression of a stored generated column, else null
   */
  public record Column(
      String name,
      String sqlName,
      String type,
      String collation,
      boolean notNull,
      String defaultExpression,
      String identity,
      String generatedExpression) {

    /**
     * The column's definition as SQL writes it after the column name, e.g. {@code text DEFAULT
     * ''::text NOT NULL}.
     *
     * @return the type, collation, default or generation and {@code NOT NULL}
     */
    public String definition() {
      StringBuilder sql = new StringBuilder(type);
      if (collation != null) {
        sql.append(" COLLATE ").append(collation);
      }
      if (defaultExpression != null) {
        sql.append(" DEFAULT ").append(defaultExpression);
      }
      if (identity != null) {
        sql.append(" GENERATED ").append(identity).append(" AS IDENTITY");
      }
      if (generatedExpression != null) {
        sql.append(" GENERATED ALWAYS AS (").append(generatedExpression).append(") STORED");
      }
      if (notNull) {
        sql.append(" NOT NULL");
      }
      return sql.toString();
    }
  }

  /** The kinds of table constraint that are compared. */
  public enum ConstraintKind {
    /** {@code PRIMARY KEY}. */
    PRIMARY_KEY,
    /** {@code UNIQUE}. */
    UNIQUE,
    /** {@code FOREIGN KEY}. */
    FOREIGN_KEY,
    /** {@code CHECK}. */
    CHECK,
    /** {@code EXCLUDE}. */
    EXCLUSION;

    /**
     * Whether adding the constraint to a table that has rows fails on duplicate values.
     *
     * @return true for primary key, unique and exclusion constraints
     */
    public boolean isUniqueKey() {
      return this == PRIMARY_KEY || this == UNIQUE || this == EXCLUSION;
    }
  }

  /**
   * A table constraint.
   *
   * @param name the name, unquoted
   * @param sqlName the name as SQL writes it
   * @param kind what kind of constraint it is
   * @param definition as {@code pg_get_constraintdef} prints it, e.g. {@code PRIMARY KEY (seq)};
   *     ends with {@code NOT VALID} when the constraint was added without validating the rows
   * @param referencedTable for a foreign key, the normalised name of the table it references, else
   *     null
   * @param columns the names of the table's columns it constrains ({@code conkey}), in key order;
   *     empty for a check constraint on an expression only
   */
  public record Constraint(
      String name,
      String sqlName,
      ConstraintKind kind,
      String definition,
      String referencedTable,
      List<String> columns) {

    /** Copies the column list. */
    public Constraint {
      columns = List.copyOf(columns);
    }

    /**
     * Whether the rows were checked when the constraint was made.
     *
     * @return false for a constraint added {@code NOT VALID} and not validated since
     */
    public boolean validated() {
      return !definition.endsWith(" NOT VALID");
    }
  }

  /**
   * An index that backs no constraint.
   *
   * @param name the name, unquoted
   * @param sqlName the name as SQL writes it, qualified when the index is not in the default schema
   * @param definition the statement that makes it, as {@code pg_get_indexdef} prints it
   * @param shape the part of the definition after the table: unique or not, method, keys and
   *     predicate, e.g. {@code UNIQUE btree (entry, tier, digest, promoter)}
   * @param unique whether it is a unique index
   * @param keyColumns the names of its key columns in order, {@code INCLUDE} columns left out;
   *     empty when a key is an expression
   * @param partial whether it has a predicate ({@code WHERE})
   * @param builtConcurrently whether the migrations built it with {@code CREATE INDEX
   *     CONCURRENTLY}: such a build flips {@code pg_index.indisready} and {@code indisvalid} in
   *     transactions after the one that created the index, so its {@code pg_index} row is newer
   *     than its {@code pg_class} row; a plain {@code CREATE INDEX} writes both in one transaction.
   *     (A later {@code ALTER TABLE ... CLUSTER ON} the index reads as concurrent too.) Not part of
   *     the comparison: two indexes with the same definition built either way are the same index.
   */
  public record Index(
      String name,
      String sqlName,
      String definition,
      String shape,
      boolean unique,
      List<String> keyColumns,
      boolean partial,
      boolean builtConcurrently) {

    /** Copies the column list. */
    public Index {
      keyColumns = List.copyOf(keyColumns);
    }

    /**
     * Whether two indexes are the same index, however each was built.
     *
     * @param other the other index, not null
     * @return true when the definitions are equal
     */
    public boolean sameAs(Index other) {
      return definition.equals(other.definition);
    }
  }

  /**
   * A sequence.
   *
   * @param name the normalised name, e.g. {@code events_seq_seq}
   * @param sqlName the name as SQL writes it
   * @param dataType {@code smallint}, {@code integer} or {@code bigint}
   * @param start the start value
   * @param increment the increment
   * @param min the minimum value
   * @param max the maximum value
   * @param cache how many values are cached
   * @param cycle whether it wraps around
   * @param ownedByTable the normalised name of the table whose column owns it ({@code OWNED BY}),
   *     or null
   * @param ownedByColumn that column's name, unquoted, or null
   * @param ownedBySql {@code table.column} as SQL writes it, or null
   */
  public record Sequence(
      String name,
      String sqlName,
      String dataType,
      long start,
      long increment,
      long min,
      long max,
      long cache,
      boolean cycle,
      String ownedByTable,
      String ownedByColumn,
      String ownedBySql) {

    /**
     * The sequence's options as SQL writes them, e.g. {@code AS bigint START WITH 1 INCREMENT BY 1
     * MINVALUE 1 MAXVALUE 9223372036854775807 CACHE 1 NO CYCLE}.
     *
     * @return every option, spelled out
     */
    public String options() {
      return "AS "
          + dataType
          + " START WITH "
          + start
          + " INCREMENT BY "
          + increment
          + " MINVALUE "
          + min
          + " MAXVALUE "
          + max
          + " CACHE "
          + cache
          + (cycle ? " CYCLE" : " NO CYCLE");
    }

    /**
     * Whether the sequence's options (not its owner) are the same as another's.
     *
     * @param other the other sequence, not null
     * @return true when {@link #options()} are equal
     */
    public boolean sameOptions(Sequence other) {
      return options().equals(other.options());
    }
  }
}

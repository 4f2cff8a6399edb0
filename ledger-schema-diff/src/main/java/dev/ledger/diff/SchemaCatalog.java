package dev.ledger.diff;

import dev.ledger.diff.Change.Kind;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

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
 * @param items every other object (types, functions, views, triggers, policies, comments, grants,
 *     ...) by {@link Item#key()}
 */
public record SchemaCatalog(
    SortedMap<String, String> schemas,
    SortedMap<String, Table> tables,
    SortedMap<String, Sequence> sequences,
    SortedMap<String, Item> items) {

  /**
   * The placeholder that stands for the set's default schema wherever its name would appear in a
   * definition (a schema named {@code ${flyway:defaultSchema}_audit}, a default holding the name):
   * Flyway fills it in when the script runs as a migration.
   */
  public static final String DEFAULT_SCHEMA_PLACEHOLDER = "${flyway:defaultSchema}";

  /** Copies every collection, so a catalog is immutable. */
  public SchemaCatalog {
    schemas = Collections.unmodifiableSortedMap(new TreeMap<>(schemas));
    tables = Collections.unmodifiableSortedMap(new TreeMap<>(tables));
    sequences = Collections.unmodifiableSortedMap(new TreeMap<>(sequences));
    items = Collections.unmodifiableSortedMap(new TreeMap<>(items));
  }

  /**
   * The catalog of an empty migration set.
   *
   * @return a catalog with no objects
   */
  public static SchemaCatalog empty() {
    return new SchemaCatalog(new TreeMap<>(), new TreeMap<>(), new TreeMap<>(), new TreeMap<>());
  }

  /**
   * An object other than a schema, table, column, constraint, index or sequence, with the
   * statements that make and remove it. Read by {@link ItemReader}, compared by {@link ItemDiffer}.
   *
   * @param kind what it is
   * @param name the normalised name, e.g. {@code active_tasks}, {@code touch(integer)}, {@code
   *     audit on tasks}, {@code column tasks.title}
   * @param table the normalised name of the table it belongs to (a trigger's, a policy's), or null
   * @param definition what is compared: two items with equal definitions are the same object
   * @param create the statements that make it, each ending with {@code ;}
   * @param drop the statements that remove it, each ending with {@code ;}
   * @param early whether tables may use it (created before tables, dropped after them); else it is
   *     created after the tables and dropped before any table changes
   * @param replaceable whether {@code create} alone turns any earlier definition into this one
   *     ({@code CREATE OR REPLACE FUNCTION}, {@code COMMENT ON}, a restated {@code GRANT})
   * @param labels an enum's labels in order; a domain's parts ({@link DomainChange}); a table
   *     storage's ({@link TableStorage}); a composite type's SQL name and attributes ({@link
   *     CompositeChange}); a function's or procedure's result and parameters ({@code returns TYPE},
   *     {@code (ARGUMENTS)}, {@code signature NAME(TYPES)}); empty for other kinds
   * @param requires the keys of the items it depends on ({@code pg_depend})
   * @param uses the {@code table.column} names (or {@code table} for a whole row) it depends on
   * @param refusal why the tool cannot migrate it, or null
   */
  public record Item(
      Kind kind,
      String name,
      String table,
      String definition,
      List<String> create,
      List<String> drop,
      boolean early,
      boolean replaceable,
      List<String> labels,
      SortedSet<String> requires,
      SortedSet<String> uses,
      String refusal) {

    /** Copies every collection. */
    public Item {
      create = List.copyOf(create);
      drop = List.copyOf(drop);
      labels = List.copyOf(labels);
      requires = Collections.unmodifiableSortedSet(new TreeSet<>(requires));
      uses = Collections.unmodifiableSortedSet(new TreeSet<>(uses));
    }

    /**
     * The item's key in {@link SchemaCatalog#items()}.
     *
     * @return e.g. {@code view active_tasks}
     */
    public String key() {
      return kind.label() + " " + name;
    }

    /**
     * Whether two items are the same object: same kind, name and definition (dependencies and
     * statements follow from those).
     *
     * @param other the other item, not null
     * @return true when they are the same
     */
    public boolean sameAs(Item other) {
      return kind == other.kind && name.equals(other.name) && definition.equals(other.definition);
    }
  }

  /**
   * A table and what belongs to it.
   *
   * @param name the normalised name, e.g. {@code tasks} or {@code audit.log}
   * @param sqlName the name as SQL writes it, quoted where PostgreSQL's {@code quote_ident} quotes
   * @param columns the columns in their physical order ({@code attnum}), dropped ones left out
   * @param constraints primary key, unique, foreign key, check and exclusion constraints by name
   * @param indexes the indexes by name, except those that back a constraint
   * @param partitionKey for a partitioned table, its key as {@code pg_get_partkeydef} prints it,
   *     e.g. {@code RANGE (at)}; else null
   * @param parents the normalised names of the tables it inherits from or is a partition of, in
   *     order; empty for most tables
   * @param parentsSql those names as SQL writes them
   * @param partitionBound for a partition, its bound, e.g. {@code FOR VALUES FROM (0) TO (10)};
   *     else null
   */
  public record Table(
      String name,
      String sqlName,
      List<Column> columns,
      SortedMap<String, Constraint> constraints,
      SortedMap<String, Index> indexes,
      String partitionKey,
      List<String> parents,
      List<String> parentsSql,
      String partitionBound) {

    /** Copies every collection. */
    public Table {
      parents = List.copyOf(parents);
      parentsSql = List.copyOf(parentsSql);
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

    /**
     * Whether it is a partition of a partitioned table.
     *
     * @return true when it has a partition bound
     */
    public boolean isPartition() {
      return partitionBound != null;
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
   * @param identityOptions for an identity column, the options of its sequence that differ from the
   *     defaults, e.g. {@code START WITH 100 INCREMENT BY 10} (empty when none does); else null
   * @param identitySequence for an identity column, its sequence's options (name and owner left
   *     empty); else null
   * @param inherited whether the column only comes from a parent table ({@code NOT attislocal}):
   *     the parent's {@code ADD} and {@code DROP COLUMN} make and remove it
   * @param volatileDefault whether the default calls a function the scratch server marks volatile
   *     ({@code pg_proc.provolatile = 'v'}, e.g. {@code gen_random_uuid()}, {@code
   *     clock_timestamp()}, {@code nextval()}): adding such a column rewrites the table
   */
  public record Column(
      String name,
      String sqlName,
      String type,
      String collation,
      boolean notNull,
      String defaultExpression,
      String identity,
      String generatedExpression,
      String identityOptions,
      Sequence identitySequence,
      boolean inherited,
      boolean volatileDefault) {

    /**
     * The same column, inherited or not.
     *
     * @param fromParent whether it only comes from a parent
     * @return a copy
     */
    Column withInheritance(boolean fromParent) {
      return new Column(
          name,
          sqlName,
          type,
          collation,
          notNull,
          defaultExpression,
          identity,
          generatedExpression,
          identityOptions,
          identitySequence,
          fromParent,
          volatileDefault);
    }

    /**
     * The same column with another generation expression and default.
     *
     * @param expression the expression, or null
     * @param defaultValue the default, or null
     * @return a copy
     */
    Column withGeneration(String expression, String defaultValue) {
      return new Column(
          name,
          sqlName,
          type,
          collation,
          notNull,
          defaultValue,
          identity,
          expression,
          identityOptions,
          identitySequence,
          inherited,
          defaultValue != null && defaultValue.equals(defaultExpression) && volatileDefault);
    }

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
        if (identityOptions != null && !identityOptions.isEmpty()) {
          sql.append(" (").append(identityOptions).append(')');
        }
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
   * @param inherited whether it only comes from a parent table (a partition's copy of the parent's
   *     key, a child's inherited check): the parent's statements make and remove it
   */
  public record Constraint(
      String name,
      String sqlName,
      ConstraintKind kind,
      String definition,
      String referencedTable,
      List<String> columns,
      boolean inherited) {

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
   * @param inherited whether it is a partition's index attached to an index of the partitioned
   *     parent, made and removed with the parent's
   * @param parent for an attached index, the name of the parent's index it is attached to (on the
   *     partition's parent table, in the same schema); else null
   */
  public record Index(
      String name,
      String sqlName,
      String definition,
      String shape,
      boolean unique,
      List<String> keyColumns,
      boolean partial,
      boolean builtConcurrently,
      boolean inherited,
      String parent) {

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
      return definition.equals(other.definition) && inherited == other.inherited;
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

    /**
     * The options that differ from what {@code GENERATED ... AS IDENTITY} gives a column of the
     * sequence's type, e.g. {@code START WITH 100 INCREMENT BY 10}.
     *
     * @return the options, empty when every one is the default
     */
    public String nonDefaultOptions() {
      long typeMax =
          switch (dataType) {
            case "smallint" -> Short.MAX_VALUE;
            case "integer" -> Integer.MAX_VALUE;
            default -> Long.MAX_VALUE;
          };
      long typeMin =
          switch (dataType) {
            case "smallint" -> Short.MIN_VALUE;
            case "integer" -> Integer.MIN_VALUE;
            default -> Long.MIN_VALUE;
          };
      long defaultMin = increment > 0 ? 1 : typeMin;
      long defaultMax = increment > 0 ? typeMax : -1;
      List<String> parts = new java.util.ArrayList<>();
      if (start != (increment > 0 ? min : max)) {
        parts.add("START WITH " + start);
      }
      if (increment != 1) {
        parts.add("INCREMENT BY " + increment);
      }
      if (min != defaultMin) {
        parts.add("MINVALUE " + min);
      }
      if (max != defaultMax) {
        parts.add("MAXVALUE " + max);
      }
      if (cache != 1) {
        parts.add("CACHE " + cache);
      }
      if (cycle) {
        parts.add("CYCLE");
      }
      return String.join(" ", parts);
    }
  }
}

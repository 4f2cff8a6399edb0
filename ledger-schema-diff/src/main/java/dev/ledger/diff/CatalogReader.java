package dev.ledger.diff;

import dev.ledger.diff.SchemaCatalog.Column;
import dev.ledger.diff.SchemaCatalog.Constraint;
import dev.ledger.diff.SchemaCatalog.ConstraintKind;
import dev.ledger.diff.SchemaCatalog.Index;
import dev.ledger.diff.SchemaCatalog.Sequence;
import dev.ledger.diff.SchemaCatalog.Table;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads a {@link SchemaCatalog} from PostgreSQL's {@code pg_catalog}, with bind values only.
 *
 * <p>The search path is set to the default schema first, so that {@code format_type}, {@code
 * pg_get_expr}, {@code pg_get_constraintdef} and {@code pg_get_indexdef} leave the objects of that
 * schema unqualified, whatever it is called, and qualify everything else.
 */
final class CatalogReader {

  private static final String TABLES =
      """
      SELECT n.nspname, c.relname, quote_ident(n.nspname), quote_ident(c.relname),
             CASE WHEN c.relkind = 'p' THEN pg_get_partkeydef(c.oid) END,
             CASE WHEN c.relispartition THEN pg_get_expr(c.relpartbound, c.oid, true) END,
             ARRAY(SELECT pn.nspname || '.' || p.relname
                     FROM pg_inherits i
                     JOIN pg_class p ON p.oid = i.inhparent
                     JOIN pg_namespace pn ON pn.oid = p.relnamespace
                    WHERE i.inhrelid = c.oid ORDER BY i.inhseqno),
             ARRAY(SELECT quote_ident(pn.nspname) || '.' || quote_ident(p.relname)
                     FROM pg_inherits i
                     JOIN pg_class p ON p.oid = i.inhparent
                     JOIN pg_namespace pn ON pn.oid = p.relnamespace
                    WHERE i.inhrelid = c.oid ORDER BY i.inhseqno),
             ARRAY(SELECT pn.nspname FROM pg_inherits i
                     JOIN pg_class p ON p.oid = i.inhparent
                     JOIN pg_namespace pn ON pn.oid = p.relnamespace
                    WHERE i.inhrelid = c.oid ORDER BY i.inhseqno),
             ARRAY(SELECT p.relname FROM pg_inherits i
                     JOIN pg_class p ON p.oid = i.inhparent
                    WHERE i.inhrelid = c.oid ORDER BY i.inhseqno),
             ARRAY(SELECT quote_ident(p.relname) FROM pg_inherits i
                     JOIN pg_class p ON p.oid = i.inhparent
                    WHERE i.inhrelid = c.oid ORDER BY i.inhseqno)
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = ANY (?) AND c.relkind IN ('r', 'p')
         AND NOT (n.nspname = ? AND c.relname = ?)
       ORDER BY 1, 2
      """;

  private static final String SCHEMAS =
      """
      SELECT n.nspname, quote_ident(n.nspname)
        FROM pg_namespace n
       WHERE n.nspname = ANY (?) AND n.nspname <> ?
       ORDER BY 1
      """;

  private static final String COLUMNS =
      """
      SELECT n.nspname, c.relname, a.attname, quote_ident(a.attname),
             format_type(a.atttypid, a.atttypmod), a.attnotnull,
             CASE WHEN a.attgenerated = '' THEN pg_get_expr(d.adbin, d.adrelid, true) END,
             CASE a.attidentity WHEN 'a' THEN 'ALWAYS' WHEN 'd' THEN 'BY DEFAULT' END,
             CASE WHEN a.attgenerated <> '' THEN pg_get_expr(d.adbin, d.adrelid, true) END,
             CASE WHEN a.attcollation <> t.typcollation THEN
               CASE WHEN cn.nspname IN ('pg_catalog', ?) THEN quote_ident(co.collname)
                    ELSE quote_ident(cn.nspname) || '.' || quote_ident(co.collname) END
             END,
             a.attislocal, format_type(sq.seqtypid, NULL), sq.seqstart, sq.seqincrement,
             sq.seqmin, sq.seqmax, sq.seqcache, sq.seqcycle,
             a.attgenerated = '' AND EXISTS (
               SELECT 1
                 FROM regexp_matches(d.adbin::text, ':(?:funcid|opfuncid) ([0-9]+)', 'g') f(m)
                 JOIN pg_proc p ON p.oid = f.m[1]::oid
                WHERE p.provolatile = 'v')
        FROM pg_attribute a
        JOIN pg_class c ON c.oid = a.attrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_type t ON t.oid = a.atttypid
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        LEFT JOIN pg_collation co ON co.oid = a.attcollation
        LEFT JOIN pg_namespace cn ON cn.oid = co.collnamespace
        LEFT JOIN LATERAL (
             SELECT s.* FROM pg_depend dep JOIN pg_sequence s ON s.seqrelid = dep.objid
              WHERE dep.classid = 'pg_class'::regclass AND dep.refclassid = 'pg_class'::regclass
                AND dep.refobjid = a.attrelid AND dep.refobjsubid = a.attnum AND dep.deptype = 'i'
              LIMIT 1
        ) sq ON a.attidentity <> ''
       WHERE n.nspname = ANY (?) AND c.relkind IN ('r', 'p')
         AND a.attnum > 0 AND NOT a.attisdropped
       ORDER BY n.nspname, c.relname, a.attnum
      """;

  private static final String CONSTRAINTS =
      """
      SELECT n.nspname, c.relname, con.conname, quote_ident(con.conname), con.contype,
             pg_get_constraintdef(con.oid, true), rn.nspname, r.relname,
             ARRAY(SELECT a.attname
                     FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
                     JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
                    ORDER BY k.ord),
             NOT con.conislocal OR con.conparentid <> 0
        FROM pg_constraint con
        JOIN pg_class c ON c.oid = con.conrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN pg_class r ON r.oid = con.confrelid
        LEFT JOIN pg_namespace rn ON rn.oid = r.relnamespace
       WHERE n.nspname = ANY (?) AND c.relkind IN ('r', 'p')
         AND con.contype IN ('p', 'u', 'f', 'c', 'x')
       ORDER BY 1, 2, 3
      """;

  // Built CONCURRENTLY: the pg_index row is newer (smaller age) than the index's pg_class row; see
  // SchemaCatalog.Index#builtConcurrently. A rename makes the pg_class row the newer one instead.
  private static final String INDEXES =
      """
      SELECT n.nspname, t.relname, ic.relname,
             quote_ident(n.nspname) || '.' || quote_ident(ic.relname), quote_ident(ic.relname),
             pg_get_indexdef(i.indexrelid, 0, true), am.amname, i.indisunique,
             age(i.xmin) < age(ic.xmin),
             ARRAY(SELECT a.attname
                     FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
                     LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                    WHERE k.ord <= i.indnkeyatts
                    ORDER BY k.ord),
             i.indpred IS NOT NULL,
             EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhrelid = i.indexrelid),
             (SELECT p.relname FROM pg_inherits h JOIN pg_class p ON p.oid = h.inhparent
               WHERE h.inhrelid = i.indexrelid)
        FROM pg_index i
        JOIN pg_class ic ON ic.oid = i.indexrelid
        JOIN pg_class t ON t.oid = i.indrelid
        JOIN pg_namespace n ON n.oid = t.relnamespace
        JOIN pg_am am ON am.oid = ic.relam
       WHERE n.nspname = ANY (?) AND t.relkind IN ('r', 'p')
         AND NOT (n.nspname = ? AND t.relname = ?)
         AND NOT EXISTS (SELECT 1 FROM pg_constraint con
                          WHERE con.conindid = i.indexrelid AND con.conrelid = i.indrelid
                            AND con.contype IN ('p', 'u', 'x'))
       ORDER BY 1, 2, 3
      """;

  private static final String SEQUENCES =
      """
      SELECT n.nspname, c.relname, quote_ident(n.nspname), quote_ident(c.relname),
             format_type(s.seqtypid, NULL), s.seqstart, s.seqincrement, s.seqmin, s.seqmax,
             s.seqcache, s.seqcycle,
             own.nspname, own.relname, own.attname,
             quote_ident(own.nspname), quote_ident(own.relname), quote_ident(own.attname)
        FROM pg_sequence s
        JOIN pg_class c ON c.oid = s.seqrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN LATERAL (
             SELECT tn.nspname, t.relname, a.attname, d.deptype
               FROM pg_depend d
               JOIN pg_class t ON t.oid = d.refobjid
               JOIN pg_namespace tn ON tn.oid = t.relnamespace
               JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
              WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
        ) own ON true
       WHERE n.nspname = ANY (?) AND own.deptype IS DISTINCT FROM 'i'
       ORDER BY 1, 2
      """;

  private final Connection connection;
  private final String defaultSchema;
  private final List<String> schemas;
  private final String historyTable;

  /**
   * A reader over one connection.
   *
   * @param connection an open connection; its search path is changed
   * @param defaultSchema the schema whose objects are named without a schema
   * @param otherSchemas further schemas to read, whose objects are named {@code schema.name}
   * @param historyTable the Flyway history table in the default schema, left out
   */
  CatalogReader(
      Connection connection, String defaultSchema, List<String> otherSchemas, String historyTable) {
    this.connection = connection;
    this.defaultSchema = defaultSchema;
    this.schemas = new ArrayList<>(otherSchemas);
    this.schemas.add(0, defaultSchema);
    this.historyTable = historyTable;
  }

  /**
   * Reads the catalog.
   *
   * @return the objects of the schemas, names normalised
   * @throws SQLException when a query fails
   */
  SchemaCatalog read() throws SQLException {
    try (PreparedStatement s =
        connection.prepareStatement("SELECT set_config('search_path', ?, false)")) {
      s.setString(1, Sql.quoteIdentifier(defaultSchema));
      s.execute();
    }
    Map<String, TableBuilder> tables = new LinkedHashMap<>();
    query(
        TABLES,
        true,
        r -> {
          String name = name(r.getString(1), r.getString(2));
          TableBuilder table =
              new TableBuilder(name, sqlName(r.getString(1), r.getString(3), r.getString(4)));
          table.partitionKey = norm(r.getString(5));
          table.partitionBound = norm(r.getString(6));
          List<String> parentSchemas = names(r.getArray(9));
          List<String> parentNames = names(r.getArray(10));
          List<String> parentQuoted = names(r.getArray(11));
          List<String> parentQuotedFull = names(r.getArray(8));
          for (int i = 0; i < parentNames.size(); i++) {
            String schema = parentSchemas.get(i);
            table.parents.add(name(schema, parentNames.get(i)));
            table.parentsSql.add(
                schema.equals(defaultSchema) ? parentQuoted.get(i) : norm(parentQuotedFull.get(i)));
          }
          tables.put(name, table);
        });
    query(
        COLUMNS,
        false,
        r -> {
          TableBuilder table = tables.get(name(r.getString(1), r.getString(2)));
          if (table != null) {
            Sequence identity = null;
            if (r.getString(8) != null && r.getString(12) != null) {
              identity =
                  new Sequence(
                      "",
                      "",
                      r.getString(12),
                      r.getLong(13),
                      r.getLong(14),
                      r.getLong(15),
                      r.getLong(16),
                      r.getLong(17),
                      r.getBoolean(18),
                      null,
                      null,
                      null);
            }
            table.columns.add(
                new Column(
                    r.getString(3),
                    r.getString(4),
                    norm(r.getString(5)),
                    norm(r.getString(10)),
                    r.getBoolean(6),
                    norm(r.getString(7)),
                    r.getString(8),
                    norm(r.getString(9)),
                    identity == null ? null : identity.nonDefaultOptions(),
                    identity,
                    !r.getBoolean(11),
                    r.getBoolean(19)));
          }
        });
    query(
        CONSTRAINTS,
        false,
        r -> {
          TableBuilder table = tables.get(name(r.getString(1), r.getString(2)));
          if (table != null) {
            String referenced =
                r.getString(8) == null ? null : name(r.getString(7), r.getString(8));
            table.constraints.put(
                r.getString(3),
                new Constraint(
                    r.getString(3),
                    r.getString(4),
                    kind(r.getString(5)),
                    norm(r.getString(6)),
                    referenced,
                    names(r.getArray(9)),
                    r.getBoolean(10)));
          }
        });
    query(
        INDEXES,
        true,
        r -> {
          TableBuilder table = tables.get(name(r.getString(1), r.getString(2)));
          if (table != null) {
            String definition = norm(r.getString(6));
            String sqlName =
                r.getString(1).equals(defaultSchema) ? r.getString(5) : norm(r.getString(4));
            table.indexes.put(
                r.getString(3),
                new Index(
                    r.getString(3),
                    sqlName,
                    definition,
                    shape(definition, r.getString(7), r.getBoolean(8)),
                    r.getBoolean(8),
                    names(r.getArray(10)),
                    r.getBoolean(11),
                    r.getBoolean(9),
                    r.getBoolean(12),
                    r.getString(13)));
          }
        });
    Map<String, Sequence> sequences = new TreeMap<>();
    query(
        SEQUENCES,
        false,
        r -> {
          String name = name(r.getString(1), r.getString(2));
          boolean owned = r.getString(13) != null;
          sequences.put(
              name,
              new Sequence(
                  name,
                  sqlName(r.getString(1), r.getString(3), r.getString(4)),
                  norm(r.getString(5)),
                  r.getLong(6),
                  r.getLong(7),
                  r.getLong(8),
                  r.getLong(9),
                  r.getLong(10),
                  r.getBoolean(11),
                  owned ? name(r.getString(12), r.getString(13)) : null,
                  owned ? r.getString(14) : null,
                  owned
                      ? norm(sqlName(r.getString(12), r.getString(15), r.getString(16)))
                          + "."
                          + r.getString(17)
                      : null));
        });
    Map<String, String> otherSchemas = new TreeMap<>();
    try (PreparedStatement s = connection.prepareStatement(SCHEMAS)) {
      Array names = connection.createArrayOf("text", schemas.toArray());
      s.setArray(1, names);
      s.setString(2, defaultSchema);
      try (ResultSet r = s.executeQuery()) {
        while (r.next()) {
          otherSchemas.put(norm(r.getString(1)), norm(r.getString(2)));
        }
      }
      names.free();
    }
    Map<String, Table> built = new TreeMap<>();
    tables.forEach((name, b) -> built.put(name, b.build()));
    Map<String, SchemaCatalog.Item> items = new ItemReader(connection, this, schemas).read();
    return new SchemaCatalog(
        new TreeMap<>(otherSchemas),
        new TreeMap<>(built),
        new TreeMap<>(sequences),
        new TreeMap<>(items));
  }

  /**
   * A definition with the default schema's name taken out: {@code scratch.x} becomes {@code x}, and
   * any other occurrence (a schema named after it, a literal holding it) becomes {@link
   * SchemaCatalog#DEFAULT_SCHEMA_PLACEHOLDER}, so that the same set applied to two scratch schemas
   * reads the same.
   *
   * @param text the text, may be null
   * @return the normalised text, null for null
   */
  String norm(String text) {
    if (text == null) {
      return null;
    }
    String quoted = Sql.quoteIdentifier(defaultSchema);
    return text.replace(quoted + ".", "")
        .replace(defaultSchema + ".", "")
        .replace(quoted, SchemaCatalog.DEFAULT_SCHEMA_PLACEHOLDER)
        .replace(defaultSchema, SchemaCatalog.DEFAULT_SCHEMA_PLACEHOLDER);
  }

  /** The schema whose objects are named without a schema. */
  String defaultSchema() {
    return defaultSchema;
  }

  String name(String schema, String relation) {
    return schema.equals(defaultSchema) ? relation : norm(schema) + "." + relation;
  }

  String sqlName(String schema, String quotedSchema, String quotedRelation) {
    return schema.equals(defaultSchema)
        ? quotedRelation
        : norm(quotedSchema) + "." + quotedRelation;
  }

  /**
   * The part of an index definition after {@code ON table}: {@code CREATE UNIQUE INDEX x ON t USING
   * btree (a) WHERE ...} becomes {@code UNIQUE btree (a) WHERE ...}.
   */
  private static String shape(String definition, String method, boolean unique) {
    String marker = " USING " + method + " ";
    int at = definition.indexOf(marker);
    String rest = at < 0 ? definition : definition.substring(at + " USING ".length());
    return unique ? "UNIQUE " + rest : rest;
  }

  /** The names of a text array; empty when any is null (a key that is an expression). */
  static List<String> names(Array array) throws SQLException {
    Object[] values = (Object[]) array.getArray();
    List<String> names = new ArrayList<>();
    for (Object value : values) {
      if (value == null) {
        return List.of();
      }
      names.add((String) value);
    }
    array.free();
    return names;
  }

  private static ConstraintKind kind(String contype) {
    return switch (contype) {
      case "p" -> ConstraintKind.PRIMARY_KEY;
      case "u" -> ConstraintKind.UNIQUE;
      case "f" -> ConstraintKind.FOREIGN_KEY;
      case "c" -> ConstraintKind.CHECK;
      case "x" -> ConstraintKind.EXCLUSION;
      default -> throw new IllegalStateException("constraint type not read: " + contype);
    };
  }

  private interface RowHandler {
    void row(ResultSet r) throws SQLException;
  }

  private void query(String sql, boolean excludesHistory, RowHandler handler) throws SQLException {
    try (PreparedStatement s = connection.prepareStatement(sql)) {
      Array names = connection.createArrayOf("text", schemas.toArray());
      int first = 1;
      if (sql == COLUMNS) {
        s.setString(1, defaultSchema);
        first = 2;
      }
      s.setArray(first, names);
      if (excludesHistory) {
        s.setString(2, defaultSchema);
        s.setString(3, historyTable);
      }
      try (ResultSet r = s.executeQuery()) {
        while (r.next()) {
          handler.row(r);
        }
      }
      names.free();
    }
  }

  private static final class TableBuilder {
    final String name;
    final String sqlName;
    final List<Column> columns = new ArrayList<>();
    final Map<String, Constraint> constraints = new TreeMap<>();
    final Map<String, Index> indexes = new TreeMap<>();
    final List<String> parents = new ArrayList<>();
    final List<String> parentsSql = new ArrayList<>();
    String partitionKey;
    String partitionBound;

    TableBuilder(String name, String sqlName) {
      this.name = name;
      this.sqlName = sqlName;
    }

    Table build() {
      return new Table(
          name,
          sqlName,
          columns,
          new TreeMap<>(constraints),
          new TreeMap<>(indexes),
          partitionKey,
          parents,
          parentsSql,
          partitionBound);
    }
  }
}

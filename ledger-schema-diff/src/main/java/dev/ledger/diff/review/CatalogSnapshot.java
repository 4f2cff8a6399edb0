package dev.ledger.diff.review;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The objects of a set's schemas by OID at one moment: relations (with {@code relfilenode} and the
 * sequential scans counted in the current transaction), columns, functions, constraints, types and
 * triggers. Two snapshots of one schema compared by key show what a statement renamed, dropped and
 * rewrote, whatever names it used. One query; immutable once read.
 */
final class CatalogSnapshot {

  private static final String INNER =
      """
      WITH ns AS (SELECT oid, nspname FROM pg_namespace
                   WHERE nspname <> ALL (?) AND nspname NOT LIKE 'pg\\_%'
                     AND nspname <> 'information_schema')
      SELECT 'r', c.oid, 0, ns.nspname, c.relname, c.relkind::text, 0::bigint,
             c.relfilenode::bigint, pg_stat_get_xact_numscans(c.oid), 0, NULL
        FROM pg_class c JOIN ns ON ns.oid = c.relnamespace WHERE c.relkind <> 't'
      UNION ALL
      SELECT 'a', a.attrelid, a.attnum, ns.nspname, a.attname, c.relkind::text, a.attrelid::bigint,
             0, 0, a.attinhcount, NULL
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        JOIN ns ON ns.oid = c.relnamespace
       WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
      UNION ALL
      SELECT 'f', p.oid, 0, ns.nspname, p.proname, p.prokind::text, 0, 0, 0, 0,
             pg_get_function_identity_arguments(p.oid)
        FROM pg_proc p JOIN ns ON ns.oid = p.pronamespace
      UNION ALL
      SELECT 'c', k.oid, 0, ns.nspname, k.conname, k.contype::text, k.conrelid::bigint,
             k.conindid::bigint, 0, k.coninhcount, NULL
        FROM pg_constraint k JOIN ns ON ns.oid = k.connamespace WHERE k.conrelid <> 0
      UNION ALL
      SELECT 'y', t.oid, 0, ns.nspname, t.typname, t.typtype::text, 0, 0, 0, 0, NULL
        FROM pg_type t JOIN ns ON ns.oid = t.typnamespace
       WHERE t.typtype IN ('e', 'd')
          OR (t.typtype = 'c' AND (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c')
      UNION ALL
      SELECT 'g', g.oid, 0, ns.nspname, g.tgname, NULL, g.tgrelid::bigint, 0, 0, 0, NULL
        FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN ns ON ns.oid = c.relnamespace
       WHERE NOT g.tgisinternal
      """;

  private static final String QUERY =
      "SELECT o.*, quote_ident(o.nsp), quote_ident(o.nm) FROM (\n"
          + INNER
          + ") o(cat, oid, sub, nsp, nm, kind, owner, filenode, scans, inh, args)";

  /**
   * One object.
   *
   * @param category {@code r} relation, {@code a} column, {@code f} function, {@code c} constraint,
   *     {@code y} type, {@code g} trigger
   * @param oid its OID (a column: its table's)
   * @param sub a column's number, else 0
   * @param schema its schema's name
   * @param name its name
   * @param kind {@code relkind}, {@code prokind}, {@code contype} or {@code typtype}; a column: its
   *     table's {@code relkind}
   * @param owner the table of a column, constraint or trigger, else 0
   * @param filenode a relation's {@code relfilenode}; a constraint's index; else 0
   * @param scans a relation's sequential scans counted so far in this transaction
   * @param inherited a column's or constraint's inheritance count
   * @param args a function's identity arguments, else null
   * @param quotedSchema the schema's name quoted as an identifier when it must be
   * @param quotedName the name quoted as an identifier when it must be
   */
  record Entry(
      char category,
      long oid,
      int sub,
      String schema,
      String name,
      String kind,
      long owner,
      long filenode,
      long scans,
      int inherited,
      String args,
      String quotedSchema,
      String quotedName) {

    /** The key that matches the same object in another snapshot. */
    String key() {
      return category + ":" + oid + ":" + sub;
    }
  }

  private final Map<String, Entry> entries;

  private CatalogSnapshot(Map<String, Entry> entries) {
    this.entries = entries;
  }

  /**
   * Reads the objects of every schema but the given ones, {@code pg_*} and {@code
   * information_schema}.
   *
   * @param c the connection, in the transaction to read in
   * @param otherSchemas the schemas that are not the set's (those that existed before it ran)
   * @return the snapshot
   * @throws SQLException when the query fails
   */
  static CatalogSnapshot read(Connection c, Collection<String> otherSchemas) throws SQLException {
    Map<String, Entry> entries = new LinkedHashMap<>();
    try (PreparedStatement ps = c.prepareStatement(QUERY)) {
      Array names = c.createArrayOf("text", otherSchemas.toArray());
      ps.setArray(1, names);
      try (ResultSet r = ps.executeQuery()) {
        while (r.next()) {
          Entry e =
              new Entry(
                  r.getString(1).charAt(0),
                  r.getLong(2),
                  r.getInt(3),
                  r.getString(4),
                  r.getString(5),
                  r.getString(6),
                  r.getLong(7),
                  r.getLong(8),
                  r.getLong(9),
                  r.getInt(10),
                  r.getString(11),
                  r.getString(12),
                  r.getString(13));
          entries.put(e.key(), e);
        }
      }
    }
    return new CatalogSnapshot(entries);
  }

  /**
   * The sequential scans counted so far in the current transaction on each table and materialized
   * view of the set's schemas.
   *
   * @param c the connection, in the transaction to read in
   * @param otherSchemas the schemas that are not the set's
   * @return scans by relation OID
   * @throws SQLException when the query fails
   */
  static Map<Long, Long> scans(Connection c, Collection<String> otherSchemas) throws SQLException {
    Map<Long, Long> out = new java.util.HashMap<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT c.oid, pg_stat_get_xact_numscans(c.oid) FROM pg_class c"
                + " JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE c.relkind IN ('r', 'm') AND n.nspname <> ALL (?)"
                + " AND n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'")) {
      ps.setArray(1, c.createArrayOf("text", otherSchemas.toArray()));
      try (ResultSet r = ps.executeQuery()) {
        while (r.next()) {
          out.put(r.getLong(1), r.getLong(2));
        }
      }
    }
    return out;
  }

  /**
   * The objects by key.
   *
   * @return an unmodifiable view, in the query's order
   */
  Map<String, Entry> entries() {
    return java.util.Collections.unmodifiableMap(entries);
  }

  /**
   * An object by key.
   *
   * @param key {@link Entry#key()}
   * @return the object, or null
   */
  Entry get(String key) {
    return entries.get(key);
  }

  /**
   * A relation by OID.
   *
   * @param oid the OID
   * @return the relation, or null
   */
  Entry relation(long oid) {
    return entries.get("r:" + oid + ":0");
  }
}

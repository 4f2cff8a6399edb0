package dev.ledger.diff;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The rows PostgreSQL's catalogs hold for the objects of a set's schemas, read without the differ's
 * model ({@link CatalogReader}, {@link SchemaCatalog}): the independent half of the check behind
 * every verdict. Whatever the differ does not model, or models wrongly, still shows here as a row
 * that differs, so the check cannot share the differ's blind spots.
 *
 * <p>Read: {@code pg_namespace}, {@code pg_class} (tables, partitioned tables, indexes, sequences,
 * views, materialized views, composite types; toast tables left out), {@code pg_attribute}, {@code
 * pg_attrdef}, {@code pg_constraint}, {@code pg_index}, {@code pg_inherits} (tables and indexes),
 * {@code pg_trigger} (internal ones left out: their names hold OIDs, and the constraint they
 * enforce is compared), {@code pg_policy}, {@code pg_rewrite}, {@code pg_proc}, {@code pg_type},
 * {@code pg_enum} (labels by position), {@code pg_sequence}, {@code pg_statistic_ext}, {@code
 * pg_extension}, {@code pg_collation}, {@code pg_default_acl}, {@code pg_description} and {@code
 * pg_depend} (as a set of rows, each side named by {@code pg_identify_object}). Every OID is
 * resolved to a qualified name; ACLs are compared as sets against the owner's default; options
 * (reloptions, attoptions, proconfig) as sets; of {@code attoptions} only the options PostgreSQL
 * defines ({@code n_distinct}, {@code n_distinct_inherited}), as a server may keep private,
 * volatile entries there (one PostgreSQL 15 build writes a {@code pg_attver=} counter into every
 * column's). Left out as volatile: OIDs, {@code relfilenode}, statistics ({@code relpages}, {@code
 * reltuples}, {@code relallvisible}), transaction ids, flags PostgreSQL only ever sets ({@code
 * relhasindex}, {@code relhastriggers}, {@code relhasrules}, {@code relhassubclass}), attribute
 * numbers and dropped columns (column order is not compared), {@code atthasmissing} (a column added
 * with a default), {@code indcheckxmin} and the toast table.
 *
 * <p>The name of the default scratch schema is removed from every value ({@code <schema>.t} and
 * {@code "<schema>".t} read {@code t}; elsewhere it reads {@code ${flyway:defaultSchema}}), so two
 * scratch schemas built alike give equal fingerprints. This is the one convention the check shares
 * with the differ's model: an object of the default schema is named without a schema, also in a
 * function's body, as the printed SQL runs with the search path on that schema. Immutable once
 * read.
 */
final class CatalogFingerprint {

  /** At most this many differences are named; the rest are counted. */
  static final int MAX_NAMED = 12;

  private static final String NS =
      "WITH ns AS (SELECT oid FROM pg_namespace WHERE nspname = ANY (?)),\n"
          + "rels AS (SELECT oid FROM pg_class WHERE relnamespace IN (SELECT oid FROM ns)"
          + " AND relkind <> 't')\n";

  private static String acl(String column, String kind, String owner) {
    return "array_to_string(ARRAY(SELECT x::text FROM unnest(coalesce("
        + column
        + ", acldefault('"
        + kind
        + "', "
        + owner
        + "))) x ORDER BY 1), ',')";
  }

  private static String set(String column) {
    return "array_to_string(ARRAY(SELECT x FROM unnest(" + column + ") x ORDER BY 1), ',')";
  }

  private static String rel(String oid) {
    return "(SELECT rn.nspname || '.' || r.relname FROM pg_class r"
        + " JOIN pg_namespace rn ON rn.oid = r.relnamespace WHERE r.oid = "
        + oid
        + ")";
  }

  /** Every object in the schemas, by catalog and OID. */
  private static final String OURS =
      """
      , ours(classid, objid) AS (
        SELECT 'pg_namespace'::regclass::oid, oid FROM ns
        UNION ALL SELECT 'pg_class'::regclass::oid, oid FROM rels
        UNION ALL SELECT 'pg_type'::regclass::oid, oid FROM pg_type
                   WHERE typnamespace IN (SELECT oid FROM ns)
        UNION ALL SELECT 'pg_proc'::regclass::oid, oid FROM pg_proc
                   WHERE pronamespace IN (SELECT oid FROM ns)
        UNION ALL SELECT 'pg_constraint'::regclass::oid, oid FROM pg_constraint
                   WHERE connamespace IN (SELECT oid FROM ns)
        UNION ALL SELECT 'pg_attrdef'::regclass::oid, oid FROM pg_attrdef
                   WHERE adrelid IN (SELECT oid FROM rels)
        UNION ALL SELECT 'pg_trigger'::regclass::oid, oid FROM pg_trigger
                   WHERE tgrelid IN (SELECT oid FROM rels) AND NOT tgisinternal
        UNION ALL SELECT 'pg_policy'::regclass::oid, oid FROM pg_policy
                   WHERE polrelid IN (SELECT oid FROM rels)
        UNION ALL SELECT 'pg_rewrite'::regclass::oid, oid FROM pg_rewrite
                   WHERE ev_class IN (SELECT oid FROM rels)
        UNION ALL SELECT 'pg_collation'::regclass::oid, oid FROM pg_collation
                   WHERE collnamespace IN (SELECT oid FROM ns)
        UNION ALL SELECT 'pg_conversion'::regclass::oid, oid FROM pg_conversion
                   WHERE connamespace IN (SELECT oid FROM ns)
        UNION ALL SELECT 'pg_operator'::regclass::oid, oid FROM pg_operator
                   WHERE oprnamespace IN (SELECT oid FROM ns)
        UNION ALL SELECT 'pg_opclass'::regclass::oid, oid FROM pg_opclass
                   WHERE opcnamespace IN (SELECT oid FROM ns)
        UNION ALL SELECT 'pg_opfamily'::regclass::oid, oid FROM pg_opfamily
                   WHERE opfnamespace IN (SELECT oid FROM ns)
        UNION ALL SELECT 'pg_ts_config'::regclass::oid, oid FROM pg_ts_config
                   WHERE cfgnamespace IN (SELECT oid FROM ns)
        UNION ALL SELECT 'pg_ts_dict'::regclass::oid, oid FROM pg_ts_dict
                   WHERE dictnamespace IN (SELECT oid FROM ns)
        UNION ALL SELECT 'pg_statistic_ext'::regclass::oid, oid FROM pg_statistic_ext
                   WHERE stxnamespace IN (SELECT oid FROM ns)
        UNION ALL SELECT 'pg_extension'::regclass::oid, oid FROM pg_extension
                   WHERE extnamespace IN (SELECT oid FROM ns)
      )
      """;

  private static final String DESCRIPTIONS =
      """
      SELECT 'pg_description', o.type || ' ' || o.identity, d.description
        FROM pg_description d
        CROSS JOIN LATERAL pg_identify_object(d.classoid, d.objoid, d.objsubid) o
       WHERE (d.classoid, d.objoid) IN (SELECT classid, objid FROM ours)
      """;

  // Internal triggers (a foreign key's) are named after their OIDs; the constraint is compared.
  private static final String DEPENDENCIES =
      """
      SELECT DISTINCT 'pg_depend', o.type || ' ' || o.identity || ' -> ' || r.type || ' '
             || r.identity || ' (' || d.deptype::text || ')'
        FROM pg_depend d
        CROSS JOIN LATERAL pg_identify_object(d.classid, d.objid, d.objsubid) o
        CROSS JOIN LATERAL pg_identify_object(d.refclassid, d.refobjid, d.refobjsubid) r
       WHERE ((d.classid, d.objid) IN (SELECT classid, objid FROM ours)
              OR (d.refclassid, d.refobjid) IN (SELECT classid, objid FROM ours))
         AND NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgisinternal
                          AND ((d.classid = 'pg_trigger'::regclass AND t.oid = d.objid)
                            OR (d.refclassid = 'pg_trigger'::regclass AND t.oid = d.refobjid)))
      """;

  /** Each query: the catalog's name, the row's key, then the compared columns. */
  private static final List<String> QUERIES =
      List.of(
          NS
              + "SELECT 'pg_namespace', n.nspname, pg_get_userbyid(n.nspowner) AS owner, "
              + acl("n.nspacl", "n", "n.nspowner")
              + " AS acl FROM pg_namespace n WHERE n.oid IN (SELECT oid FROM ns)",
          NS
              + "SELECT 'pg_class', n.nspname || '.' || c.relname, c.relkind, c.relpersistence,"
              + " am.amname AS access_method, pg_get_userbyid(c.relowner) AS owner,"
              + " ts.spcname AS tablespace, format_type(NULLIF(c.reloftype, 0), NULL) AS of_type,"
              + " c.relrowsecurity, c.relforcerowsecurity, c.relispopulated, c.relreplident,"
              + " c.relispartition, pg_get_expr(c.relpartbound, c.oid, true) AS partition_bound,"
              + " CASE WHEN c.relkind = 'p' THEN pg_get_partkeydef(c.oid) END AS partition_key,"
              + " CASE WHEN c.relkind IN ('v', 'm') THEN pg_get_viewdef(c.oid, true) END"
              + " AS view_definition, "
              + set("c.reloptions")
              + " AS reloptions, "
              + acl("c.relacl", "r", "c.relowner")
              + " AS acl FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
              + " LEFT JOIN pg_am am ON am.oid = c.relam"
              + " LEFT JOIN pg_tablespace ts ON ts.oid = c.reltablespace"
              + " WHERE c.oid IN (SELECT oid FROM rels)",
          NS
              + "SELECT 'pg_attribute', "
              + rel("a.attrelid")
              + " || '.' || a.attname, format_type(a.atttypid, a.atttypmod) AS type,"
              + " a.attnotnull, a.atthasdef, a.attidentity, a.attgenerated, a.attislocal,"
              + " a.attinhcount, co.collname AS collation, a.attstattarget::text AS statistics,"
              + " a.attstorage, a.attcompression, a.attndims, "
              + acl("a.attacl", "c", "c.relowner")
              + " AS acl, "
              + "array_to_string(ARRAY(SELECT x FROM unnest(a.attoptions) x"
              + " WHERE x ~ '^n_distinct(_inherited)?=' ORDER BY 1), ',') AS options FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
              + " LEFT JOIN pg_collation co ON co.oid = a.attcollation"
              + " WHERE a.attrelid IN (SELECT oid FROM rels) AND c.relkind NOT IN ('i', 'I', 'S')"
              + " AND a.attnum > 0 AND NOT a.attisdropped",
          NS
              + "SELECT 'pg_attrdef', "
              + rel("d.adrelid")
              + " || '.' || a.attname, pg_get_expr(d.adbin, d.adrelid, true) AS expression"
              + " FROM pg_attrdef d JOIN pg_attribute a"
              + " ON a.attrelid = d.adrelid AND a.attnum = d.adnum"
              + " WHERE d.adrelid IN (SELECT oid FROM rels)",
          NS
              + "SELECT 'pg_constraint', coalesce("
              + rel("NULLIF(k.conrelid, 0)")
              + ", format_type(NULLIF(k.contypid, 0), NULL), '') || ' ' || k.conname,"
              + " k.contype, k.condeferrable, k.condeferred, k.convalidated,"
              + rel("NULLIF(k.conindid, 0)")
              + " AS index, (SELECT "
              + rel("pk.conrelid")
              + " || ' ' || pk.conname FROM pg_constraint pk WHERE pk.oid = k.conparentid)"
              + " AS parent, "
              + rel("NULLIF(k.confrelid, 0)")
              + " AS referenced, k.confupdtype, k.confdeltype, k.confmatchtype, k.conislocal,"
              + " k.coninhcount, CASE WHEN k.contype = 'c' THEN k.connoinherit END AS connoinherit,"
              + " pg_get_constraintdef(k.oid, true) AS definition"
              + " FROM pg_constraint k WHERE k.connamespace IN (SELECT oid FROM ns)",
          NS
              + "SELECT 'pg_index', "
              + rel("i.indexrelid")
              + ", "
              + rel("i.indrelid")
              + " AS table, pg_get_indexdef(i.indexrelid, 0, true) AS definition,"
              + " i.indisunique, i.indisprimary, i.indisexclusion, i.indimmediate,"
              + " i.indisclustered, i.indisvalid, i.indisready, i.indislive, i.indisreplident"
              + " FROM pg_index i WHERE i.indexrelid IN (SELECT oid FROM rels)",
          NS
              + "SELECT 'pg_inherits', "
              + rel("h.inhrelid")
              + " || ' of ' || "
              + rel("h.inhparent")
              + ", h.inhseqno, h.inhdetachpending FROM pg_inherits h"
              + " WHERE h.inhrelid IN (SELECT oid FROM rels)"
              + " OR h.inhparent IN (SELECT oid FROM rels)",
          NS
              + "SELECT 'pg_trigger', "
              + rel("t.tgrelid")
              + " || ' ' || t.tgname, pg_get_triggerdef(t.oid, true) AS definition,"
              + " t.tgenabled, (SELECT "
              + rel("pt.tgrelid")
              + " || ' ' || pt.tgname FROM pg_trigger pt WHERE pt.oid = t.tgparentid) AS parent"
              + " FROM pg_trigger t WHERE t.tgrelid IN (SELECT oid FROM rels)"
              + " AND NOT t.tgisinternal",
          NS
              + "SELECT 'pg_policy', "
              + rel("p.polrelid")
              + " || ' ' || p.polname, p.polcmd, p.polpermissive,"
              + " array_to_string(ARRAY(SELECT CASE r WHEN 0 THEN 'public'"
              + " ELSE pg_get_userbyid(r) END FROM unnest(p.polroles) r ORDER BY 1), ',')"
              + " AS roles, pg_get_expr(p.polqual, p.polrelid, true) AS using_expression,"
              + " pg_get_expr(p.polwithcheck, p.polrelid, true) AS check_expression"
              + " FROM pg_policy p WHERE p.polrelid IN (SELECT oid FROM rels)",
          NS
              + "SELECT 'pg_rewrite', "
              + rel("w.ev_class")
              + " || ' ' || w.rulename, w.ev_type, w.ev_enabled, w.is_instead,"
              + " pg_get_ruledef(w.oid, true) AS definition FROM pg_rewrite w"
              + " WHERE w.ev_class IN (SELECT oid FROM rels)",
          NS
              + "SELECT 'pg_proc', n.nspname || '.' || p.proname || '('"
              + " || pg_get_function_identity_arguments(p.oid) || ')', p.prokind,"
              + " l.lanname AS language, pg_get_userbyid(p.proowner) AS owner, p.prosecdef,"
              + " p.proleakproof, p.proisstrict, p.proretset, p.provolatile, p.proparallel,"
              + " p.procost, p.prorows, pg_get_function_result(p.oid) AS result,"
              + " pg_get_function_arguments(p.oid) AS arguments, "
              + set("p.proconfig")
              + " AS config, p.prosrc, p.probin,"
              + " CASE WHEN p.prokind <> 'a' THEN pg_get_functiondef(p.oid) END AS definition, "
              + acl("p.proacl", "f", "p.proowner")
              + " AS acl FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
              + " JOIN pg_language l ON l.oid = p.prolang"
              + " WHERE p.pronamespace IN (SELECT oid FROM ns)",
          NS
              + "SELECT 'pg_type', n.nspname || '.' || t.typname, t.typtype, t.typcategory,"
              + " t.typisdefined, t.typdelim, "
              + rel("NULLIF(t.typrelid, 0)")
              + " AS relation, format_type(NULLIF(t.typelem, 0), NULL) AS element,"
              + " format_type(NULLIF(t.typarray, 0), NULL) AS array_type, t.typnotnull,"
              + " format_type(NULLIF(t.typbasetype, 0), t.typtypmod) AS base_type, t.typndims,"
              + " co.collname AS collation, t.typdefault, pg_get_userbyid(t.typowner) AS owner,"
              + " t.typlen, t.typbyval, t.typalign, t.typstorage, t.typinput::text AS input,"
              + " t.typoutput::text AS output, "
              + acl("t.typacl", "T", "t.typowner")
              + " AS acl FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace"
              + " LEFT JOIN pg_collation co ON co.oid = t.typcollation"
              + " WHERE t.typnamespace IN (SELECT oid FROM ns)",
          NS
              + "SELECT 'pg_enum', format_type(e.enumtypid, NULL) || ' ' || e.enumlabel,"
              + " rank() OVER (PARTITION BY e.enumtypid ORDER BY e.enumsortorder) AS position"
              + " FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid"
              + " WHERE t.typnamespace IN (SELECT oid FROM ns)",
          NS
              + "SELECT 'pg_sequence', "
              + rel("s.seqrelid")
              + ", format_type(s.seqtypid, NULL) AS type, s.seqstart, s.seqincrement,"
              + " s.seqmax, s.seqmin, s.seqcache, s.seqcycle FROM pg_sequence s"
              + " WHERE s.seqrelid IN (SELECT oid FROM rels)",
          NS
              + "SELECT 'pg_statistic_ext', n.nspname || '.' || s.stxname,"
              + " pg_get_statisticsobjdef(s.oid) AS definition, s.stxstattarget::text AS target"
              + " FROM pg_statistic_ext s JOIN pg_namespace n ON n.oid = s.stxnamespace"
              + " WHERE s.stxnamespace IN (SELECT oid FROM ns)",
          NS
              + "SELECT 'pg_extension', e.extname, e.extversion, n.nspname AS schema"
              + " FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace"
              + " WHERE e.extnamespace IN (SELECT oid FROM ns)",
          NS
              + "SELECT 'pg_collation', n.nspname || '.' || c.collname, c.collprovider,"
              + " c.collisdeterministic, c.collcollate, c.collctype"
              + " FROM pg_collation c JOIN pg_namespace n ON n.oid = c.collnamespace"
              + " WHERE c.collnamespace IN (SELECT oid FROM ns)",
          NS
              + "SELECT 'pg_default_acl', pg_get_userbyid(d.defaclrole) || ' ' || d.defaclobjtype::text"
              + " || ' in ' || n.nspname, "
              + set("d.defaclacl::text[]")
              + " AS acl FROM pg_default_acl d JOIN pg_namespace n ON n.oid = d.defaclnamespace"
              + " WHERE d.defaclnamespace IN (SELECT oid FROM ns)",
          NS + OURS + DESCRIPTIONS,
          NS + OURS + DEPENDENCIES);

  private final Map<String, Map<String, String>> rows;

  private CatalogFingerprint(Map<String, Map<String, String>> rows) {
    this.rows = rows;
  }

  /**
   * Reads the fingerprint of a scratch schema and the schemas its set created. Sets the
   * connection's search path to the default schema, so that types and functions are named alike in
   * every scratch schema.
   *
   * @param connection an open connection, not in a failed transaction
   * @param defaultSchema the scratch schema, removed from every value
   * @param otherSchemas the other schemas the set created
   * @return the fingerprint
   * @throws SQLException when a query fails
   */
  static CatalogFingerprint read(
      Connection connection, String defaultSchema, List<String> otherSchemas) throws SQLException {
    try (PreparedStatement s =
        connection.prepareStatement("SELECT set_config('search_path', ?, false)")) {
      s.setString(1, Sql.quoteIdentifier(defaultSchema));
      s.execute();
    }
    List<String> schemas = new ArrayList<>(otherSchemas);
    schemas.add(defaultSchema);
    Map<String, Map<String, String>> rows = new TreeMap<>();
    for (String query : QUERIES) {
      try (PreparedStatement s = connection.prepareStatement(query)) {
        Array names = connection.createArrayOf("text", schemas.toArray());
        s.setArray(1, names);
        try (ResultSet r = s.executeQuery()) {
          ResultSetMetaData meta = r.getMetaData();
          while (r.next()) {
            String key = r.getString(1) + " " + normalise(r.getString(2), defaultSchema);
            if (key.contains("pg_toast")) {
              continue; // a toast table comes and goes with the column types, not the schema
            }
            Map<String, String> columns = new LinkedHashMap<>();
            for (int i = 3; i <= meta.getColumnCount(); i++) {
              columns.put(meta.getColumnLabel(i), normalise(r.getString(i), defaultSchema));
            }
            String unique = key;
            for (int n = 2; rows.containsKey(unique); n++) {
              unique = key + " #" + n;
            }
            rows.put(unique, columns);
          }
        }
      }
    }
    return new CatalogFingerprint(rows);
  }

  private static String normalise(String value, String defaultSchema) {
    if (value == null) {
      return null;
    }
    return value
        .replace(Sql.quoteIdentifier(defaultSchema) + ".", "")
        .replace(defaultSchema + ".", "")
        .replace(defaultSchema, SchemaCatalog.DEFAULT_SCHEMA_PLACEHOLDER);
  }

  /**
   * How many rows were read.
   *
   * @return the number of rows, all catalogs together
   */
  int size() {
    return rows.size();
  }

  /**
   * The rows of one catalog, for tests: each key with its compared columns.
   *
   * @param catalog e.g. {@code pg_index}
   * @return key to columns, sorted by key
   */
  Map<String, Map<String, String>> rows(String catalog) {
    Map<String, Map<String, String>> of = new TreeMap<>();
    rows.forEach(
        (k, v) -> {
          if (k.startsWith(catalog + " ")) {
            of.put(k.substring(catalog.length() + 1), v);
          }
        });
    return of;
  }

  /**
   * Names every row where this fingerprint (what the SQL gave) differs from the expected one (the
   * head's), at most {@link #MAX_NAMED} of them and then how many more.
   *
   * @param expected the head's fingerprint
   * @return e.g. {@code `pg_index` row `m_at` (indisvalid: `f` after this SQL, `t` in the head)};
   *     empty when equal
   */
  List<String> differencesFrom(CatalogFingerprint expected) {
    List<String> all = new ArrayList<>();
    TreeSet<String> keys = new TreeSet<>(rows.keySet());
    keys.addAll(expected.rows.keySet());
    for (String key : keys) {
      Map<String, String> got = rows.get(key);
      Map<String, String> want = expected.rows.get(key);
      if (got == null) {
        all.add(named(key) + " (in the head, not after this SQL)");
      } else if (want == null) {
        all.add(named(key) + " (after this SQL, not in the head)");
      } else if (!got.equals(want)) {
        List<String> columns = new ArrayList<>();
        for (String column : want.keySet()) {
          if (!Objects.equals(got.get(column), want.get(column))) {
            columns.add(
                column
                    + ": "
                    + shown(got.get(column))
                    + " after this SQL, "
                    + shown(want.get(column))
                    + " in the head");
          }
        }
        all.add(named(key) + " (" + String.join(", ", columns) + ")");
      }
    }
    if (all.size() <= MAX_NAMED) {
      return List.copyOf(all);
    }
    List<String> named = new ArrayList<>(all.subList(0, MAX_NAMED));
    named.add((all.size() - MAX_NAMED) + " more catalog rows");
    return List.copyOf(named);
  }

  /** {@code pg_index m_at} as {@code `pg_index` row `m_at`}. */
  private static String named(String key) {
    int space = key.indexOf(' ');
    return "`" + key.substring(0, space) + "` row `" + key.substring(space + 1) + "`";
  }

  private static String shown(String value) {
    return value == null ? "null" : "`" + value + "`";
  }
}

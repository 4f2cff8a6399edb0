package dev.ledger.diff;

import dev.ledger.diff.Change.Kind;
import dev.ledger.diff.SchemaCatalog.Item;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Reads the {@link Item}s of a catalog (every object besides schemas, tables, columns, keys,
 * indexes and sequences) from {@code pg_catalog}, with bind values only, and their dependencies
 * from {@code pg_depend}. Objects that belong to an extension are the extension's, not read one by
 * one. Used by {@link CatalogReader} on its connection, search path already set.
 *
 * <p>Size: over 600 lines: one catalog query and its row mapping per kind of item (a dozen kinds),
 * kept together because they share the dependency and extension rules above and one connection.
 */
final class ItemReader {

  /** Objects with smaller OIDs are PostgreSQL's own. */
  private static final long FIRST_USER_OID = 16384;

  private static final String NOT_EXTENSION_MEMBER =
      " NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.objid = %s AND e.deptype IN ('e', 'i')) ";

  private static final String RELATIONS =
      """
      SELECT c.oid, n.nspname, c.relname, c.reltype, a.attnum, a.attname
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
       WHERE n.nspname = ANY (?) AND c.relkind IN ('r', 'p')
      """;

  private static final String EXTENSIONS =
      """
      SELECT e.oid, e.extname, n.nspname, quote_ident(e.extname), quote_ident(n.nspname)
        FROM pg_extension e
        JOIN pg_namespace n ON n.oid = e.extnamespace
       WHERE n.nspname = ANY (?)
      """;

  private static final String COLLATIONS =
      """
      SELECT co.oid, co.collname, n.nspname, quote_ident(co.collname), quote_ident(n.nspname),
             co.collprovider, co.collisdeterministic, co.collcollate, co.collctype,
             coalesce(to_jsonb(co) ->> 'colllocale', to_jsonb(co) ->> 'colliculocale')
        FROM pg_collation co
        JOIN pg_namespace n ON n.oid = co.collnamespace
       WHERE n.nspname = ANY (?) AND"""
          + NOT_EXTENSION_MEMBER.formatted("co.oid");

  private static final String TYPES =
      """
      SELECT t.oid, t.typname, n.nspname, quote_ident(t.typname), quote_ident(n.nspname),
             t.typtype, t.typarray,
             ARRAY(SELECT e.enumlabel FROM pg_enum e WHERE e.enumtypid = t.oid
                    ORDER BY e.enumsortorder),
             CASE WHEN t.typtype = 'd' THEN format_type(t.typbasetype, t.typtypmod) END,
             t.typnotnull, t.typdefault,
             ARRAY(SELECT 'CONSTRAINT ' || quote_ident(dc.conname) || ' '
                          || pg_get_constraintdef(dc.oid, true)
                     FROM pg_constraint dc WHERE dc.contypid = t.oid AND dc.contype = 'c'
                    ORDER BY dc.conname),
             ARRAY(SELECT quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod)
                     FROM pg_attribute a
                    WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped
                    ORDER BY a.attnum),
             ARRAY(SELECT quote_ident(dc.conname) || ':' || pg_get_constraintdef(dc.oid, true)
                     FROM pg_constraint dc WHERE dc.contypid = t.oid AND dc.contype = 'c'
                    ORDER BY dc.conname),
             t.typrelid
        FROM pg_type t
        JOIN pg_namespace n ON n.oid = t.typnamespace
       WHERE n.nspname = ANY (?) AND t.typtype IN ('e', 'd', 'c', 'r', 'b')
         AND (t.typtype <> 'c'
              OR EXISTS (SELECT 1 FROM pg_class r WHERE r.oid = t.typrelid AND r.relkind = 'c'))
         AND NOT EXISTS (SELECT 1 FROM pg_type el WHERE el.typarray = t.oid)
         AND"""
          + NOT_EXTENSION_MEMBER.formatted("t.oid");

  private static final String FUNCTIONS =
      """
      SELECT p.oid, p.proname, n.nspname, quote_ident(p.proname), quote_ident(n.nspname),
             p.prokind, pg_get_function_identity_arguments(p.oid),
             CASE WHEN p.prokind <> 'a' THEN pg_get_functiondef(p.oid) END,
             coalesce(pg_get_function_result(p.oid), ''), pg_get_function_arguments(p.oid),
             p.oid::regprocedure::text
        FROM pg_proc p
        JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = ANY (?) AND"""
          + NOT_EXTENSION_MEMBER.formatted("p.oid");

  private static final String VIEWS =
      """
      SELECT c.oid, c.relname, n.nspname, quote_ident(c.relname), quote_ident(n.nspname),
             c.relkind, pg_get_viewdef(c.oid, true), array_to_string(c.reloptions, ', '),
             ARRAY(SELECT pg_get_indexdef(i.indexrelid, 0, true)
                     FROM pg_index i WHERE i.indrelid = c.oid ORDER BY 1),
             (SELECT r.oid FROM pg_rewrite r WHERE r.ev_class = c.oid AND r.rulename = '_RETURN'),
             c.relispopulated
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = ANY (?) AND c.relkind IN ('v', 'm') AND"""
          + NOT_EXTENSION_MEMBER.formatted("c.oid");

  private static final String TRIGGERS =
      """
      SELECT tg.oid, tg.tgname, n.nspname, c.relname, quote_ident(tg.tgname),
             pg_get_triggerdef(tg.oid, true), tg.tgenabled, quote_ident(n.nspname),
             quote_ident(c.relname)
        FROM pg_trigger tg
        JOIN pg_class c ON c.oid = tg.tgrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = ANY (?) AND NOT tg.tgisinternal AND tg.tgparentid = 0
      """;

  private static final String RULES =
      """
      SELECT r.oid, r.rulename, n.nspname, c.relname, quote_ident(r.rulename),
             pg_get_ruledef(r.oid, true), r.ev_enabled, quote_ident(n.nspname),
             quote_ident(c.relname)
        FROM pg_rewrite r
        JOIN pg_class c ON c.oid = r.ev_class
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = ANY (?) AND r.rulename <> '_RETURN'
      """;

  private static final String COLUMN_GRANTS =
      """
      SELECT n.nspname, c.relname, quote_ident(n.nspname), quote_ident(c.relname), a.attname,
             quote_ident(a.attname),
             CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(x.grantee)) END,
             x.privilege_type, x.is_grantable
        FROM pg_attribute a
        JOIN pg_class c ON c.oid = a.attrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace,
             LATERAL aclexplode(a.attacl) x
       WHERE n.nspname = ANY (?) AND a.attacl IS NOT NULL AND NOT a.attisdropped
         AND a.attnum > 0 AND x.grantee <> c.relowner
       ORDER BY 1, 2, 5, 7, 8
      """;

  private static final String POLICIES =
      """
      SELECT pol.oid, pol.polname, n.nspname, c.relname, quote_ident(pol.polname),
             quote_ident(n.nspname), quote_ident(c.relname), pol.polcmd, pol.polpermissive,
             ARRAY(SELECT CASE WHEN u.role = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END
                     FROM unnest(pol.polroles) AS u(role)
                     LEFT JOIN pg_roles r ON r.oid = u.role ORDER BY 1),
             pg_get_expr(pol.polqual, pol.polrelid, true),
             pg_get_expr(pol.polwithcheck, pol.polrelid, true)
        FROM pg_policy pol
        JOIN pg_class c ON c.oid = pol.polrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = ANY (?)
      """;

  private static final String TABLE_SETTINGS =
      """
      SELECT c.oid, n.nspname, c.relname, quote_ident(n.nspname), quote_ident(c.relname),
             c.relrowsecurity, c.relforcerowsecurity, c.relreplident,
             (SELECT quote_ident(ic.relname) FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
               WHERE i.indrelid = c.oid AND i.indisreplident),
             c.relpersistence, c.reloptions
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = ANY (?) AND c.relkind IN ('r', 'p')
         AND (c.relrowsecurity OR c.relforcerowsecurity OR c.relreplident <> 'd'
              OR c.relpersistence = 'u' OR c.reloptions IS NOT NULL)
      """;

  private static final String STATISTICS =
      """
      SELECT s.oid, s.stxname, n.nspname, quote_ident(s.stxname), quote_ident(n.nspname),
             pg_get_statisticsobjdef(s.oid), tn.nspname, c.relname
        FROM pg_statistic_ext s
        JOIN pg_namespace n ON n.oid = s.stxnamespace
        JOIN pg_class c ON c.oid = s.stxrelid
        JOIN pg_namespace tn ON tn.oid = c.relnamespace
       WHERE n.nspname = ANY (?)
      """;

  private static final String COMMENTS =
      """
      SELECT d.classoid::regclass::text, d.objoid, o.type, o.identity, d.description
        FROM pg_description d,
             LATERAL pg_identify_object(d.classoid, d.objoid, d.objsubid) o
       WHERE d.objoid >= 16384
         AND (o.schema = ANY (?)
              OR (d.classoid = 'pg_namespace'::regclass
                  AND (SELECT nspname FROM pg_namespace WHERE oid = d.objoid) = ANY (?)))
         AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.objid = d.objoid AND e.deptype = 'e')
      """;

  /** Privileges as granted and as the object's default, per object and grantee. */
  private static final String GRANTS =
      """
      WITH objects AS (
        SELECT 'pg_class' AS cls, c.oid, CASE c.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END
               AS objtype, quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS ident,
               c.relowner AS owner, c.relacl AS acl,
               acldefault(CASE c.relkind WHEN 'S' THEN 's'::"char" ELSE 'r'::"char" END,
                          c.relowner) AS dflt,
               CASE WHEN c.relkind IN ('r', 'p') THEN c.relname END AS tbl, n.nspname AS nsp
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = ANY (?) AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
           AND NOT (n.nspname = ? AND c.relname = ?)
        UNION ALL
        SELECT 'pg_proc', p.oid, CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END,
               quote_ident(n.nspname) || '.' || quote_ident(p.proname) || '('
               || pg_get_function_identity_arguments(p.oid) || ')',
               p.proowner, p.proacl, acldefault('f', p.proowner), NULL, n.nspname
          FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = ANY (?)
        UNION ALL
        SELECT 'pg_namespace', n.oid, 'SCHEMA', quote_ident(n.nspname), n.nspowner, n.nspacl,
               acldefault('n', n.nspowner), NULL, n.nspname
          FROM pg_namespace n WHERE n.nspname = ANY (?)
        UNION ALL
        SELECT 'pg_type', t.oid, CASE t.typtype WHEN 'd' THEN 'DOMAIN' ELSE 'TYPE' END,
               quote_ident(n.nspname) || '.' || quote_ident(t.typname), t.typowner, t.typacl,
               acldefault('T', t.typowner), NULL, n.nspname
          FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
         WHERE n.nspname = ANY (?) AND t.typtype IN ('e', 'd', 'c', 'r')
           AND NOT EXISTS (SELECT 1 FROM pg_type el WHERE el.typarray = t.oid)
           AND (t.typtype <> 'c' OR EXISTS (SELECT 1 FROM pg_class r
                                             WHERE r.oid = t.typrelid AND r.relkind = 'c'))
      )
      SELECT o.cls, o.oid, o.objtype, o.ident, o.tbl, o.nsp, x.is_default,
             CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(x.grantee)) END,
             x.privilege_type, x.is_grantable
        FROM objects o,
             LATERAL (SELECT false AS is_default, a.* FROM aclexplode(coalesce(o.acl, o.dflt)) a
                      UNION ALL
                      SELECT true, a.* FROM aclexplode(o.dflt) a) x
       WHERE x.grantee <> o.owner
         AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.objid = o.oid AND e.deptype = 'e')
       ORDER BY 1, 2, 8, 9
      """;

  private static final String OTHERS =
      """
      SELECT 'foreign table', quote_ident(n.nspname) || '.' || quote_ident(c.relname), ''
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = ANY (?) AND c.relkind = 'f'
      UNION ALL
      SELECT 'operator', o.oid::regoperator::text, o.oprcode::text
        FROM pg_operator o JOIN pg_namespace n ON n.oid = o.oprnamespace
       WHERE n.nspname = ANY (?) AND NOT EXISTS (SELECT 1 FROM pg_depend e
                                                  WHERE e.objid = o.oid AND e.deptype = 'e')
      UNION ALL
      SELECT 'operator class', quote_ident(n.nspname) || '.' || quote_ident(oc.opcname), ''
        FROM pg_opclass oc JOIN pg_namespace n ON n.oid = oc.opcnamespace
       WHERE n.nspname = ANY (?) AND NOT EXISTS (SELECT 1 FROM pg_depend e
                                                  WHERE e.objid = oc.oid AND e.deptype = 'e')
      UNION ALL
      SELECT 'operator family', quote_ident(n.nspname) || '.' || quote_ident(f.opfname), ''
        FROM pg_opfamily f JOIN pg_namespace n ON n.oid = f.opfnamespace
       WHERE n.nspname = ANY (?) AND NOT EXISTS (SELECT 1 FROM pg_depend e
                                                  WHERE e.objid = f.oid AND e.deptype = 'e')
      UNION ALL
      SELECT 'text search configuration', quote_ident(n.nspname) || '.' || quote_ident(t.cfgname), ''
        FROM pg_ts_config t JOIN pg_namespace n ON n.oid = t.cfgnamespace
       WHERE n.nspname = ANY (?)
      UNION ALL
      SELECT 'text search dictionary', quote_ident(n.nspname) || '.' || quote_ident(t.dictname),
             coalesce(t.dictinitoption, '')
        FROM pg_ts_dict t JOIN pg_namespace n ON n.oid = t.dictnamespace
       WHERE n.nspname = ANY (?)
      UNION ALL
      SELECT 'conversion', quote_ident(n.nspname) || '.' || quote_ident(v.conname), ''
        FROM pg_conversion v JOIN pg_namespace n ON n.oid = v.connamespace
       WHERE n.nspname = ANY (?)

      """;

  private static final String DEPENDENCIES =
      """
      SELECT d.classid::regclass::text, d.objid, d.refclassid::regclass::text, d.refobjid,
             d.refobjsubid
        FROM pg_depend d
       WHERE d.objid >= ? AND d.refobjid >= ? AND d.deptype IN ('n', 'a')
      """;

  private static final Set<Kind> EARLY_KINDS =
      EnumSet.of(Kind.EXTENSION, Kind.COLLATION, Kind.ENUM, Kind.DOMAIN, Kind.COMPOSITE_TYPE);

  private final Connection connection;
  private final CatalogReader reader;
  private final List<String> schemas;
  private final Map<String, Builder> items = new TreeMap<>();
  private final Map<String, Builder> byOid = new HashMap<>();
  private final Map<Long, String> tables = new HashMap<>();
  private final Map<Long, String> tableTypes = new HashMap<>();
  private final Map<String, String> columns = new HashMap<>();

  ItemReader(Connection connection, CatalogReader reader, List<String> schemas) {
    this.connection = connection;
    this.reader = reader;
    this.schemas = schemas;
  }

  /** An item being read. */
  private static final class Builder {
    final Kind kind;
    final String name;
    String table;
    String definition;
    final List<String> create = new ArrayList<>();
    final List<String> drop = new ArrayList<>();
    boolean replaceable;
    List<String> labels = List.of();
    final Set<String> requires = new TreeSet<>();
    final Set<String> uses = new TreeSet<>();
    String refusal;
    boolean early;

    Builder(Kind kind, String name) {
      this.kind = kind;
      this.name = name;
      this.early = EARLY_KINDS.contains(kind);
    }

    String key() {
      return kind.label() + " " + name;
    }
  }

  Map<String, Item> read() throws SQLException {
    query(
        RELATIONS,
        r -> {
          String table = reader.name(r.getString(2), r.getString(3));
          tables.put(r.getLong(1), table);
          tableTypes.put(r.getLong(4), table);
          if (r.getString(6) != null) {
            columns.put(r.getLong(1) + ":" + r.getInt(5), table + ":" + r.getString(6));
          }
        });
    query(EXTENSIONS, this::extension);
    query(COLLATIONS, this::collation);
    query(TYPES, this::type);
    query(FUNCTIONS, this::function);
    query(VIEWS, this::view);
    query(TRIGGERS, this::trigger);
    query(POLICIES, this::policy);
    query(RULES, this::rule);
    columnGrants();
    query(TABLE_SETTINGS, this::tableSettings);
    query(STATISTICS, this::statistics);
    query(COMMENTS, this::comment);
    grants();
    query(
        OTHERS,
        r -> {
          Builder b = add(Kind.OTHER, r.getString(1) + " " + reader.norm(r.getString(2)), null);
          b.definition = reader.norm(r.getString(3));
          b.refusal = "the tool does not migrate a " + r.getString(1);
        });
    dependencies();
    settleEarly();
    Map<String, Item> built = new LinkedHashMap<>();
    for (Builder b : items.values()) {
      built.put(
          b.key(),
          new Item(
              b.kind,
              b.name,
              b.table,
              b.definition,
              b.create,
              b.drop,
              b.early,
              b.replaceable,
              b.labels,
              new TreeSet<>(b.requires),
              new TreeSet<>(b.uses),
              b.refusal));
    }
    return built;
  }

  private Builder add(Kind kind, String name, String oidKey) {
    Builder b = new Builder(kind, name);
    Builder old = items.putIfAbsent(b.key(), b);
    if (old != null) {
      b = old;
    }
    if (oidKey != null) {
      byOid.put(oidKey, b);
    }
    return b;
  }

  private String qualified(ResultSet r, int schemaColumn, int quotedSchema, int quotedName)
      throws SQLException {
    return reader.sqlName(
        r.getString(schemaColumn), r.getString(quotedSchema), r.getString(quotedName));
  }

  private void extension(ResultSet r) throws SQLException {
    boolean inDefault = r.getString(3).equals(reader.defaultSchema());
    Builder b = add(Kind.EXTENSION, r.getString(2), "pg_extension:" + r.getLong(1));
    b.definition =
        "extension "
            + r.getString(2)
            + (inDefault ? "" : " in schema " + reader.norm(r.getString(3)));
    b.create.add(
        "CREATE EXTENSION "
            + r.getString(4)
            + (inDefault ? "" : " WITH SCHEMA " + reader.norm(r.getString(5)))
            + ";");
    b.drop.add("DROP EXTENSION " + r.getString(4) + ";");
  }

  private void collation(ResultSet r) throws SQLException {
    String sqlName = qualified(r, 3, 5, 4);
    Builder b =
        add(
            Kind.COLLATION,
            reader.name(r.getString(3), r.getString(2)),
            "pg_collation:" + r.getLong(1));
    String provider =
        switch (r.getString(6)) {
          case "i" -> "icu";
          case "b" -> "builtin";
          default -> "libc";
        };
    List<String> options = new ArrayList<>();
    options.add("provider = " + provider);
    String locale = r.getString(10);
    if (!provider.equals("libc") && locale != null) {
      options.add("locale = " + Sql.literal(locale));
    } else if (r.getString(8) != null && r.getString(8).equals(r.getString(9))) {
      options.add("locale = " + Sql.literal(r.getString(8)));
    } else {
      if (r.getString(8) != null) {
        options.add("lc_collate = " + Sql.literal(r.getString(8)));
      }
      if (r.getString(9) != null) {
        options.add("lc_ctype = " + Sql.literal(r.getString(9)));
      }
    }
    if (!r.getBoolean(7)) {
      options.add("deterministic = false");
    }
    b.definition = String.join(", ", options);
    b.create.add("CREATE COLLATION " + sqlName + " (" + b.definition + ");");
    b.drop.add("DROP COLLATION " + sqlName + ";");
  }

  private void type(ResultSet r) throws SQLException {
    String sqlName = qualified(r, 3, 5, 4);
    String name = reader.name(r.getString(3), r.getString(2));
    String typtype = r.getString(6);
    Kind kind =
        switch (typtype) {
          case "e" -> Kind.ENUM;
          case "d" -> Kind.DOMAIN;
          case "c" -> Kind.COMPOSITE_TYPE;
          default -> Kind.OTHER;
        };
    Builder b = add(kind, kind == Kind.OTHER ? "type " + name : name, "pg_type:" + r.getLong(1));
    byOid.put("pg_type:" + r.getLong(7), b);
    switch (typtype) {
      case "e" -> {
        List<String> labels = CatalogReader.names(r.getArray(8));
        b.labels = labels;
        b.definition =
            "ENUM (" + String.join(", ", labels.stream().map(Sql::literal).toList()) + ")";
        b.create.add("CREATE TYPE " + sqlName + " AS " + b.definition + ";");
        b.drop.add("DROP TYPE " + sqlName + ";");
      }
      case "d" -> {
        StringBuilder def = new StringBuilder(reader.norm(r.getString(9)));
        if (r.getString(11) != null) {
          def.append(" DEFAULT ").append(reader.norm(r.getString(11)));
        }
        if (r.getBoolean(10)) {
          def.append(" NOT NULL");
        }
        for (String check : CatalogReader.names(r.getArray(12))) {
          def.append(' ').append(reader.norm(check));
        }
        b.definition = def.toString();
        Map<String, String> checks = new LinkedHashMap<>();
        for (String check : CatalogReader.names(r.getArray(14))) {
          int colon = check.indexOf(':', check.startsWith("\"") ? check.indexOf('"', 1) : 0);
          checks.put(check.substring(0, colon), reader.norm(check.substring(colon + 1)));
        }
        b.labels =
            DomainChange.labels(
                sqlName,
                reader.norm(r.getString(9)),
                r.getString(11) == null ? null : reader.norm(r.getString(11)),
                r.getBoolean(10),
                checks);
        b.create.add("CREATE DOMAIN " + sqlName + " AS " + b.definition + ";");
        b.drop.add("DROP DOMAIN " + sqlName + ";");
      }
      case "c" -> {
        // its attributes' dependencies (on an enum, a domain) are recorded on its relation
        byOid.put("pg_class:" + r.getLong(15), b);
        List<String> attributes = CatalogReader.names(r.getArray(13));
        b.definition = "(" + reader.norm(String.join(", ", attributes)) + ")";
        b.labels = CompositeChange.labels(sqlName, attributes.stream().map(reader::norm).toList());
        b.create.add("CREATE TYPE " + sqlName + " AS " + b.definition + ";");
        b.drop.add("DROP TYPE " + sqlName + ";");
      }
      default -> {
        b.definition = typtype.equals("r") ? "range type" : "base type";
        b.refusal = "the tool does not migrate a " + b.definition;
      }
    }
  }

  private void function(ResultSet r) throws SQLException {
    String args = reader.norm(r.getString(7));
    String name = reader.name(r.getString(3), r.getString(2)) + "(" + args + ")";
    String sqlName = qualified(r, 3, 5, 4) + "(" + args + ")";
    String prokind = r.getString(6);
    String oid = "pg_proc:" + r.getLong(1);
    if (prokind.equals("a")) {
      Builder b = add(Kind.OTHER, "aggregate " + name, oid);
      b.definition = "aggregate";
      b.refusal = "the tool does not migrate an aggregate";
      return;
    }
    Kind kind = prokind.equals("p") ? Kind.PROCEDURE : Kind.FUNCTION;
    Builder b = add(kind, name, oid);
    b.definition = reader.norm(r.getString(8)).strip();
    b.create.add("SET check_function_bodies = false;");
    b.create.add(b.definition + ";");
    b.drop.add("DROP " + (kind == Kind.PROCEDURE ? "PROCEDURE " : "FUNCTION ") + sqlName + ";");
    // its interface: CREATE OR REPLACE cannot change the result type or the parameters' names
    // and defaults (ItemDiffer drops and re-creates it, with what depends on it, when they change)
    b.labels =
        List.of(
            "returns " + reader.norm(r.getString(9)),
            "(" + reader.norm(r.getString(10)) + ")",
            "signature " + reader.norm(r.getString(11)));
    b.replaceable = true;
    b.early = true;
  }

  private void view(ResultSet r) throws SQLException {
    String sqlName = qualified(r, 3, 5, 4);
    boolean materialized = r.getString(6).equals("m");
    Builder b =
        add(
            materialized ? Kind.MATERIALIZED_VIEW : Kind.VIEW,
            reader.name(r.getString(3), r.getString(2)),
            "pg_class:" + r.getLong(1));
    byOid.put("pg_rewrite:" + r.getLong(10), b);
    String query = reader.norm(r.getString(7)).strip();
    if (query.endsWith(";")) {
      query = query.substring(0, query.length() - 1);
    }
    String options = r.getString(8);
    String head =
        (materialized ? "CREATE MATERIALIZED VIEW " : "CREATE VIEW ")
            + sqlName
            + (options == null || options.isEmpty() ? "" : " WITH (" + options + ")")
            + " AS\n";
    String create =
        head
            + query
            + (materialized ? (r.getBoolean(11) ? "\nWITH DATA" : "\nWITH NO DATA") : "")
            + ";";
    b.create.add(create);
    StringBuilder def = new StringBuilder(create);
    for (String index : CatalogReader.names(r.getArray(9))) {
      b.create.add(reader.norm(index) + ";");
      def.append('\n').append(reader.norm(index));
    }
    b.definition = def.toString();
    b.drop.add((materialized ? "DROP MATERIALIZED VIEW " : "DROP VIEW ") + sqlName + ";");
  }

  private void trigger(ResultSet r) throws SQLException {
    String table = reader.name(r.getString(3), r.getString(4));
    String tableSql = reader.sqlName(r.getString(3), r.getString(8), r.getString(9));
    Builder b = add(Kind.TRIGGER, r.getString(2) + " on " + table, "pg_trigger:" + r.getLong(1));
    b.table = table;
    String enabled =
        switch (r.getString(7)) {
          case "D" -> "DISABLE TRIGGER ";
          case "R" -> "ENABLE REPLICA TRIGGER ";
          case "A" -> "ENABLE ALWAYS TRIGGER ";
          default -> null;
        };
    b.create.add(reader.norm(r.getString(6)) + ";");
    if (enabled != null) {
      b.create.add("ALTER TABLE " + tableSql + " " + enabled + r.getString(5) + ";");
    }
    b.definition = String.join("\n", b.create);
    b.drop.add("DROP TRIGGER " + r.getString(5) + " ON " + tableSql + ";");
  }

  /**
   * Column privileges ({@code GRANT SELECT (a) ON t}): one {@link Kind#GRANT} item per column and
   * grantee, made by {@code REVOKE ALL (a)} then {@code GRANT}, removed by {@code REVOKE ALL (a)}.
   */
  private void columnGrants() throws SQLException {
    Map<String, Builder> byKey = new LinkedHashMap<>();
    Map<String, List<List<String>>> privileges = new LinkedHashMap<>();
    query(
        COLUMN_GRANTS,
        r -> {
          String table = reader.name(r.getString(1), r.getString(2));
          if (table.equals(ScratchPostgres.HISTORY_TABLE)) {
            return;
          }
          String column = " (" + r.getString(6) + ")";
          String onTable =
              " ON TABLE " + reader.sqlName(r.getString(1), r.getString(3), r.getString(4));
          String on = column + onTable;
          String grantee = r.getString(7);
          String key = table + "." + r.getString(5) + " to " + grantee;
          Builder b = byKey.get(key);
          if (b == null) {
            b = add(Kind.GRANT, "column " + key, null);
            b.table = table;
            b.uses.add(table + ":" + r.getString(5));
            b.replaceable = true;
            b.create.add("REVOKE ALL" + on + " FROM " + grantee + ";");
            b.drop.add("REVOKE ALL" + on + " FROM " + grantee + ";");
            byKey.put(key, b);
            privileges.put(
                key, List.of(new ArrayList<>(), new ArrayList<>(), List.of(onTable, grantee)));
          }
          // GRANT SELECT (a), UPDATE (a) ON TABLE t: each privilege names the column
          privileges.get(key).get(r.getBoolean(9) ? 1 : 0).add(r.getString(8) + column);
        });
    byKey.forEach(
        (key, b) -> {
          List<String> plain = privileges.get(key).get(0);
          List<String> withOption = privileges.get(key).get(1);
          String on = privileges.get(key).get(2).get(0);
          String grantee = privileges.get(key).get(2).get(1);
          if (!plain.isEmpty()) {
            b.create.add("GRANT " + String.join(", ", plain) + on + " TO " + grantee + ";");
          }
          if (!withOption.isEmpty()) {
            b.create.add(
                "GRANT "
                    + String.join(", ", withOption)
                    + on
                    + " TO "
                    + grantee
                    + " WITH GRANT OPTION;");
          }
          b.definition =
              (plain.isEmpty() ? "" : String.join(", ", plain))
                  + (withOption.isEmpty()
                      ? ""
                      : (plain.isEmpty() ? "" : "; ")
                          + "with grant option: "
                          + String.join(", ", withOption));
        });
  }

  /** A rewrite rule: {@code pg_get_ruledef}, its enabled state, {@code DROP RULE}. */
  private void rule(ResultSet r) throws SQLException {
    String table = reader.name(r.getString(3), r.getString(4));
    String tableSql = reader.sqlName(r.getString(3), r.getString(8), r.getString(9));
    Builder b = add(Kind.RULE, r.getString(2) + " on " + table, "pg_rewrite:" + r.getLong(1));
    b.table = table;
    String enabled =
        switch (r.getString(7)) {
          case "D" -> "DISABLE RULE ";
          case "R" -> "ENABLE REPLICA RULE ";
          case "A" -> "ENABLE ALWAYS RULE ";
          default -> null;
        };
    String def = reader.norm(r.getString(6)).strip();
    b.create.add(def.endsWith(";") ? def : def + ";");
    if (enabled != null) {
      b.create.add("ALTER TABLE " + tableSql + " " + enabled + r.getString(5) + ";");
    }
    b.definition = String.join("\n", b.create);
    b.drop.add("DROP RULE " + r.getString(5) + " ON " + tableSql + ";");
  }

  private void policy(ResultSet r) throws SQLException {
    String table = reader.name(r.getString(3), r.getString(4));
    String tableSql = reader.sqlName(r.getString(3), r.getString(6), r.getString(7));
    Builder b = add(Kind.POLICY, r.getString(2) + " on " + table, "pg_policy:" + r.getLong(1));
    b.table = table;
    String command =
        switch (r.getString(8)) {
          case "r" -> "SELECT";
          case "a" -> "INSERT";
          case "w" -> "UPDATE";
          case "d" -> "DELETE";
          default -> "ALL";
        };
    StringBuilder sql =
        new StringBuilder("CREATE POLICY ")
            .append(r.getString(5))
            .append(" ON ")
            .append(tableSql)
            .append(r.getBoolean(9) ? " AS PERMISSIVE" : " AS RESTRICTIVE")
            .append(" FOR ")
            .append(command)
            .append(" TO ")
            .append(String.join(", ", CatalogReader.names(r.getArray(10))));
    if (r.getString(11) != null) {
      sql.append(" USING (").append(reader.norm(r.getString(11))).append(')');
    }
    if (r.getString(12) != null) {
      sql.append(" WITH CHECK (").append(reader.norm(r.getString(12))).append(')');
    }
    b.definition = sql.toString();
    b.create.add(b.definition + ";");
    b.drop.add("DROP POLICY " + r.getString(5) + " ON " + tableSql + ";");
  }

  private void tableSettings(ResultSet r) throws SQLException {
    String table = reader.name(r.getString(2), r.getString(3));
    if (table.equals(ScratchPostgres.HISTORY_TABLE)) {
      return;
    }
    String tableSql = reader.sqlName(r.getString(2), r.getString(4), r.getString(5));
    if (r.getBoolean(6) || r.getBoolean(7)) {
      Builder b = add(Kind.ROW_SECURITY, table, null);
      b.table = table;
      b.definition =
          (r.getBoolean(6) ? "enabled" : "disabled") + (r.getBoolean(7) ? ", forced" : "");
      b.create.add(
          "ALTER TABLE "
              + tableSql
              + (r.getBoolean(6) ? " ENABLE" : " DISABLE")
              + " ROW LEVEL SECURITY;");
      b.create.add(
          "ALTER TABLE "
              + tableSql
              + (r.getBoolean(7) ? " FORCE" : " NO FORCE")
              + " ROW LEVEL SECURITY;");
      b.drop.add("ALTER TABLE " + tableSql + " DISABLE ROW LEVEL SECURITY;");
      b.drop.add("ALTER TABLE " + tableSql + " NO FORCE ROW LEVEL SECURITY;");
      b.replaceable = true;
      b.uses.add(table);
    }
    String identity =
        switch (r.getString(8)) {
          case "f" -> "FULL";
          case "n" -> "NOTHING";
          case "i" -> r.getString(9) == null ? null : "USING INDEX " + r.getString(9);
          default -> null;
        };
    if (identity != null) {
      Builder b = add(Kind.REPLICA_IDENTITY, table, null);
      b.table = table;
      b.definition = identity;
      b.create.add("ALTER TABLE " + tableSql + " REPLICA IDENTITY " + identity + ";");
      b.drop.add("ALTER TABLE " + tableSql + " REPLICA IDENTITY DEFAULT;");
      b.replaceable = true;
      b.uses.add(table);
    }
    storage(r, table, tableSql);
  }

  /** A table's storage, when it is not the default, as a {@link TableStorage} item. */
  private void storage(ResultSet r, String table, String tableSql) throws SQLException {
    boolean unlogged = "u".equals(r.getString(10));
    Array array = r.getArray(11);
    List<String> options = new ArrayList<>();
    if (array != null) {
      options.addAll(List.of((String[]) array.getArray()));
      options.sort(null);
      array.free();
    }
    if (!unlogged && options.isEmpty()) {
      return;
    }
    Builder b = add(Kind.TABLE_STORAGE, table, null);
    b.table = table;
    b.labels = TableStorage.labels(tableSql, unlogged, options);
    b.definition = String.join(", ", b.labels.subList(1, b.labels.size()));
    b.create.addAll(TableStorage.between(List.of(), b.labels));
    b.drop.addAll(TableStorage.between(b.labels, List.of()));
    b.replaceable = true;
    b.uses.add(table);
  }

  private void statistics(ResultSet r) throws SQLException {
    String sqlName = qualified(r, 3, 5, 4);
    Builder b =
        add(
            Kind.STATISTICS,
            reader.name(r.getString(3), r.getString(2)),
            "pg_statistic_ext:" + r.getLong(1));
    b.table = reader.name(r.getString(7), r.getString(8));
    b.definition = reader.norm(r.getString(6));
    b.create.add(b.definition + ";");
    b.drop.add("DROP STATISTICS " + sqlName + ";");
  }

  private void comment(ResultSet r) throws SQLException {
    String type = r.getString(3);
    String identity = reader.norm(r.getString(4));
    Builder b = add(Kind.COMMENT, "on " + type + " " + identity, null);
    b.definition = r.getString(5);
    Builder target = byOid.get(r.getString(1) + ":" + r.getLong(2));
    if (target != null) {
      b.requires.add(target.key());
    }
    if (r.getString(1).equals("pg_class") && tables.containsKey(r.getLong(2))) {
      b.table = tables.get(r.getLong(2));
    }
    String keyword =
        switch (type) {
          case "table column",
              "view column",
              "materialized view column",
              "composite type column",
              "foreign table column" ->
              "COLUMN";
          case "composite type" -> "TYPE";
          case "table constraint" -> "CONSTRAINT";
          case "statistics object" -> "STATISTICS";
          case "domain constraint" -> null;
          default -> type.toUpperCase(Locale.ROOT);
        };
    if (keyword == null) {
      b.refusal = "the tool does not migrate a comment on a " + type;
      return;
    }
    b.create.add(
        "COMMENT ON " + keyword + " " + identity + " IS " + Sql.literal(b.definition) + ";");
    b.drop.add("COMMENT ON " + keyword + " " + identity + " IS NULL;");
    b.replaceable = true;
  }

  /** One object's privileges for one grantee, as granted and by default. */
  private static final class Grant {
    final String cls;
    final long oid;
    final String objtype;
    final String ident;
    final String table;
    final String grantee;
    final Set<String> actual = new TreeSet<>();
    final Set<String> actualWithOption = new TreeSet<>();
    final Set<String> defaults = new TreeSet<>();

    Grant(String cls, long oid, String objtype, String ident, String table, String grantee) {
      this.cls = cls;
      this.oid = oid;
      this.objtype = objtype;
      this.ident = ident;
      this.table = table;
      this.grantee = grantee;
    }
  }

  private void grants() throws SQLException {
    Map<String, Grant> grants = new LinkedHashMap<>();
    try (PreparedStatement s = connection.prepareStatement(GRANTS)) {
      Array names = connection.createArrayOf("text", schemas.toArray());
      s.setArray(1, names);
      s.setString(2, reader.defaultSchema());
      s.setString(3, ScratchPostgres.HISTORY_TABLE);
      s.setArray(4, names);
      s.setArray(5, names);
      s.setArray(6, names);
      try (ResultSet r = s.executeQuery()) {
        while (r.next()) {
          String key = r.getString(1) + ":" + r.getLong(2) + ":" + r.getString(8);
          Grant g = grants.get(key);
          if (g == null) {
            String table =
                r.getString(5) == null ? null : reader.name(r.getString(6), r.getString(5));
            g =
                new Grant(
                    r.getString(1),
                    r.getLong(2),
                    r.getString(3),
                    reader.norm(r.getString(4)),
                    table,
                    r.getString(8));
            grants.put(key, g);
          }
          if (r.getBoolean(7)) {
            g.defaults.add(r.getString(9));
          } else if (r.getBoolean(10)) {
            g.actualWithOption.add(r.getString(9));
          } else {
            g.actual.add(r.getString(9));
          }
        }
      }
      names.free();
    }
    for (Grant g : grants.values()) {
      if (g.actualWithOption.isEmpty() && g.actual.equals(g.defaults)) {
        continue;
      }
      String on = " ON " + g.objtype + " " + g.ident;
      Builder b =
          add(
              Kind.GRANT,
              g.objtype.toLowerCase(Locale.ROOT) + " " + g.ident + " to " + g.grantee,
              null);
      b.table = g.table;
      b.definition =
          (g.actual.isEmpty() ? "no privileges" : String.join(", ", g.actual))
              + (g.actualWithOption.isEmpty()
                  ? ""
                  : "; with grant option: " + String.join(", ", g.actualWithOption));
      b.create.add("REVOKE ALL" + on + " FROM " + g.grantee + ";");
      if (!g.actual.isEmpty()) {
        b.create.add("GRANT " + String.join(", ", g.actual) + on + " TO " + g.grantee + ";");
      }
      if (!g.actualWithOption.isEmpty()) {
        b.create.add(
            "GRANT "
                + String.join(", ", g.actualWithOption)
                + on
                + " TO "
                + g.grantee
                + " WITH GRANT OPTION;");
      }
      b.drop.add("REVOKE ALL" + on + " FROM " + g.grantee + ";");
      if (!g.defaults.isEmpty()) {
        b.drop.add("GRANT " + String.join(", ", g.defaults) + on + " TO " + g.grantee + ";");
      }
      b.replaceable = true;
      Builder target = byOid.get(g.cls + ":" + g.oid);
      if (target != null) {
        b.requires.add(target.key());
      }
    }
  }

  private void dependencies() throws SQLException {
    try (PreparedStatement s = connection.prepareStatement(DEPENDENCIES)) {
      s.setLong(1, FIRST_USER_OID);
      s.setLong(2, FIRST_USER_OID);
      try (ResultSet r = s.executeQuery()) {
        while (r.next()) {
          Builder from = byOid.get(r.getString(1) + ":" + r.getLong(2));
          if (from == null) {
            continue;
          }
          String refClass = r.getString(3);
          long ref = r.getLong(4);
          Builder to = byOid.get(refClass + ":" + ref);
          if (to != null) {
            if (to != from) {
              from.requires.add(to.key());
            }
          } else if (refClass.equals("pg_class") && tables.containsKey(ref)) {
            int column = r.getInt(5);
            String used = column > 0 ? columns.get(ref + ":" + column) : tables.get(ref);
            if (used != null) {
              from.uses.add(used);
            }
          } else if (refClass.equals("pg_type") && tableTypes.containsKey(ref)) {
            from.uses.add(tableTypes.get(ref));
          }
        }
      }
    }
  }

  /**
   * Functions are made before the tables unless they use a table or a late item; everything else
   * keeps its kind's place.
   */
  private void settleEarly() {
    boolean changed = true;
    while (changed) {
      changed = false;
      for (Builder b : items.values()) {
        if (b.early && !EARLY_KINDS.contains(b.kind)) {
          boolean late =
              !b.uses.isEmpty()
                  || b.requires.stream().map(items::get).anyMatch(x -> x != null && !x.early);
          if (late) {
            b.early = false;
            changed = true;
          }
        }
      }
    }
  }

  private interface RowHandler {
    void row(ResultSet r) throws SQLException;
  }

  /** Runs a query whose every parameter is the schema list (and the history table's name). */
  private void query(String sql, RowHandler handler) throws SQLException {
    try (PreparedStatement s = connection.prepareStatement(sql)) {
      Array names = connection.createArrayOf("text", schemas.toArray());
      int count = s.getParameterMetaData().getParameterCount();
      for (int i = 1; i <= count; i++) {
        s.setArray(i, names);
      }
      try (ResultSet r = s.executeQuery()) {
        while (r.next()) {
          handler.row(r);
        }
      }
      names.free();
    }
  }
}

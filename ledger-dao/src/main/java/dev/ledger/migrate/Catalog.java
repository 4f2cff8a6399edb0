package dev.ledger.migrate;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_DOMAINS;
import static org.jooq.impl.DSL.arrayAgg;
import static org.jooq.impl.DSL.arrayGet;
import static org.jooq.impl.DSL.concat;
import static org.jooq.impl.DSL.field;
import static org.jooq.impl.DSL.function;
import static org.jooq.impl.DSL.generateSeries;
import static org.jooq.impl.DSL.inline;
import static org.jooq.impl.DSL.listAgg;
import static org.jooq.impl.DSL.md5;
import static org.jooq.impl.DSL.name;
import static org.jooq.impl.DSL.select;
import static org.jooq.impl.DSL.table;
import static org.jooq.impl.DSL.when;

import dev.ledger.schema.LedgerMigrations;
import dev.ledger.schema.RenderMappedDsl;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Record8;
import org.jooq.Select;
import org.jooq.SelectOrderByStep;
import org.jooq.Table;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * The job's reads of a database's state, each one statement through jOOQ, whatever the number of
 * schemas (except the history reads, one per {@value #HISTORY_BATCH} schemas):
 *
 * <ul>
 *   <li>{@link #fingerprints}: every domain schema and the directory schema from {@code
 *       pg_catalog}, with the MD5 of its catalog lines (see {@link ExpectedCatalog}) and its table
 *       names;
 *   <li>{@link #details}: the catalog lines themselves, for the few schemas whose fingerprint
 *       differs or whose shape must be detected;
 *   <li>{@link #routes}: the routing table {@code ledger_domains};
 *   <li>{@link #histories}: every schema's Flyway history rows, a {@code UNION ALL} of one {@code
 *       SELECT} per history table, in batches of {@value #HISTORY_BATCH} schemas. A statement that
 *       reads N tables holds about 3N relation locks (each history table and its two indexes) until
 *       it ends; PostgreSQL's default lock table holds about 6,400 for the whole server (64 per
 *       connection), and one statement over 2,000 schemas came close to "out of shared memory". A
 *       batch of 200 holds about 600.
 * </ul>
 *
 * <p>Identifiers come from {@code pg_namespace} or the routing table, are checked to have the shape
 * of a domain schema name, and are quoted by jOOQ ({@link DSL#name(String...)}); values are bind
 * values or inlined constants.
 */
final class Catalog {

  /** Schemas per history statement. */
  static final int HISTORY_BATCH = 200;

  /** Up to this many schemas in scope are matched with {@code = ANY}, more through a subquery. */
  static final int SMALL_SCOPE = 32;

  /** The POSIX regular expression of a domain schema name (as {@code DomainSchemas}). */
  static final String DOMAIN_SCHEMA_REGEX = "^ledger_[a-z0-9_]{0,40}_[0-9a-f]{8}$";

  /** Tables of the directory schema the job looks at. */
  static final List<String> DIRECTORY_TABLES = directoryTables();

  private static List<String> directoryTables() {
    List<String> out = new ArrayList<>(ExpectedCatalog.DIRECTORY.tables());
    out.add(LedgerMigrations.DIRECTORY_HISTORY);
    out.add(SharedTables.TASKS);
    out.add(SharedTables.EVENTS);
    return List.copyOf(out);
  }

  private static final Table<?> N = table(name("pg_catalog", "pg_namespace")).as("n");
  private static final Field<Long> N_OID = field(name("n", "oid"), Long.class);
  private static final Field<String> N_NAME = field(name("n", "nspname"), String.class);

  private static final Table<?> C = table(name("pg_catalog", "pg_class")).as("c");
  private static final Field<Long> C_OID = field(name("c", "oid"), Long.class);
  private static final Field<String> C_NAME = field(name("c", "relname"), String.class);
  private static final Field<Long> C_NAMESPACE = field(name("c", "relnamespace"), Long.class);
  private static final Field<String> C_KIND = field(name("c", "relkind"), String.class);

  private static final Table<?> A = table(name("pg_catalog", "pg_attribute")).as("a");
  private static final Field<Long> A_REL = field(name("a", "attrelid"), Long.class);
  private static final Field<String> A_NAME = field(name("a", "attname"), String.class);
  private static final Field<Short> A_NUM = field(name("a", "attnum"), Short.class);
  private static final Field<Boolean> A_DROPPED = field(name("a", "attisdropped"), Boolean.class);
  private static final Field<Boolean> A_NOT_NULL = field(name("a", "attnotnull"), Boolean.class);
  private static final Field<Long> A_TYPE = field(name("a", "atttypid"), Long.class);
  private static final Field<Integer> A_TYPMOD = field(name("a", "atttypmod"), Integer.class);

  private static final Table<?> I = table(name("pg_catalog", "pg_index")).as("i");
  private static final Field<Long> I_TABLE = field(name("i", "indrelid"), Long.class);
  private static final Field<Long> I_INDEX = field(name("i", "indexrelid"), Long.class);
  private static final Field<Boolean> I_UNIQUE = field(name("i", "indisunique"), Boolean.class);
  private static final Field<Short[]> I_KEY =
      field(name("i", "indkey"), SQLDataType.SMALLINT.array());
  private static final Field<Short[]> I_OPTION =
      field(name("i", "indoption"), SQLDataType.SMALLINT.array());
  private static final Field<Integer> I_KEY_COLUMNS =
      field(name("i", "indnkeyatts"), Integer.class);

  private static final Table<?> IC = table(name("pg_catalog", "pg_class")).as("ic");
  private static final Field<Long> IC_OID = field(name("ic", "oid"), Long.class);
  private static final Field<String> IC_NAME = field(name("ic", "relname"), String.class);

  private static final Table<?> KA = table(name("pg_catalog", "pg_attribute")).as("ka");
  private static final Field<Long> KA_REL = field(name("ka", "attrelid"), Long.class);
  private static final Field<String> KA_NAME = field(name("ka", "attname"), String.class);
  private static final Field<Short> KA_NUM = field(name("ka", "attnum"), Short.class);

  private static final Field<Integer> K = field(name("s", "k"), Integer.class);

  private static final Field<String> SCOPE_NAME = field(name("scope", "schema_name"), String.class);

  private static final Field<String> ITEM_SCHEMA =
      field(name("items", "schema_name"), String.class);
  private static final Field<String> ITEM_REL = field(name("items", "rel"), String.class);
  private static final Field<String> ITEM_KIND = field(name("items", "kind"), String.class);
  private static final Field<String> ITEM_LINE = field(name("items", "line"), String.class);

  private static final Field<Integer> H_RANK = field(name("installed_rank"), Integer.class);
  private static final Field<String> H_VERSION = field(name("version"), String.class);
  private static final Field<String> H_DESCRIPTION = field(name("description"), String.class);
  private static final Field<String> H_TYPE = field(name("type"), String.class);
  private static final Field<String> H_SCRIPT = field(name("script"), String.class);
  private static final Field<Integer> H_CHECKSUM = field(name("checksum"), Integer.class);
  private static final Field<Boolean> H_SUCCESS = field(name("success"), Boolean.class);

  private final DSLContext ctx;
  private final RenderMappedDsl mapped;
  private final String directorySchema;
  private final int readers;

  /**
   * Creates the reader.
   *
   * @param ctx a plain context over the database (statements counted by its listeners)
   * @param mapped render-mapped contexts over the same database, for the routing table
   * @param directorySchema the directory schema, unquoted
   * @param readers how many history batches are read at once, each on its own connection
   */
  Catalog(DSLContext ctx, RenderMappedDsl mapped, String directorySchema, int readers) {
    this.ctx = ctx;
    this.mapped = mapped;
    this.directorySchema = directorySchema;
    this.readers = readers;
  }

  /**
   * One schema's catalog summary.
   *
   * @param schema the schema, unquoted
   * @param fingerprint the MD5 of its catalog lines (for the directory, of the routing tables'
   *     lines only; for a domain schema, of every table but the history)
   * @param tables the names of its tables (for the directory, only those of {@link
   *     #DIRECTORY_TABLES}); empty for a schema without tables
   */
  record Fingerprint(String schema, String fingerprint, Set<String> tables) {}

  /**
   * One row of a Flyway history table.
   *
   * @param rank {@code installed_rank}
   * @param version the version, null for repeatable migrations and the schema-creation marker
   * @param description the description
   * @param type {@code SQL}, {@code BASELINE}, {@code SCHEMA}, ...
   * @param script the script name
   * @param checksum the recorded checksum, null for markers
   * @param success whether it succeeded
   */
  record HistoryRow(
      int rank,
      String version,
      String description,
      String type,
      String script,
      Integer checksum,
      boolean success) {}

  /**
   * A routing row.
   *
   * @param domain the domain
   * @param stored the schema as stored (quoted)
   */
  record Route(String domain, String stored) {}

  /**
   * The directory schema and every schema named like a domain schema (or only those given).
   *
   * @param only the domain schemas to look at, or null for every one named like a domain schema
   * @return one summary per existing schema, by name; a schema absent from the map does not exist
   */
  Map<String, Fingerprint> fingerprints(Collection<String> only) {
    Condition inFingerprint =
        ITEM_KIND
            .ne(inline("schema"))
            .and(
                ITEM_SCHEMA
                    .eq(directorySchema)
                    .and(
                        ITEM_REL.in(
                            ExpectedCatalog.DIRECTORY.tables().stream().map(DSL::inline).toList()))
                    .or(
                        ITEM_SCHEMA
                            .ne(directorySchema)
                            .and(ITEM_REL.ne(inline(LedgerMigrations.DOMAIN_HISTORY)))));
    Field<String> fingerprint =
        md5(
            listAgg(ITEM_LINE, "\n")
                .withinGroupOrderBy(ITEM_LINE.collate("C"))
                .filterWhere(inFingerprint));
    Field<String[]> tables = arrayAgg(ITEM_REL).filterWhere(ITEM_KIND.eq(inline("table")));
    Map<String, Fingerprint> out = new HashMap<>();
    for (Record r :
        ctx.select(ITEM_SCHEMA, fingerprint, tables)
            .from(items(only).asTable("items"))
            .groupBy(ITEM_SCHEMA)
            .fetch()) {
      String schema = r.get(ITEM_SCHEMA);
      String[] names = r.get(tables);
      Set<String> set = new TreeSet<>();
      if (names != null) {
        set.addAll(Arrays.asList(names));
      }
      String md5 = r.get(fingerprint);
      out.put(
          schema,
          new Fingerprint(schema, md5 == null ? ExpectedCatalog.fingerprint(Set.of()) : md5, set));
    }
    return out;
  }

  /**
   * The catalog lines of some schemas.
   *
   * @param schemas domain schemas (and possibly the directory schema), unquoted
   * @return per schema, its lines (the directory: of {@link #DIRECTORY_TABLES} only; a domain
   *     schema: of every table but the history)
   */
  Map<String, Set<String>> details(Collection<String> schemas) {
    Map<String, Set<String>> out = new HashMap<>();
    if (schemas.isEmpty()) {
      return out;
    }
    for (Record r :
        ctx.select(ITEM_SCHEMA, ITEM_REL, ITEM_LINE)
            .from(items(schemas).asTable("items"))
            .where(ITEM_KIND.ne(inline("schema")))
            .and(ITEM_REL.ne(inline(LedgerMigrations.DOMAIN_HISTORY)))
            .fetch()) {
      out.computeIfAbsent(r.get(ITEM_SCHEMA), k -> new TreeSet<>()).add(r.get(ITEM_LINE));
    }
    return out;
  }

  /**
   * The rows of the routing table, by domain.
   *
   * @return the routes in domain order
   */
  List<Route> routes() {
    return mapped
        .directory()
        .select(LEDGER_DOMAINS.DOMAIN, LEDGER_DOMAINS.SCHEMA)
        .from(LEDGER_DOMAINS)
        .orderBy(LEDGER_DOMAINS.DOMAIN)
        .fetch(r -> new Route(r.value1(), r.value2()));
  }

  /**
   * The Flyway history rows of some schemas, {@value #HISTORY_BATCH} schemas per statement.
   *
   * @param tables per schema (unquoted, each checked by the caller), its history table's name
   * @return per schema, its rows by {@code installed_rank}
   */
  Map<String, List<HistoryRow>> histories(Map<String, String> tables) {
    Map<String, List<HistoryRow>> out = new HashMap<>();
    tables.keySet().forEach(schema -> out.put(schema, new ArrayList<>()));
    List<Map.Entry<String, String>> all = new ArrayList<>(tables.entrySet());
    List<List<Map.Entry<String, String>>> batches = new ArrayList<>();
    for (int from = 0; from < all.size(); from += HISTORY_BATCH) {
      batches.add(all.subList(from, Math.min(all.size(), from + HISTORY_BATCH)));
    }
    List<List<Tagged>> read = new ArrayList<>();
    if (batches.size() <= 1 || readers <= 1) {
      for (List<Map.Entry<String, String>> batch : batches) {
        read.add(historyBatch(batch));
      }
    } else {
      // each batch is planned on its own connection: planning dominates (every table and its
      // indexes are opened), so the batches run side by side
      ExecutorService pool = Executors.newFixedThreadPool(Math.min(readers, batches.size()));
      try {
        List<Future<List<Tagged>>> futures = new ArrayList<>();
        for (List<Map.Entry<String, String>> batch : batches) {
          futures.add(pool.submit(() -> historyBatch(batch)));
        }
        for (Future<List<Tagged>> f : futures) {
          read.add(f.get());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new DataAccessException("interrupted while reading the Flyway histories", e);
      } catch (ExecutionException e) {
        if (e.getCause() instanceof RuntimeException r) {
          throw r;
        }
        throw new DataAccessException("reading the Flyway histories failed", e.getCause());
      } finally {
        pool.shutdownNow();
      }
    }
    for (int b = 0; b < batches.size(); b++) {
      for (Tagged tagged : read.get(b)) {
        out.get(batches.get(b).get(tagged.index()).getKey()).add(tagged.row());
      }
    }
    out.values().forEach(rows -> rows.sort((x, y) -> Integer.compare(x.rank(), y.rank())));
    return out;
  }

  /**
   * One {@code UNION ALL} over a batch of history tables.
   *
   * @return the rows, each with its schema's index in the batch
   */
  private List<Tagged> historyBatch(List<Map.Entry<String, String>> batch) {
    SelectOrderByStep<Record8<Integer, Integer, String, String, String, String, Integer, Boolean>>
        union = null;
    for (int i = 0; i < batch.size(); i++) {
      var one =
          select(
                  inline(i).as("target"),
                  H_RANK,
                  H_VERSION,
                  H_DESCRIPTION,
                  H_TYPE,
                  H_SCRIPT,
                  H_CHECKSUM,
                  H_SUCCESS)
              .from(table(name(batch.get(i).getKey(), batch.get(i).getValue())));
      union = union == null ? one : union.unionAll(one);
    }
    List<Tagged> rows = new ArrayList<>();
    for (var r : ctx.fetch(union)) {
      rows.add(
          new Tagged(
              r.value1(),
              new HistoryRow(
                  r.value2(),
                  r.value3(),
                  r.value4(),
                  r.value5(),
                  r.value6(),
                  r.value7(),
                  Boolean.TRUE.equals(r.value8()))));
    }
    return rows;
  }

  /** A history row and the index of its schema in its batch. */
  private record Tagged(int index, HistoryRow row) {}

  /**
   * One row per catalog line of the schemas in scope: {@code (schema_name, rel, kind, line)}, kinds
   * {@code schema} (one per schema, so a schema without tables still shows), {@code table}, {@code
   * column} and {@code index}.
   */
  private Select<? extends Record> items(Collection<String> only) {
    Condition domainSchemas;
    if (only == null) {
      domainSchemas = N_NAME.likeRegex(DOMAIN_SCHEMA_REGEX);
    } else {
      // the scope is one array bind value. A few names: "= ANY (array)", which PostgreSQL can look
      // up in the catalog's name index. Many: a subquery over the unnested array, which it hashes
      // once: "= ANY" is tested on every catalog row joined (every column of every table), by a
      // linear walk of the array unless the server hashes it, and 9,000 names took 15 minutes.
      String[] names = only.toArray(String[]::new);
      domainSchemas =
          (names.length <= SMALL_SCOPE
                  ? N_NAME.eq(DSL.any(DSL.val(names)))
                  : N_NAME
                      .cast(SQLDataType.CLOB)
                      .in(
                          select(SCOPE_NAME)
                              .from(DSL.unnest(DSL.val(names)).as("scope", "schema_name"))))
              .and(N_NAME.ne(directorySchema));
    }
    Condition schemaScope = N_NAME.eq(directorySchema).or(domainSchemas);
    Condition tableScope =
        C_KIND
            .in(inline("r"), inline("p"))
            .and(
                N_NAME
                    .eq(directorySchema)
                    .and(C_NAME.in(DIRECTORY_TABLES.stream().map(DSL::inline).toList()))
                    .or(domainSchemas));

    var schemas =
        select(
                N_NAME.as("schema_name"),
                inline("").as("rel"),
                inline("schema").as("kind"),
                inline("schema").as("line"))
            .from(N)
            .where(schemaScope);
    var tables =
        select(N_NAME, C_NAME, inline("table"), concat(inline("table "), C_NAME))
            .from(N)
            .join(C)
            .on(C_NAMESPACE.eq(N_OID))
            .where(tableScope);
    var columns =
        select(
                N_NAME,
                C_NAME,
                inline("column"),
                concat(
                    inline("column "),
                    C_NAME,
                    inline("."),
                    A_NAME,
                    inline(" "),
                    function("format_type", String.class, A_TYPE, A_TYPMOD),
                    when(DSL.condition(A_NOT_NULL), inline(" not null"))
                        .otherwise(inline(" null"))))
            .from(N)
            .join(C)
            .on(C_NAMESPACE.eq(N_OID))
            .join(A)
            .on(A_REL.eq(C_OID))
            .where(tableScope)
            .and(A_NUM.gt(inline((short) 0)))
            .and(A_DROPPED.isFalse());
    Field<String> keyColumns =
        field(
            select(
                    listAgg(
                            concat(
                                DSL.coalesce(KA_NAME, inline("(expression)")),
                                when(
                                        arrayGet(I_OPTION, K.minus(inline(1)))
                                            .bitAnd(inline((short) 1))
                                            .eq(inline((short) 1)),
                                        inline(" desc"))
                                    .otherwise(inline(""))),
                            ", ")
                        .withinGroupOrderBy(K))
                .from(generateSeries(inline(1), I_KEY_COLUMNS).as("s", "k"))
                .leftJoin(KA)
                .on(KA_REL.eq(I_TABLE).and(KA_NUM.eq(arrayGet(I_KEY, K.minus(inline(1)))))));
    var indexes =
        select(
                N_NAME,
                C_NAME,
                inline("index"),
                concat(
                    inline("index "),
                    C_NAME,
                    inline("."),
                    IC_NAME,
                    when(DSL.condition(I_UNIQUE), inline(" unique ("))
                        .otherwise(inline(" plain (")),
                    keyColumns,
                    inline(")")))
            .from(N)
            .join(C)
            .on(C_NAMESPACE.eq(N_OID))
            .join(I)
            .on(I_TABLE.eq(C_OID))
            .join(IC)
            .on(IC_OID.eq(I_INDEX))
            .where(tableScope)
            .and(DSL.not(inline((short) 0).eq(DSL.any(I_KEY))));
    return schemas.unionAll(tables).unionAll(columns).unionAll(indexes);
  }
}

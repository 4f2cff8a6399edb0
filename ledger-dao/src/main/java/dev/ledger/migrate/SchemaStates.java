package dev.ledger.migrate;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_DOMAINS;
import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_SCHEMA_STATE;
import static org.jooq.impl.DSL.castNull;
import static org.jooq.impl.DSL.excluded;
import static org.jooq.impl.DSL.field;
import static org.jooq.impl.DSL.function;
import static org.jooq.impl.DSL.inline;
import static org.jooq.impl.DSL.name;
import static org.jooq.impl.DSL.row;
import static org.jooq.impl.DSL.select;
import static org.jooq.impl.DSL.table;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.InsertValuesStep7;
import org.jooq.Record8;
import org.jooq.Table;
import org.jooq.impl.DSL;

/**
 * The directory's record of what each schema holds ({@code ledger_schema_state}, directory V4), as
 * the migration job reads and writes it:
 *
 * <ul>
 *   <li>{@link #probe}: one catalog statement, whether the state table exists and whether the
 *       directory schema holds tables named {@code tasks} and {@code events} (shared tables the job
 *       must look at);
 *   <li>{@link #read}: one statement, every route of {@code ledger_domains} with its schema's state
 *       row (if any) and whether that schema exists, plus the directory's own row;
 *   <li>{@link #record} and {@link #forget}: upserts and deletes, {@value #WRITE_BATCH} rows per
 *       statement.
 * </ul>
 *
 * <p>A row means: the schema was found current (history complete, checksums matching, catalog as
 * expected) with a migration set whose latest version and {@link dev.ledger.schema.MigrationDigest
 * digest} it holds. The job trusts a row that matches its own set, as Flyway trusts its history
 * table.
 */
final class SchemaStates {

  /** Rows per insert or delete statement (7 bind values a row). */
  static final int WRITE_BATCH = 1000;

  /** {@code kind} of the directory schema's own row. */
  static final String DIRECTORY = "directory";

  /** {@code kind} of a domain schema's row. */
  static final String DOMAIN = "domain";

  /** {@code recorded_by} of the rows the job writes. */
  static final String RECORDED_BY_JOB = "migrate";

  private static final Table<?> N = table(name("pg_catalog", "pg_namespace")).as("n");
  private static final Field<String> N_NAME = field(name("n", "nspname"), String.class);

  private final DSLContext plain;
  private final DSLContext directory;
  private final String directorySchema;

  /**
   * Creates the access.
   *
   * @param plain a context over the database (statements counted by its listeners)
   * @param directory the render-mapped context of the directory schema
   * @param directorySchema the directory schema, unquoted
   */
  SchemaStates(DSLContext plain, DSLContext directory, String directorySchema) {
    this.plain = plain;
    this.directory = directory;
    this.directorySchema = directorySchema;
  }

  /**
   * What the catalog says about the directory schema, in one statement.
   *
   * @param stateTable whether {@code ledger_schema_state} exists in the directory schema
   * @param sharedTables whether tables named {@code tasks} and {@code events} both exist there
   */
  record Probe(boolean stateTable, boolean sharedTables) {}

  /**
   * One route and its schema's state row.
   *
   * @param domain the domain; null for the directory's own row
   * @param stored the routing table's schema value as stored (quoted); for the directory's row, the
   *     directory schema
   * @param version the recorded version; null when the schema has no row
   * @param digest the recorded migration digest; null when the schema has no row
   * @param extras the recorded catalog extras; empty when none or no row
   * @param exists whether a schema of the recorded name exists (false without a row)
   */
  record Row(
      String domain,
      String stored,
      String version,
      String digest,
      List<String> extras,
      boolean exists) {

    /**
     * Whether the row says the schema is current with a set.
     *
     * @param set the set of this build
     * @return true when the schema exists and its row holds the set's latest version and digest
     */
    boolean matches(MigrationSet set) {
      return exists
          && version != null
          && version.equals(set.latest())
          && set.digest().equals(digest);
    }
  }

  /**
   * What {@link #read} found.
   *
   * @param directory the directory's own row; null when it has none
   * @param routes one row per route of {@code ledger_domains}, in no particular order
   */
  record Recorded(Row directory, List<Row> routes) {}

  /**
   * A row to write.
   *
   * @param schema the schema, unquoted
   * @param kind {@value #DIRECTORY} or {@value #DOMAIN}
   * @param version the set's latest version
   * @param digest the set's digest
   * @param extras the schema's catalog extras
   */
  record Entry(String schema, String kind, String version, String digest, List<String> extras) {}

  /**
   * Whether the state table exists and whether the directory holds tables named like the shared
   * tables: one statement over {@code pg_catalog} ({@code to_regclass}, names quoted by jOOQ and
   * given as bind values).
   *
   * @return the probe
   */
  Probe probe() {
    Field<Boolean> state = exists(LEDGER_SCHEMA_STATE.getName());
    Field<Boolean> tasks = exists(SharedTables.TASKS);
    Field<Boolean> events = exists(SharedTables.EVENTS);
    var r = plain.select(state, tasks, events).fetchSingle();
    return new Probe(
        Boolean.TRUE.equals(r.value1()),
        Boolean.TRUE.equals(r.value2()) && Boolean.TRUE.equals(r.value3()));
  }

  private Field<Boolean> exists(String table) {
    return DSL.field(
        function("to_regclass", Object.class, DSL.val(name(directorySchema, table).toString()))
            .isNotNull());
  }

  /**
   * Every route with its schema's state row, and the directory's row, in one statement: the routing
   * table left-joined to the state table on the schema name (quotes stripped) and to {@code
   * pg_namespace}, then the directory's row. Only rows of the right kind are joined.
   *
   * @return what is recorded
   */
  Recorded read() {
    var s = LEDGER_SCHEMA_STATE;
    var d = LEDGER_DOMAINS;
    Field<Boolean> exists = DSL.field(N_NAME.isNotNull());
    var routes =
        select(
                inline(false).as("own"),
                d.DOMAIN,
                d.SCHEMA,
                s.VERSION,
                s.MIGRATIONS_DIGEST,
                s.CATALOG_EXTRAS,
                exists.as("present"),
                s.KIND)
            .from(d)
            .leftJoin(s)
            .on(s.SCHEMA_NAME.eq(DSL.trim(d.SCHEMA, inline("\""))).and(s.KIND.eq(inline(DOMAIN))))
            .leftJoin(N)
            .on(N_NAME.eq(s.SCHEMA_NAME));
    var own =
        select(
                inline(true),
                castNull(String.class),
                s.SCHEMA_NAME,
                s.VERSION,
                s.MIGRATIONS_DIGEST,
                s.CATALOG_EXTRAS,
                inline(true),
                s.KIND)
            .from(s)
            .where(s.SCHEMA_NAME.eq(directorySchema))
            .and(s.KIND.eq(inline(DIRECTORY)));
    Row directoryRow = null;
    List<Row> out = new ArrayList<>();
    for (Record8<Boolean, String, String, String, String, String[], Boolean, String> r :
        directory.fetch(routes.unionAll(own))) {
      Row row =
          new Row(
              r.value2(),
              r.value3(),
              r.value4(),
              r.value5(),
              r.value6() == null ? List.of() : List.of(r.value6()),
              Boolean.TRUE.equals(r.value7()));
      if (Boolean.TRUE.equals(r.value1())) {
        directoryRow = row;
      } else {
        out.add(row);
      }
    }
    return new Recorded(directoryRow, out);
  }

  /**
   * Writes rows, inserting or updating; a row equal in kind, version, digest and extras is left as
   * it is (its {@code recorded_at} too).
   *
   * @param entries the rows
   * @param at the time to record
   * @return the rows inserted or changed
   */
  int record(Collection<Entry> entries, Instant at) {
    var s = LEDGER_SCHEMA_STATE;
    List<Entry> all = new ArrayList<>(entries);
    int written = 0;
    for (int from = 0; from < all.size(); from += WRITE_BATCH) {
      InsertValuesStep7<?, String, String, String, String, String[], String, Instant> insert =
          directory.insertInto(
              s,
              s.SCHEMA_NAME,
              s.KIND,
              s.VERSION,
              s.MIGRATIONS_DIGEST,
              s.CATALOG_EXTRAS,
              s.RECORDED_BY,
              s.RECORDED_AT);
      for (Entry e : all.subList(from, Math.min(all.size(), from + WRITE_BATCH))) {
        insert =
            insert.values(
                e.schema(),
                e.kind(),
                e.version(),
                e.digest(),
                e.extras().toArray(String[]::new),
                RECORDED_BY_JOB,
                at);
      }
      written +=
          insert
              .onConflict(s.SCHEMA_NAME)
              .doUpdate()
              .set(s.KIND, excluded(s.KIND))
              .set(s.VERSION, excluded(s.VERSION))
              .set(s.MIGRATIONS_DIGEST, excluded(s.MIGRATIONS_DIGEST))
              .set(s.CATALOG_EXTRAS, excluded(s.CATALOG_EXTRAS))
              .set(s.RECORDED_BY, excluded(s.RECORDED_BY))
              .set(s.RECORDED_AT, excluded(s.RECORDED_AT))
              .where(
                  row(s.KIND, s.VERSION, s.MIGRATIONS_DIGEST, s.CATALOG_EXTRAS)
                      .isDistinctFrom(
                          row(
                              excluded(s.KIND),
                              excluded(s.VERSION),
                              excluded(s.MIGRATIONS_DIGEST),
                              excluded(s.CATALOG_EXTRAS))))
              .execute();
    }
    return written;
  }

  /**
   * Deletes the rows of schemas found not current, where they say current with this build's set (so
   * the next run checks them in full again); rows of another set are left alone.
   *
   * @param schemas the schemas, unquoted
   * @param kind {@value #DIRECTORY} or {@value #DOMAIN}
   * @param set this build's set
   * @return the rows deleted
   */
  int forget(Collection<String> schemas, String kind, MigrationSet set) {
    var s = LEDGER_SCHEMA_STATE;
    List<String> all = new ArrayList<>(schemas);
    int deleted = 0;
    for (int from = 0; from < all.size(); from += WRITE_BATCH) {
      String[] chunk =
          all.subList(from, Math.min(all.size(), from + WRITE_BATCH)).toArray(String[]::new);
      deleted +=
          directory
              .deleteFrom(s)
              .where(s.SCHEMA_NAME.eq(DSL.any(DSL.val(chunk))))
              .and(s.KIND.eq(kind))
              .and(s.VERSION.eq(set.latest() == null ? "" : set.latest()))
              .and(s.MIGRATIONS_DIGEST.eq(set.digest()))
              .execute();
    }
    return deleted;
  }
}

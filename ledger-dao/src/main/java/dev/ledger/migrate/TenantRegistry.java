package dev.ledger.migrate;

import static org.jooq.impl.DSL.field;
import static org.jooq.impl.DSL.name;
import static org.jooq.impl.DSL.table;

import dev.ledger.codegen.convert.Rfc3339;
import dev.ledger.schema.LedgerMigrations;
import java.time.Instant;
import java.util.List;
import javax.sql.DataSource;
import org.flywaydb.core.api.FlywayException;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record5;
import org.jooq.SQLDialect;
import org.jooq.Table;
import org.jooq.conf.Settings;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;

/**
 * The fleet's tenant registry in a control database: the reference reconciler's {@code
 * harness_tenants} ({@code tenant}, {@code dsn}, {@code status}), read and written the way its
 * {@code bootstrap_registry}, {@code register_tenant}, {@code tenants} and {@code
 * set_tenant_status} do, so both reconcilers see one fleet. What that table has no column for, why
 * a tenant went degraded and when ledger-app last set its status, is kept in {@code
 * ledger_tenant_notes}; a note is shown only while {@code harness_tenants} still holds the status
 * it was written with (a status the reference set carries no reason of ours). Both tables, and the
 * move of a registry from before (control V1's {@code ledger_tenants}), come from the control
 * migration set ({@link #bootstrap()}).
 *
 * <pre>{@code
 * TenantRegistry registry = new TenantRegistry(controlDataSource, "public");
 * for (TenantRegistry.Row row : registry.rows()) {
 *   if (row.status() == TenantStatus.ACTIVE) { ... Dsn.parse(row.dsn()) ... }
 * }
 * }</pre>
 *
 * <p>Reads ({@link #rows()}) need only {@code SELECT} on {@code harness_tenants} (and on {@code
 * ledger_tenant_notes} when it exists): a run-time reader never runs DDL. Every failure is a {@link
 * MigrationException} of reason {@link MigrationException.Reason#CONTROL_DATABASE}, its message
 * free of any DSN. Thread-safe: each call takes its own connection from the data source.
 */
public final class TenantRegistry {

  /** The registry table, the reference reconciler's. */
  public static final String TABLE = "harness_tenants";

  /** ledger-app's notes on the statuses it set (reason, time). */
  public static final String NOTES = "ledger_tenant_notes";

  /** The registry of control V1, moved into {@link #TABLE} by control V2. */
  private static final String V1_TABLE = "ledger_tenants";

  private final DataSource control;
  private final String schema;
  private final DSLContext ctx;
  private final Table<?> tenants;
  private final Table<?> notes;
  private final Field<String> tenant;
  private final Field<String> dsn;
  private final Field<String> status;
  private final Field<String> noteTenant;
  private final Field<String> noteStatus;
  private final Field<String> reason;
  private final Field<String> updated;

  /**
   * One registry row, DSN included: never print it (its {@code toString} hides the DSN).
   *
   * @param tenant the id, not null
   * @param dsn the tenant database's connection string, credentials included (a JDBC URL or the
   *     libpq URI the reference stores; {@link Dsn#parse(String)} reads both), not null
   * @param status the status, not null
   * @param reason why it is degraded, as ledger-app recorded it; null when ledger-app did not set
   *     the current status or it is not degraded
   * @param updated when ledger-app set the current status, RFC 3339 UTC; null when the current
   *     status was set by another writer (the reference reconciler) or before notes were kept
   */
  public record Row(String tenant, String dsn, TenantStatus status, String reason, String updated) {
    @Override
    public String toString() {
      return "Row[" + tenant + ", " + status + ", dsn redacted]";
    }

    /**
     * The row as it may be shown.
     *
     * @return the row without its DSN
     */
    public TenantInfo info() {
      return new TenantInfo(tenant, status, reason, updated);
    }
  }

  /**
   * Creates the registry access; opens no connection.
   *
   * @param control the control database, not null
   * @param schema the registry's schema, unquoted, e.g. {@code public} (where the reference's
   *     unqualified {@code harness_tenants} lives: the first schema of its search path)
   */
  public TenantRegistry(DataSource control, String schema) {
    this.control = control;
    this.schema = schema;
    // no execute logging: jOOQ's DEBUG log would print the DSN bind value of a registration
    this.ctx = DSL.using(control, SQLDialect.POSTGRES, new Settings().withExecuteLogging(false));
    this.tenants = table(name(schema, TABLE)).as("h");
    this.notes = table(name(schema, NOTES)).as("n");
    this.tenant = field(name("h", "tenant"), String.class);
    this.dsn = field(name("h", "dsn"), String.class);
    this.status = field(name("h", "status"), String.class);
    this.noteTenant = field(name("n", "tenant"), String.class);
    this.noteStatus = field(name("n", "status"), String.class);
    this.reason = field(name("n", "reason"), String.class);
    this.updated = field(name("n", "updated"), String.class);
  }

  /**
   * Whether the control database holds a registry in this schema: {@code harness_tenants} (made by
   * either reconciler) or an older registry's {@code ledger_tenants} (control V1, which {@link
   * #bootstrap()} moves). One catalog query; runs no DDL.
   *
   * @return true when there is a registry to read or migrate; false for a database (or schema) that
   *     was never a fleet's control database
   * @throws MigrationException when the control database cannot be read
   */
  public boolean exists() {
    Table<?> c = table(name("pg_catalog", "pg_class")).as("c");
    Table<?> n = table(name("pg_catalog", "pg_namespace")).as("n");
    try {
      return ctx.fetchExists(
          DSL.selectOne()
              .from(c)
              .join(n)
              .on(field(name("n", "oid")).eq(field(name("c", "relnamespace"))))
              .where(field(name("n", "nspname"), String.class).eq(schema))
              .and(field(name("c", "relname"), String.class).in(TABLE, V1_TABLE))
              .and(field(name("c", "relkind"), String.class).in(DSL.inline("r"), DSL.inline("p"))));
    } catch (DataAccessException e) {
      throw failure("could not be read", e);
    }
  }

  /**
   * Makes or migrates the registry (Flyway, control set), idempotently: creates {@code
   * harness_tenants} when the reference has not, {@code ledger_tenant_notes}, and moves the tenants
   * of an older {@code ledger_tenants} into them.
   *
   * @throws MigrationException when the control database refuses
   */
  public void bootstrap() {
    try {
      LedgerMigrations.control(control, schema).load().migrate();
    } catch (FlywayException | DataAccessException e) {
      throw failure("could not be bootstrapped", e);
    }
  }

  /**
   * Registers or re-points a tenant as the reference's {@code register_tenant} does (its DSN
   * stored, its status reset to provisioning), and notes the time, in one transaction.
   *
   * @param id the tenant id
   * @param url its database's connection string (checked by the caller)
   * @throws MigrationException when the control database refuses
   */
  void register(String id, String url) {
    String now = Rfc3339.format(Instant.now());
    Table<?> h = table(name(schema, TABLE));
    Field<String> t = field(name("tenant"), String.class);
    Field<String> d = field(name("dsn"), String.class);
    Field<String> s = field(name("status"), String.class);
    try {
      ctx.transaction(
          c -> {
            c.dsl()
                .insertInto(h)
                .columns(t, d, s)
                .values(id, url, TenantStatus.PROVISIONING.stored())
                .onConflict(t)
                .doUpdate()
                .set(d, url)
                .set(s, TenantStatus.PROVISIONING.stored())
                .execute();
            note(c.dsl(), id, TenantStatus.PROVISIONING, null, now);
          });
    } catch (DataAccessException e) {
      throw failure("refused the registration of tenant " + id, e);
    }
  }

  /**
   * Every tenant, by id.
   *
   * @return the rows
   * @throws MigrationException when the control database cannot be read, or a row holds a status
   *     that is none of provisioning, active, degraded (naming the tenant)
   */
  public List<Row> rows() {
    List<Record5<String, String, String, String, String>> read;
    try {
      read =
          ctx.select(tenant, dsn, status, reason, updated)
              .from(tenants)
              .leftJoin(notes)
              .on(noteTenant.eq(tenant).and(noteStatus.eq(status)))
              .orderBy(tenant)
              .fetch();
    } catch (DataAccessException e) {
      if (!"42P01".equals(e.sqlState())) {
        throw failure("could not be read", e);
      }
      // no notes table (a registry only the reference made) or no registry at all
      read = withoutNotes();
    }
    return read.stream()
        .map(
            r ->
                new Row(
                    r.value1(), r.value2(), status(r.value1(), r.value3()), r.value4(), r.value5()))
        .toList();
  }

  private List<Record5<String, String, String, String, String>> withoutNotes() {
    try {
      return ctx.select(
              tenant,
              dsn,
              status,
              DSL.inline((String) null, String.class),
              DSL.inline((String) null, String.class))
          .from(tenants)
          .orderBy(tenant)
          .fetch();
    } catch (DataAccessException e) {
      throw failure("could not be read", e);
    }
  }

  private static TenantStatus status(String id, String stored) {
    try {
      return TenantStatus.parse(stored);
    } catch (IllegalArgumentException e) {
      throw new MigrationException(
          MigrationException.Reason.CONTROL_DATABASE,
          "control database: tenant "
              + id
              + " has status '"
              + stored
              + "' in "
              + TABLE
              + ", which is none of provisioning, active, degraded (fix that row and run again)",
          null);
    }
  }

  /**
   * Records a tenant's status (and the note with its reason), unless the tenant was re-pointed
   * since its row was read: a run that migrated the old DSN does not mark the new one.
   *
   * @param id the tenant id
   * @param migratedDsn the DSN the run migrated, as read from the registry
   * @param newStatus the status
   * @param why the reason (degraded), or null
   * @return true when recorded; false when the tenant is gone or now has another DSN
   * @throws MigrationException when the control database refuses
   */
  boolean setStatus(String id, String migratedDsn, TenantStatus newStatus, String why) {
    Table<?> h = table(name(schema, TABLE));
    Field<String> t = field(name("tenant"), String.class);
    Field<String> d = field(name("dsn"), String.class);
    Field<String> s = field(name("status"), String.class);
    String now = Rfc3339.format(Instant.now());
    try {
      return ctx.transactionResult(
          c -> {
            int updatedRows =
                c.dsl()
                    .update(h)
                    .set(s, newStatus.stored())
                    .where(t.eq(id).and(d.eq(migratedDsn)))
                    .execute();
            if (updatedRows == 0) {
              return false;
            }
            note(c.dsl(), id, newStatus, why, now);
            return true;
          });
    } catch (DataAccessException e) {
      throw failure("could not record the status of tenant " + id, e);
    }
  }

  private void note(DSLContext c, String id, TenantStatus newStatus, String why, String now) {
    Table<?> n = table(name(schema, NOTES));
    Field<String> t = field(name("tenant"), String.class);
    Field<String> s = field(name("status"), String.class);
    Field<String> r = field(name("reason"), String.class);
    Field<String> u = field(name("updated"), String.class);
    c.insertInto(n)
        .columns(t, s, r, u)
        .values(id, newStatus.stored(), why, now)
        .onConflict(t)
        .doUpdate()
        .set(s, newStatus.stored())
        .set(r, why)
        .set(u, now)
        .execute();
  }

  private static MigrationException failure(String what, RuntimeException e) {
    String sqlState = e instanceof DataAccessException d ? d.sqlState() : null;
    return new MigrationException(
        MigrationException.Reason.CONTROL_DATABASE,
        "control database "
            + what
            + ": "
            + MigrationJob.condense(e.getMessage())
            + " (fix the control database and run again)",
        sqlState);
  }
}

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
import org.jooq.SQLDialect;
import org.jooq.Table;
import org.jooq.conf.Settings;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;

/**
 * The tenant registry in the control database ({@code ledger_tenants}, made by the control
 * migration set; ports the reference reconciler's {@code bootstrap_registry}, {@code
 * register_tenant}, {@code tenants}, {@code set_tenant_status}). Every failure is a {@link
 * MigrationException} of reason {@link MigrationException.Reason#CONTROL_DATABASE}, its message
 * free of the control DSN.
 */
final class TenantRegistry {

  private final DataSource control;
  private final String schema;
  private final DSLContext ctx;
  private final Table<?> tenants;
  private final Field<String> tenant = field(name("tenant"), String.class);
  private final Field<String> dsn = field(name("dsn"), String.class);
  private final Field<String> status = field(name("status"), String.class);
  private final Field<String> reason = field(name("reason"), String.class);
  private final Field<String> updated = field(name("updated"), String.class);

  /**
   * One registry row, DSN included: never printed (its {@code toString} hides the DSN).
   *
   * @param tenant the id
   * @param dsn the tenant database's JDBC URL, with credentials
   * @param status the status
   * @param reason why degraded, or null
   * @param updated when the status last changed
   */
  record Row(String tenant, String dsn, TenantStatus status, String reason, String updated) {
    @Override
    public String toString() {
      return "Row[" + tenant + ", " + status + ", dsn redacted]";
    }

    TenantInfo info() {
      return new TenantInfo(tenant, status, reason, updated);
    }
  }

  /**
   * Creates the registry access.
   *
   * @param control the control database
   * @param schema the registry's schema, unquoted
   */
  TenantRegistry(DataSource control, String schema) {
    this.control = control;
    this.schema = schema;
    // no execute logging: jOOQ's DEBUG log would print the DSN bind value of a registration
    this.ctx = DSL.using(control, SQLDialect.POSTGRES, new Settings().withExecuteLogging(false));
    this.tenants = table(name(schema, "ledger_tenants"));
  }

  /** Makes or migrates the registry (Flyway, control set), idempotently. */
  void bootstrap() {
    try {
      LedgerMigrations.control(control, schema).load().migrate();
    } catch (FlywayException | DataAccessException e) {
      throw failure("could not be bootstrapped", e);
    }
  }

  /**
   * Registers or re-points a tenant; its status becomes provisioning, its reason cleared.
   *
   * @param id the tenant id
   * @param url its database's JDBC URL (checked by the caller)
   */
  void register(String id, String url) {
    String now = Rfc3339.format(Instant.now());
    try {
      ctx.insertInto(tenants)
          .columns(tenant, dsn, status, reason, updated)
          .values(id, url, TenantStatus.PROVISIONING.stored(), null, now)
          .onConflict(tenant)
          .doUpdate()
          .set(dsn, url)
          .set(status, TenantStatus.PROVISIONING.stored())
          .set(reason, (String) null)
          .set(updated, now)
          .execute();
    } catch (DataAccessException e) {
      throw failure("refused the registration of tenant " + id, e);
    }
  }

  /**
   * Every tenant, by id.
   *
   * @return the rows
   */
  List<Row> rows() {
    try {
      return ctx.select(tenant, dsn, status, reason, updated)
          .from(tenants)
          .orderBy(tenant)
          .fetch(
              r ->
                  new Row(
                      r.value1(),
                      r.value2(),
                      TenantStatus.parse(r.value3()),
                      r.value4(),
                      r.value5()));
    } catch (DataAccessException e) {
      throw failure("could not be read", e);
    }
  }

  /**
   * Records a tenant's status.
   *
   * @param id the tenant id
   * @param newStatus the status
   * @param why the reason (degraded), or null
   */
  void setStatus(String id, TenantStatus newStatus, String why) {
    try {
      ctx.update(tenants)
          .set(status, newStatus.stored())
          .set(reason, why)
          .set(updated, Rfc3339.format(Instant.now()))
          .where(tenant.eq(id))
          .execute();
    } catch (DataAccessException e) {
      throw failure("could not record the status of tenant " + id, e);
    }
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

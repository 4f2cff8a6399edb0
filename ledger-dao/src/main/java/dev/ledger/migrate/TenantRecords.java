package dev.ledger.migrate;

import java.util.List;
import javax.sql.DataSource;

/**
 * Read access to the fleet's tenant registry for a service that serves the tenants (the serving
 * half of the reference reconciler: its {@code bootstrap_registry} and {@code tenants}), through
 * the same registry code the {@link Fleet} writes with, so both always read one table.
 *
 * <pre>{@code
 * TenantRecords registry = new TenantRecords(controlDataSource, "public");
 * for (TenantRecord r : registry.read()) { ... r.tenant(), r.status(), r.dsn() ... }
 * }</pre>
 *
 * <p>Thread-safe. Every failure is a {@link MigrationException} of reason {@link
 * MigrationException.Reason#CONTROL_DATABASE} whose message holds no DSN.
 */
public final class TenantRecords {

  private final TenantRegistry registry;

  /**
   * Creates the access; touches no database.
   *
   * @param control the control database, not null
   * @param schema the registry's schema, unquoted, 1 to 63 characters
   * @throws IllegalArgumentException naming {@code control} or {@code schema} when refused
   */
  public TenantRecords(DataSource control, String schema) {
    if (control == null) {
      throw new IllegalArgumentException("control: required");
    }
    if (schema == null || schema.isEmpty() || schema.length() > 63) {
      throw new IllegalArgumentException("controlSchema: must be 1 to 63 characters");
    }
    this.registry = new TenantRegistry(control, schema);
  }

  /**
   * Makes or migrates the registry, idempotently (what a fleet run does first).
   *
   * @throws MigrationException when the control database fails
   */
  public void bootstrap() {
    registry.bootstrap();
  }

  /**
   * Every registered tenant, by id, with its database.
   *
   * @return the records, in tenant id order
   * @throws MigrationException when the control database fails (or has no registry yet)
   */
  public List<TenantRecord> read() {
    return registry.rows().stream()
        .map(r -> new TenantRecord(r.tenant(), r.status(), r.reason(), r.dsn()))
        .toList();
  }
}

package dev.ledger.tenants;

import dev.ledger.migrate.Dsn;
import dev.ledger.migrate.TenantRegistry;
import dev.ledger.migrate.TenantStatus;
import java.util.Objects;

/**
 * One row of the registry as the directory keeps it: the row's DSN parsed once ({@link Dsn}, which
 * never shows it). Its {@link #toString()} names the tenant and status only.
 *
 * @param tenant the tenant id
 * @param status its status
 * @param reason why it is degraded (recorded by the fleet, DSN-free), or null
 * @param url the registry's DSN text, only compared
 * @param dsn the parsed DSN, or null when the text is not a connection string {@link Dsn} reads
 */
record RegistryEntry(String tenant, TenantStatus status, String reason, String url, Dsn dsn) {

  static RegistryEntry of(TenantRegistry.Row row) {
    Dsn parsed;
    try {
      parsed = Dsn.parse(row.dsn());
    } catch (IllegalArgumentException e) {
      parsed = null;
    }
    return new RegistryEntry(row.tenant(), row.status(), row.reason(), row.dsn(), parsed);
  }

  /** Whether another entry of the tenant points at the same database (same DSN text). */
  boolean sameDatabase(RegistryEntry other) {
    return Objects.equals(url, other.url);
  }

  @Override
  public String toString() {
    return "RegistryEntry[" + tenant + ", " + status.stored() + ", dsn redacted]";
  }
}

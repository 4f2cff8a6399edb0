package dev.ledger.migrate;

import java.util.Objects;

/**
 * One tenant of the control database's registry as a service needs it to serve the tenant (the
 * reference reconciler's {@code TenantRecord}): its id, status, degraded reason and database.
 *
 * <p>The database is a {@link Dsn}, which never shows its URL; {@link #toString()} names the tenant
 * and status only. Immutable and thread-safe.
 */
public final class TenantRecord {

  private final String tenant;
  private final TenantStatus status;
  private final String reason;
  private final String url;
  private final Dsn dsn;

  TenantRecord(String tenant, TenantStatus status, String reason, String url) {
    this.tenant = tenant;
    this.status = status;
    this.reason = reason;
    this.url = url;
    Dsn parsed;
    try {
      parsed = Dsn.parse(url);
    } catch (IllegalArgumentException e) {
      parsed = null;
    }
    this.dsn = parsed;
  }

  /**
   * The tenant id.
   *
   * @return e.g. {@code acme}
   */
  public String tenant() {
    return tenant;
  }

  /**
   * The status the last fleet run (or registration) recorded.
   *
   * @return the status, never null
   */
  public TenantStatus status() {
    return status;
  }

  /**
   * Why the tenant is degraded, as the fleet recorded it (never a DSN).
   *
   * @return the reason, or null when the tenant is not degraded
   */
  public String reason() {
    return reason;
  }

  /**
   * The tenant's database.
   *
   * @return the DSN, or null when the registry holds a text that is not a PostgreSQL JDBC URL (a
   *     row written around {@link Fleet#register(String, String)})
   */
  public Dsn dsn() {
    return dsn;
  }

  /**
   * Whether another record of the same tenant points at the same database (same URL text).
   *
   * @param other another record, not null
   * @return true when both registry DSNs are the same text
   */
  public boolean sameDatabase(TenantRecord other) {
    return Objects.equals(url, other.url);
  }

  /** The tenant and its status; never the DSN. */
  @Override
  public String toString() {
    return "TenantRecord[" + tenant + ", " + status.stored() + ", dsn redacted]";
  }
}

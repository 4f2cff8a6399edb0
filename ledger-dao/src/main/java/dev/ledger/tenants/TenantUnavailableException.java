package dev.ledger.tenants;

import dev.ledger.LedgerException;

/**
 * A {@link TenantDirectory} refused a tenant: it is unknown, not active in the registry, its
 * database does not answer, or the directory is closed. The message names the tenant, the reason
 * and what to do; it never holds the tenant's DSN (which carries credentials).
 *
 * <p>Port of the reference's request-time refusal: "a degraded tenant is refused at request time,
 * because its pool was never registered" ({@code reconcile.rs}, {@code set_tenant_status}).
 */
public final class TenantUnavailableException extends LedgerException {

  private static final long serialVersionUID = 1L;

  /** Why a tenant is refused. */
  public enum Reason {
    /** Not in the registry (as of the directory's last refresh). */
    UNKNOWN,
    /** Registered or re-pointed, not migrated yet: the registry's {@code provisioning}. */
    PROVISIONING,
    /** Its last fleet run failed: the registry's {@code degraded}. */
    DEGRADED,
    /**
     * Active, but its database did not answer within the connect timeout (its server is down, or
     * the registry's DSN is not a PostgreSQL JDBC URL); refused at once until a probe reaches it.
     */
    UNREACHABLE,
    /** The directory is closed. */
    CLOSED;

    /**
     * The reason as it is printed, lowercase.
     *
     * @return e.g. {@code degraded}
     */
    public String wire() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  private final String tenant;
  private final Reason reason;

  /**
   * Creates the error.
   *
   * @param tenant the tenant id, not null
   * @param reason why, not null
   * @param message the whole message (naming the tenant and the reason), no DSN
   * @param cause the failure behind an {@link Reason#UNREACHABLE}, or null
   */
  TenantUnavailableException(String tenant, Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.tenant = tenant;
    this.reason = reason;
  }

  /**
   * The refused tenant.
   *
   * @return its id
   */
  public String tenant() {
    return tenant;
  }

  /**
   * Why it is refused.
   *
   * @return the reason, never null
   */
  public Reason reason() {
    return reason;
  }
}

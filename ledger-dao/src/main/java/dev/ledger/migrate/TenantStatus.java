package dev.ledger.migrate;

import java.util.Locale;

/**
 * A tenant's status in the control database's registry (the reference reconciler's {@code
 * TenantStatus}); stored lowercase.
 */
public enum TenantStatus {
  /** Registered (or re-pointed); the next fleet migrate promotes it to {@link #ACTIVE}. */
  PROVISIONING,
  /** Its last fleet migrate brought it to the current version. */
  ACTIVE,
  /** Its last fleet migrate failed (the registry keeps the reason); skipped until retried. */
  DEGRADED;

  /**
   * The stored form.
   *
   * @return e.g. {@code active}
   */
  public String stored() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Reads a stored status.
   *
   * @param stored e.g. {@code degraded}
   * @return the status
   * @throws IllegalArgumentException naming the field when the text is no status
   */
  public static TenantStatus parse(String stored) {
    for (TenantStatus s : values()) {
      if (s.stored().equals(stored)) {
        return s;
      }
    }
    throw new IllegalArgumentException(
        "status: expected provisioning, active or degraded, was " + stored);
  }
}

package dev.ledger.migrate;

/**
 * Hears a fleet run's progress. Called from worker threads: thread-safe, quick. Every method does
 * nothing by default.
 */
public interface FleetListener {

  /**
   * The run knows its tenants.
   *
   * @param operation migrate or plan
   * @param tenants how many tenants it will work on
   */
  default void started(Operation operation, int tenants) {}

  /**
   * A tenant's run starts (before its lock is taken).
   *
   * @param tenant the tenant id
   */
  default void tenantStarted(String tenant) {}

  /**
   * A tenant's run ended.
   *
   * @param report its report
   */
  default void tenantFinished(TenantReport report) {}
}

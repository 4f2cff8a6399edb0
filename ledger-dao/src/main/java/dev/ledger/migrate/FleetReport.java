package dev.ledger.migrate;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * What one fleet run found and did.
 *
 * @param operation migrate or plan
 * @param startedAt when it started
 * @param elapsed how long it took
 * @param tenants one report per registered tenant, by tenant id
 * @param active tenants active after the run
 * @param degraded tenants degraded after the run (failed now, or skipped as degraded)
 * @param skipped tenants the run left alone (degraded and not retried, or locked)
 * @param locked tenants skipped because another run held their lock (their status unchanged)
 * @param controlError why the control database failed mid-run (the run stopped starting tenants);
 *     null when it did not
 */
public record FleetReport(
    Operation operation,
    Instant startedAt,
    Duration elapsed,
    List<TenantReport> tenants,
    int active,
    int degraded,
    int skipped,
    int locked,
    String controlError) {

  /** Copies the list. */
  public FleetReport {
    tenants = List.copyOf(tenants);
  }

  /**
   * Whether every tenant ended well: none degraded, no control failure; for a plan, every tenant
   * planned.
   *
   * @return true when so
   */
  public boolean ok() {
    return controlError == null && tenants.stream().allMatch(t -> t.error() == null);
  }
}

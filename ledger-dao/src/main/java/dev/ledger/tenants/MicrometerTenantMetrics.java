package dev.ledger.tenants;

import dev.ledger.migrate.TenantStatus;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Locale;

/**
 * A {@link TenantDirectory}'s meters in a Micrometer {@link MeterRegistry} (Micrometer is an
 * optional dependency of {@code ledger-dao}: this class is loaded only when used). Gauges are read
 * from the directory when the registry samples them; no tenant id, DSN or password is in any meter
 * name or tag:
 *
 * <ul>
 *   <li>gauge {@code ledger.tenants}, tagged {@code state}: {@code served} (active and reachable),
 *       {@code unreachable} (active, its database does not answer), {@code provisioning}, {@code
 *       degraded} (as of the last registry read);
 *   <li>gauges {@code ledger.tenants.connections.open} and {@code
 *       ledger.tenants.connections.budget}: physical tenant connections now, and the most allowed;
 *   <li>counters {@code ledger.tenants.connections.opened} (each a server process fork: it should
 *       stay still in steady state) and {@code ledger.tenants.budget.evictions} (a tenant pool told
 *       to close its idle connections for another tenant);
 *   <li>counter {@code ledger.tenants.refusals}, tagged {@code reason} ({@code unknown}, {@code
 *       provisioning}, {@code degraded}, {@code unreachable}, {@code closed}): refused calls.
 * </ul>
 *
 * <pre>{@code
 * MicrometerTenantMetrics.bind(directory, registry);
 * }</pre>
 */
public final class MicrometerTenantMetrics {

  private MicrometerTenantMetrics() {}

  /**
   * Registers the directory's meters.
   *
   * @param directory the directory, not null; the meters read it while it is open (a closed one
   *     reports what it last knew)
   * @param registry the registry, not null
   * @throws IllegalArgumentException when either is null
   */
  public static void bind(TenantDirectory directory, MeterRegistry registry) {
    if (directory == null || registry == null) {
      throw new IllegalArgumentException("directory and registry: must not be null");
    }
    for (String state : new String[] {"served", "unreachable", "provisioning", "degraded"}) {
      Gauge.builder("ledger.tenants", directory, d -> count(d, state))
          .tag("state", state)
          .description("Registered tenants by how the directory serves them")
          .register(registry);
    }
    Gauge.builder("ledger.tenants.connections.open", directory, TenantDirectory::openConnections)
        .description("Physical tenant connections open now, over all tenant pools")
        .register(registry);
    Gauge.builder("ledger.tenants.connections.budget", directory, TenantDirectory::connectionBudget)
        .description("The most physical tenant connections all tenant pools may hold")
        .register(registry);
    FunctionCounter.builder(
            "ledger.tenants.connections.opened", directory, TenantDirectory::connectionsOpened)
        .description("Physical tenant connections opened (each a server process fork)")
        .register(registry);
    FunctionCounter.builder(
            "ledger.tenants.budget.evictions", directory, TenantDirectory::budgetEvictions)
        .description("Tenant pools told to close idle connections to make room for another")
        .register(registry);
    for (TenantUnavailableException.Reason r : TenantUnavailableException.Reason.values()) {
      FunctionCounter.builder("ledger.tenants.refusals", directory, d -> d.refusals(r))
          .tag("reason", r.name().toLowerCase(Locale.ROOT))
          .description("Calls the directory refused, by reason")
          .register(registry);
    }
  }

  private static double count(TenantDirectory d, String state) {
    int n = 0;
    for (TenantState s : d.states()) {
      String is;
      if (s.served()) {
        is = s.reachable() ? "served" : "unreachable";
      } else if (s.status() == TenantStatus.ACTIVE) {
        is = "unreachable"; // active, but its DSN is no connection string: refused as unreachable
      } else {
        is = s.status().stored();
      }
      if (is.equals(state)) {
        n++;
      }
    }
    return n;
  }
}

package dev.ledger.app;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.migrate.Dsn;
import dev.ledger.migrate.MigrationException;
import dev.ledger.migrate.TenantRegistry;
import dev.ledger.tenants.TenantDirectory;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * Which tenant of a fleet a task command works on (a picocli mixin): {@code --control URL --tenant
 * ID} instead of {@code --url}. The tenant's database is resolved from the control database's
 * registry by a {@link TenantDirectory} and never printed; a tenant that is not served is refused
 * with {@link dev.ledger.tenants.TenantUnavailableException} (exit {@value ExitCodes#REFUSED}, or
 * {@value ExitCodes#DATABASE} when its database does not answer).
 *
 * <pre>{@code
 * ledger-app task list --domain payments --control 'jdbc:postgresql://db0/control?user=ops' --tenant acme
 * }</pre>
 */
public final class TenantOptions {

  @Option(
      names = "--tenant",
      paramLabel = "ID",
      description =
          "Work on this tenant of the fleet, its database looked up in the control database's"
              + " registry (with --control; instead of --url).")
  String tenant;

  @Option(
      names = "--control",
      paramLabel = "JDBC",
      defaultValue = "${env:LEDGER_CONTROL_URL}",
      description =
          "With --tenant: JDBC URL of the control database holding the tenant registry (default:"
              + " $LEDGER_CONTROL_URL).")
  String control;

  @Option(
      names = "--control-schema",
      paramLabel = "SCHEMA",
      defaultValue = "public",
      description = "With --tenant: schema of the registry (default: ${DEFAULT-VALUE}).")
  String controlSchema;

  /**
   * Whether a tenant was named.
   *
   * @return true with {@code --tenant}
   */
  public boolean given() {
    return tenant != null;
  }

  /**
   * Opens the tenant's ledger through a directory over the control database (read-only: the
   * registry is not bootstrapped, no fleet run, no background refresh).
   *
   * @param directorySchema the tenant database's directory schema
   * @return the open tenant; the caller closes it
   * @throws IllegalArgumentException naming {@code --tenant} or {@code --control} when refused
   * @throws dev.ledger.tenants.TenantUnavailableException when the tenant is not served
   * @throws dev.ledger.migrate.MigrationException when the control database fails, or holds no
   *     registry ({@link MigrationException.Reason#NO_REGISTRY}, exit {@value
   *     ExitCodes#NO_REGISTRY})
   */
  public OpenTenant open(String directorySchema) {
    if (tenant.isBlank()) {
      throw new IllegalArgumentException("--tenant: must not be empty");
    }
    if (control == null || control.isBlank()) {
      throw new IllegalArgumentException(
          "--control: required with --tenant (or set LEDGER_CONTROL_URL): the control database's"
              + " JDBC URL");
    }
    Dsn dsn = DatabaseOptions.parse("--control", control);
    HikariConfig config = new HikariConfig();
    config.setDataSource(dsn.dataSource());
    config.setMaximumPoolSize(2);
    config.setMinimumIdle(0);
    config.setPoolName("ledger-control");
    config.setInitializationFailTimeout(-1);
    HikariDataSource pool = new HikariDataSource(config);
    try {
      if (!new TenantRegistry(pool, controlSchema).exists()) {
        throw new MigrationException(
            MigrationException.Reason.NO_REGISTRY,
            "no tenant registry in schema "
                + controlSchema
                + " of "
                + dsn.describe()
                + " (no "
                + TenantRegistry.TABLE
                + "): is --control the right database?",
            null);
      }
      TenantDirectory directory =
          TenantDirectory.builder()
              .control(pool)
              .controlSchema(controlSchema)
              .bootstrapRegistry(false)
              .refreshInterval(Duration.ZERO)
              .connectionBudget(4)
              .connectionsPerTenant(4)
              .drainTimeout(Duration.ofSeconds(5))
              .ledgerConfig(LedgerConfig.builder().directorySchema(directorySchema).build())
              .open();
      try {
        return new OpenTenant(pool, directory, directory.ledger(tenant));
      } catch (RuntimeException e) {
        directory.close();
        throw e;
      }
    } catch (RuntimeException e) {
      pool.close();
      throw e;
    }
  }

  /** A tenant's ledger and what serves it. */
  public static final class OpenTenant implements AutoCloseable {
    private final HikariDataSource control;
    private final TenantDirectory directory;
    private final Ledger ledger;

    OpenTenant(HikariDataSource control, TenantDirectory directory, Ledger ledger) {
      this.control = control;
      this.directory = directory;
      this.ledger = ledger;
    }

    /**
     * The tenant's ledger.
     *
     * @return the ledger
     */
    public Ledger ledger() {
      return ledger;
    }

    @Override
    public void close() {
      directory.close();
      control.close();
    }
  }
}

package dev.ledger.app.fleet;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.migrate.Dsn;
import dev.ledger.migrate.MigrationException;
import dev.ledger.migrate.TenantRegistry;
import java.util.function.Consumer;
import javax.sql.DataSource;
import picocli.CommandLine.Option;

/** The fleet's control database (a picocli mixin). */
public final class ControlOptions {

  @Option(
      names = "--control",
      paramLabel = "JDBC",
      defaultValue = "${env:LEDGER_CONTROL_URL}",
      description =
          "JDBC URL of the control database holding the tenant registry (default:"
              + " $LEDGER_CONTROL_URL).")
  String url;

  @Option(
      names = "--control-schema",
      paramLabel = "SCHEMA",
      defaultValue = "public",
      description = "Schema of the registry in the control database (default: ${DEFAULT-VALUE}).")
  String schema;

  private Dsn dsn;

  /**
   * Opens a small pool over the control database.
   *
   * @param secrets told the DSN before anything can fail with it in a message
   * @return the pool; the caller closes it
   * @throws IllegalArgumentException naming {@code --control} when it is missing or not a JDBC URL
   * @throws MigrationException ({@link MigrationException.Reason#CONTROL_DATABASE}) when the
   *     control database cannot be reached
   */
  public HikariDataSource open(Consumer<Dsn> secrets) {
    if (url == null || url.isBlank()) {
      throw new IllegalArgumentException(
          "--control: required (or set LEDGER_CONTROL_URL): the control database's JDBC URL");
    }
    dsn = dev.ledger.app.DatabaseOptions.parse("--control", url);
    secrets.accept(dsn);
    HikariConfig config = new HikariConfig();
    config.setDataSource(dsn.dataSource());
    config.setMaximumPoolSize(3);
    config.setMinimumIdle(0);
    config.setPoolName("ledger-control");
    try {
      return new HikariDataSource(config);
    } catch (RuntimeException e) {
      throw new MigrationException(
          MigrationException.Reason.CONTROL_DATABASE,
          "control database unreachable: " + dsn.redact(String.valueOf(e.getMessage())),
          null);
    }
  }

  /**
   * Whether the control database holds a tenant registry ({@link TenantRegistry#exists()}).
   *
   * @param control the open control database
   * @return true when it does
   */
  boolean hasRegistry(DataSource control) {
    return new TenantRegistry(control, schema).exists();
  }

  /**
   * Where the registry is, for messages: schema and database, without credentials.
   *
   * @return e.g. {@code schema public of 127.0.0.1:5432/control}
   */
  public String where() {
    return "schema " + schema + " of " + (dsn == null ? "the control database" : dsn.describe());
  }

  /**
   * The command-line error for a control database without a registry: what is missing, where, and
   * the two ways to make one, on one line.
   *
   * @param e the fleet's refusal ({@link MigrationException.Reason#NO_REGISTRY})
   * @return the same refusal, worded for the command line
   */
  MigrationException noRegistry(MigrationException e) {
    return new MigrationException(
        e.reason(),
        "no tenant registry in "
            + where()
            + " (no "
            + TenantRegistry.TABLE
            + "): is --control the right database? 'ledger-app fleet register' makes the registry"
            + " with its first tenant; 'ledger-app fleet migrate --create-registry' makes an empty"
            + " one",
        e.sqlState());
  }

  /**
   * The registry's schema.
   *
   * @return e.g. {@code public}
   */
  public String schema() {
    return schema;
  }

  /**
   * Whether a control database was named ({@code --control} or {@code LEDGER_CONTROL_URL}), for a
   * command where it is optional ({@code ledger-app console}).
   *
   * @return true when one was
   */
  public boolean given() {
    return url != null && !url.isBlank();
  }
}

package dev.ledger.app.fleet;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.migrate.Dsn;
import dev.ledger.migrate.MigrationException;
import java.util.function.Consumer;
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

  /**
   * Opens a small pool over the control database.
   *
   * @param secrets told the DSN before anything can fail with it in a message
   * @return the pool; the caller closes it
   * @throws IllegalArgumentException naming {@code --control} when it is missing or not a JDBC URL
   * @throws MigrationException ({@link MigrationException.Reason#CONTROL_DATABASE}) when the
   *     control database cannot be reached
   */
  HikariDataSource open(Consumer<Dsn> secrets) {
    if (url == null || url.isBlank()) {
      throw new IllegalArgumentException(
          "--control: required (or set LEDGER_CONTROL_URL): the control database's JDBC URL");
    }
    Dsn dsn;
    try {
      dsn = Dsn.parse(url.strip());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--control: " + e.getMessage(), null);
    }
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
   * The registry's schema.
   *
   * @return e.g. {@code public}
   */
  String schema() {
    return schema;
  }
}

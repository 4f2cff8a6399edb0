package dev.ledger.app.fleet;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.app.ExitCodes;
import dev.ledger.app.migrate.Json;
import dev.ledger.app.migrate.RedactingCommand;
import dev.ledger.migrate.Dsn;
import dev.ledger.migrate.Fleet;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ledger-app fleet register}: adds or re-points a tenant; its status becomes provisioning.
 */
@Command(
    name = "register",
    footer = {
      "",
      "Example:",
      "  ledger-app fleet register --control \"$CONTROL\" --tenant acme \\",
      "      --dsn 'postgresql://ledger:...@db1:5432/acme'",
      "A libpq URI (postgresql://...) is read by the reference reconciler too; a",
      "jdbc:postgresql:// URL only by ledger-app. Both land in harness_tenants."
    },
    mixinStandardHelpOptions = true,
    description = "Register a tenant (or re-point it): its DSN is stored, its status provisioning.")
public final class FleetRegisterCommand extends RedactingCommand {

  @Mixin ControlOptions control;

  @Option(names = "--tenant", required = true, paramLabel = "ID", description = "The tenant id.")
  String tenant;

  @Option(
      names = "--dsn",
      required = true,
      paramLabel = "DSN",
      description = {
        "The tenant database's libpq URI or JDBC URL (credentials allowed; never printed),"
            + " such as",
        "postgresql://user:password@host:port/db"
      })
  String dsn;

  @Option(names = "--json", description = "Print the result as JSON.")
  boolean json;

  @Override
  protected int run() {
    try {
      secret(Dsn.parse(dsn));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--dsn: " + e.getMessage(), null);
    }
    try (HikariDataSource ds = control.open(this::secret)) {
      Fleet.builder().control(ds).controlSchema(control.schema()).build().register(tenant, dsn);
    }
    if (json) {
      out()
          .println(
              Json.document(
                  commandName(),
                  ExitCodes.OK,
                  true,
                  Map.of("tenant", tenant, "status", "provisioning")));
    } else {
      out().println("registered tenant " + tenant + " (provisioning)");
    }
    out().flush();
    return ExitCodes.OK;
  }
}

package dev.ledger.app.fleet;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.app.ExitCodes;
import dev.ledger.app.migrate.Json;
import dev.ledger.app.migrate.RedactingCommand;
import dev.ledger.migrate.Fleet;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ledger-app fleet register}: adds or re-points a tenant; its status becomes provisioning.
 * The first registration makes the registry (said on stderr).
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
    description = {
      "Register a tenant (or re-point it): its DSN is stored, its status provisioning.",
      "The first registration makes the control database's tenant registry (said on stderr)."
    })
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
    secret(dev.ledger.app.DatabaseOptions.parse("--dsn", dsn));
    boolean created;
    try (HikariDataSource ds = control.open(this::secret)) {
      created = !control.hasRegistry(ds);
      Fleet.builder().control(ds).controlSchema(control.schema()).build().register(tenant, dsn);
    }
    if (created) {
      // a new registry is worth a word: a wrong --control shows here, not at the next migrate
      err().println(commandName() + ": made a new tenant registry in " + control.where());
      err().flush();
    }
    if (json) {
      Map<String, Object> result = new LinkedHashMap<>();
      result.put("tenant", tenant);
      result.put("status", "provisioning");
      result.put("registryCreated", created);
      out().println(Json.document(commandName(), ExitCodes.OK, true, result));
    } else {
      out().println("registered tenant " + tenant + " (provisioning)");
    }
    out().flush();
    return ExitCodes.OK;
  }
}

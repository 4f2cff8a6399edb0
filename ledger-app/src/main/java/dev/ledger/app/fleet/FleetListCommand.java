package dev.ledger.app.fleet;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.app.ExitCodes;
import dev.ledger.app.migrate.Json;
import dev.ledger.app.migrate.RedactingCommand;
import dev.ledger.app.migrate.ReportText;
import dev.ledger.migrate.Fleet;
import dev.ledger.migrate.MigrationException;
import dev.ledger.migrate.TenantInfo;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ledger-app fleet list}: the registry, without DSNs. A control database without a registry
 * is refused (exit {@value ExitCodes#NO_REGISTRY}).
 */
@Command(
    name = "list",
    footer = {"", "Example:", "  ledger-app fleet list --control \"$CONTROL\""},
    mixinStandardHelpOptions = true,
    description = {
      "List the registered tenants, their status and why degraded (never their DSN).",
      "Exit: 0 listed; 9 the control database holds no tenant registry; 4 it failed."
    })
public final class FleetListCommand extends RedactingCommand {

  @Mixin ControlOptions control;

  @Option(names = "--json", description = "Print the list as JSON.")
  boolean json;

  @Override
  protected int run() {
    List<TenantInfo> tenants;
    try (HikariDataSource ds = control.open(this::secret)) {
      tenants =
          Fleet.builder()
              .control(ds)
              .controlSchema(control.schema())
              .createRegistry(false)
              .build()
              .list();
    } catch (MigrationException e) {
      throw e.reason() == MigrationException.Reason.NO_REGISTRY ? control.noRegistry(e) : e;
    }
    if (json) {
      out().println(redact(Json.document(commandName(), ExitCodes.OK, true, tenants)));
    } else {
      List<String[]> rows = new ArrayList<>();
      rows.add(new String[] {"TENANT", "STATUS", "UPDATED", "REASON"});
      for (TenantInfo t : tenants) {
        rows.add(
            new String[] {
              t.tenant(), t.status().stored(), t.updated(), t.reason() == null ? "" : t.reason()
            });
      }
      StringBuilderWriter text = new StringBuilderWriter();
      ReportText.table(text.writer(), rows);
      text.writer().println(tenants.size() + " tenants");
      out().print(redact(text.toString()));
    }
    out().flush();
    return ExitCodes.OK;
  }
}

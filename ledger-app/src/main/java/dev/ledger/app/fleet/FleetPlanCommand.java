package dev.ledger.app.fleet;

import dev.ledger.app.ExitCodes;
import dev.ledger.migrate.FleetReport;
import dev.ledger.migrate.Operation;
import picocli.CommandLine.Command;

/**
 * {@code ledger-app fleet plan}: per tenant, what a migrate would apply, under the tenant's lock,
 * changing nothing. Exit 0 when every tenant was planned, 3 when some could not be (unreachable,
 * checksum, degraded), else 6 when some tenant's lock stayed held by another run, 4 when the
 * control database failed, 9 when it holds no tenant registry (plan never makes one).
 */
@Command(
    name = "plan",
    footer = {"", "Example:", "  ledger-app fleet plan --control \"$CONTROL\" --json"},
    mixinStandardHelpOptions = true,
    description = {
      "Show, per tenant, what fleet migrate would apply; change nothing.",
      "Exit: 0 all planned; 3 some could not be; 6 some locked; 9 no tenant registry; 4 control"
          + " database failed."
    })
public final class FleetPlanCommand extends FleetRunCommand {

  @Override
  Operation operation() {
    return Operation.PLAN;
  }

  @Override
  int exitCode(FleetReport report) {
    boolean failed = report.tenants().stream().anyMatch(t -> t.error() != null && !t.locked());
    if (failed) {
      return ExitCodes.DEGRADED;
    }
    return report.locked() > 0 ? ExitCodes.LOCKED : ExitCodes.OK;
  }
}

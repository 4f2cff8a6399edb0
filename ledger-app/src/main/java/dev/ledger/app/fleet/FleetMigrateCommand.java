package dev.ledger.app.fleet;

import dev.ledger.app.ExitCodes;
import dev.ledger.migrate.FleetReport;
import dev.ledger.migrate.Operation;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ledger-app fleet migrate}: migrates every active or provisioning tenant under its advisory
 * lock; failing tenants become degraded and the others go on. Exit 0 when every tenant is active, 3
 * when some tenant is degraded (1 with {@code --strict}), else 6 when some tenant was skipped
 * because another run held its lock (its status unchanged), 4 when the control database failed, 9
 * when it holds no tenant registry (unless {@code --create-registry}).
 */
@Command(
    name = "migrate",
    footer = {
      "",
      "Example:",
      "  ledger-app fleet migrate --control \"$CONTROL\" --parallelism 8 --strict --json"
    },
    mixinStandardHelpOptions = true,
    description = {
      "Migrate every active or provisioning tenant's database, each under its advisory lock.",
      "A failing tenant is marked degraded and the others go on; a tenant whose lock another run"
          + " holds for the whole --lock-timeout is skipped (locked), keeps its status and is"
          + " migrated by the next run.",
      "A control database without a tenant registry is refused (exit 9) unless"
          + " --create-registry is given.",
      "Exit: 0 all active; 3 some degraded (1 with --strict); 6 none degraded but some locked;"
          + " 9 no registry; 4 control database failed."
    })
public final class FleetMigrateCommand extends FleetRunCommand {

  @Option(
      names = "--strict",
      description = "Fail (exit 1) when any tenant is degraded, instead of exit 3.")
  boolean strict;

  @Option(
      names = "--create-registry",
      description =
          "Make an empty tenant registry when the control database holds none (by default such a"
              + " database is refused, exit 9: it is likely not the control database).")
  boolean createRegistry;

  @Option(
      names = "--retry-degraded",
      description = "Migrate degraded tenants too (by default they are skipped).")
  boolean retry;

  @Override
  Operation operation() {
    return Operation.MIGRATE;
  }

  @Override
  boolean createRegistry() {
    return createRegistry;
  }

  @Override
  boolean retryDegraded() {
    return retry;
  }

  @Override
  int exitCode(FleetReport report) {
    if (report.degraded() > 0) {
      return strict ? ExitCodes.FAILED : ExitCodes.DEGRADED;
    }
    return report.locked() > 0 ? ExitCodes.LOCKED : ExitCodes.OK;
  }
}

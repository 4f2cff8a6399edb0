package dev.ledger.app.fleet;

import dev.ledger.app.ParentJson;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code ledger-app fleet}: the reconciler over a control database's tenant registry ({@link
 * dev.ledger.migrate.Fleet}). Its subcommands do the work.
 */
@Command(
    name = "fleet",
    mixinStandardHelpOptions = true,
    description = "Migrate a fleet of tenant databases listed in a control database.",
    footer = {
      "",
      "Examples:",
      "  ledger-app fleet list --control \"$LEDGER_CONTROL_URL\" --json",
      "  ledger-app fleet migrate --control \"$LEDGER_CONTROL_URL\""
    },
    subcommands = {
      FleetRegisterCommand.class,
      FleetListCommand.class,
      FleetPlanCommand.class,
      FleetMigrateCommand.class
    })
public final class FleetCommand {

  /** {@code --json} before the subcommand. */
  @Mixin ParentJson json;
}

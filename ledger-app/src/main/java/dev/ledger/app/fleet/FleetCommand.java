package dev.ledger.app.fleet;

import picocli.CommandLine.Command;

/**
 * {@code ledger-app fleet}: the reconciler over a control database's tenant registry ({@link
 * dev.ledger.migrate.Fleet}). Its subcommands do the work.
 */
@Command(
    name = "fleet",
    mixinStandardHelpOptions = true,
    description = "Migrate a fleet of tenant databases listed in a control database.",
    subcommands = {
      FleetRegisterCommand.class,
      FleetListCommand.class,
      FleetPlanCommand.class,
      FleetMigrateCommand.class
    })
public final class FleetCommand {}

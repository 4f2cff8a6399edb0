package dev.ledger.app.migrate;

import dev.ledger.migrate.Operation;
import picocli.CommandLine.Command;

/**
 * {@code ledger-app plan}: what {@code migrate} would apply, per schema, under the same lock,
 * applying nothing. Exit 0 unless a schema would fail (1).
 */
@Command(
    name = "plan",
    footer = {
      "",
      "Example:",
      "  ledger-app plan --url 'jdbc:postgresql://127.0.0.1:5432/demo?user=postgres'"
    },
    mixinStandardHelpOptions = true,
    description = "Show what migrate would apply, per schema, under the same lock; apply nothing.")
public final class PlanCommand extends JobCommand {

  @Override
  Operation operation() {
    return Operation.PLAN;
  }
}

package dev.ledger.app.migrate;

import dev.ledger.migrate.Operation;
import picocli.CommandLine.Command;

/**
 * {@code ledger-app status}: per schema its version, pending migrations and checksum state (no lock
 * taken). Exit 0 unless a schema is failed (1).
 */
@Command(
    name = "status",
    footer = {"", "Example:", "  ledger-app status --json"},
    mixinStandardHelpOptions = true,
    description = "Show each schema's version, pending migrations and checksum state.")
public final class StatusCommand extends JobCommand {

  @Override
  Operation operation() {
    return Operation.STATUS;
  }
}

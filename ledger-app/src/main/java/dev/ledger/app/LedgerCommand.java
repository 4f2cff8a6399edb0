package dev.ledger.app;

import dev.ledger.Ledger;
import java.io.PrintWriter;
import picocli.CommandLine.Mixin;

/**
 * The base of the commands that work on a ledger: opens the database chosen by {@link
 * DatabaseOptions} (or the fleet tenant chosen by {@link TenantOptions}), opens the {@link Ledger},
 * runs, and closes both. What every command shares ({@code --json}, {@code --verbose}, errors
 * naming the option, unknown domains) is {@link BaseCommand}'s.
 */
public abstract class LedgerCommand extends BaseCommand {

  /** The database to work on. */
  @Mixin protected DatabaseOptions database;

  /** Or a tenant of a fleet, by id: {@code --control URL --tenant ID}. */
  @Mixin protected TenantOptions tenant;

  /** For picocli and subclasses. */
  protected LedgerCommand() {}

  @Override
  protected final int execute() {
    if (tenant.given()) {
      if (database.url != null) {
        throw usage("--url and --tenant exclude each other: give one of them");
      }
      try (TenantOptions.OpenTenant t = tenant.open(database.directorySchema())) {
        return run(t.ledger(), spec.commandLine().getOut());
      }
    }
    try (DatabaseOptions.OpenDatabase db = database.open()) {
      return run(db.ledger(), spec.commandLine().getOut());
    }
  }

  /**
   * Runs the command.
   *
   * @param ledger the open ledger
   * @param out where to print
   * @return the exit code ({@link ExitCodes})
   */
  protected abstract int run(Ledger ledger, PrintWriter out);
}

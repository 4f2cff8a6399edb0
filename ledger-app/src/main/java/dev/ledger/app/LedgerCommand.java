package dev.ledger.app;

import dev.ledger.Ledger;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The base of the commands that work on a ledger: opens the database chosen by {@link
 * DatabaseOptions} (or the fleet tenant chosen by {@link TenantOptions}), opens the {@link Ledger},
 * runs, and closes both.
 */
public abstract class LedgerCommand implements Callable<Integer> {

  /** The database to work on. */
  @Mixin protected DatabaseOptions database;

  /** Or a tenant of a fleet, by id: {@code --control URL --tenant ID}. */
  @Mixin protected TenantOptions tenant;

  /** Print one JSON document instead of text. */
  @Option(names = "--json", description = "Print one JSON document instead of text.")
  protected boolean json;

  /** Show the stack trace of an error (read by {@link Main}'s error handler). */
  @Option(names = "--verbose", description = "Show the stack trace of an error.")
  protected boolean verbose;

  /** The command's picocli spec, for its output streams. */
  @Spec protected CommandSpec spec;

  @Override
  public final Integer call() {
    if (tenant.given()) {
      if (database.url != null) {
        throw new picocli.CommandLine.ParameterException(
            spec.commandLine(), "--url and --tenant exclude each other: give one of them");
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

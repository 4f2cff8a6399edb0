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
 * DatabaseOptions}, opens the {@link Ledger}, runs, and closes both.
 */
public abstract class LedgerCommand implements Callable<Integer> {

  /** The database to work on. */
  @Mixin protected DatabaseOptions database;

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

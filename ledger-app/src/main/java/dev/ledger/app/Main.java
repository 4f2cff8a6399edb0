package dev.ledger.app;

import dev.ledger.app.diff.SchemaDiffCommand;
import dev.ledger.app.fleet.FleetCommand;
import dev.ledger.app.migrate.MigrateCommand;
import dev.ledger.app.migrate.PlanCommand;
import dev.ledger.app.migrate.StatusCommand;
import dev.ledger.app.task.DemoCommand;
import dev.ledger.app.task.LedgerCommands;
import dev.ledger.app.task.TaskCommand;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code ledger-app} command line: the root picocli command whose subcommands are the migration
 * job, the fleet reconciler, the schema diff and the task commands.
 *
 * <pre>{@code
 * java -jar ledger-app/target/ledger-app.jar migrate            # embedded PostgreSQL in ~/.ledger
 * java -jar ledger-app/target/ledger-app.jar migrate --url jdbc:postgresql://host/db?user=u
 * java -jar ledger-app/target/ledger-app.jar schema-diff --base base/db/migration --head db/migration
 * }</pre>
 *
 * <p>Exit codes are those of {@link ExitCodes}; {@code schema-diff} has its own three, for CI
 * ({@link SchemaDiffCommand}).
 */
@Command(
    name = "ledger-app",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = "Ledger: an event-sourced task ledger on PostgreSQL.",
    subcommands = {
      CommandLine.HelpCommand.class,
      MigrateCommand.class,
      PlanCommand.class,
      StatusCommand.class,
      FleetCommand.class,
      SchemaDiffCommand.class,
      TaskCommand.class,
      LedgerCommands.Domains.class,
      LedgerCommands.Promote.class,
      LedgerCommands.Promotions.class,
      LedgerCommands.Scrub.class,
      LedgerCommands.Replay.class,
      dev.ledger.app.work.WorkCommand.class,
      DemoCommand.class
    })
public final class Main {

  /**
   * Runs the command line and exits the JVM with its exit code.
   *
   * @param args the arguments
   */
  public static void main(String[] args) {
    System.exit(run(args));
  }

  /**
   * Runs the command line without exiting, for tests and embedding.
   *
   * @param args the arguments
   * @return the exit code ({@link ExitCodes})
   */
  public static int run(String... args) {
    return commandLine().execute(args);
  }

  /**
   * The configured picocli command line: subcommands, error handlers, exit codes.
   *
   * @return a new command line
   */
  public static CommandLine commandLine() {
    CommandLine cli = new CommandLine(new Main());
    cli.setCaseInsensitiveEnumValuesAllowed(true);
    cli.setExitCodeExceptionMapper(ExitCodes::of);
    cli.setExecutionExceptionHandler(Main::handle);
    cli.getCommandSpec().exitCodeOnInvalidInput(ExitCodes.USAGE);
    return cli;
  }

  /**
   * Prints an error as one line naming what was wrong (the full trace only with {@code --verbose})
   * and returns its exit code.
   */
  private static int handle(Exception e, CommandLine cli, CommandLine.ParseResult parsed) {
    boolean verbose = hasVerbose(parsed);
    PrintWriter err = cli.getErr();
    if (verbose) {
      e.printStackTrace(err);
    }
    err.println("error: " + ExitCodes.message(e));
    err.flush();
    return ExitCodes.of(e);
  }

  private static boolean hasVerbose(CommandLine.ParseResult parsed) {
    for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand()) {
      if (p.matchedOption("--verbose") != null) {
        return true;
      }
    }
    return false;
  }

  /** The version from the jar's manifest, or {@code dev} when run from classes. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Main.class.getPackage().getImplementationVersion();
      return new String[] {"ledger-app " + (v == null ? "dev" : v)};
    }
  }
}

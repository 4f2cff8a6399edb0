package dev.ledger.app;

import dev.ledger.app.fleet.FleetCommand;
import dev.ledger.app.migrate.MigrateCommand;
import dev.ledger.app.migrate.PlanCommand;
import dev.ledger.app.migrate.StatusCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code ledger-app} command line: the root picocli command whose subcommands are the migration
 * job, the fleet reconciler, the schema diff and the task commands.
 *
 * <pre>{@code
 * java -jar ledger-app/target/ledger-app.jar migrate            # embedded PostgreSQL in ~/.ledger
 * java -jar ledger-app/target/ledger-app.jar migrate --url jdbc:postgresql://host/db?user=u
 * }</pre>
 *
 * <p>Exit codes are those of {@link ExitCodes}.
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
      FleetCommand.class
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
    cli.getCommandSpec().exitCodeOnInvalidInput(ExitCodes.USAGE);
    return cli;
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

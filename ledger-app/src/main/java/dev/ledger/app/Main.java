package dev.ledger.app;

import dev.ledger.app.diff.SchemaDiffCommand;
import dev.ledger.app.fleet.FleetCommand;
import dev.ledger.app.migrate.Json;
import dev.ledger.app.migrate.MigrateCommand;
import dev.ledger.app.migrate.PlanCommand;
import dev.ledger.app.migrate.StatusCommand;
import dev.ledger.app.task.DemoCommand;
import dev.ledger.app.task.DomainCommands;
import dev.ledger.app.task.TaskCommand;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

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
    footer = {
      "",
      "Every command takes --json (one JSON document on stdout, errors included) and",
      "--help; the database is --url, else $LEDGER_URL, else an embedded PostgreSQL.",
      "",
      "Examples:",
      "  ledger-app demo",
      "  ledger-app task file --domain payments --title 'Reconcile batch 42'",
      "  ledger-app migrate --url 'jdbc:postgresql://127.0.0.1/app?user=app' --json"
    })
public final class Main {

  /**
   * The subcommands, in the order the help lists them. Added to the root by {@link #commandLine}
   * rather than named in {@code @Command}, so that a command line naming one of them builds only
   * that one's model: picocli reads every option of every subcommand it is given, which was a third
   * of a task command's start.
   */
  private static final List<Class<?>> SUBCOMMANDS =
      List.of(
          CommandLine.HelpCommand.class,
          MigrateCommand.class,
          PlanCommand.class,
          StatusCommand.class,
          FleetCommand.class,
          SchemaDiffCommand.class,
          TaskCommand.class,
          dev.ledger.app.schedule.ScheduleCommand.class,
          DomainCommands.Domains.class,
          dev.ledger.app.task.ControlCommands.DomainCommand.class,
          DomainCommands.Promote.class,
          DomainCommands.Promotions.class,
          DomainCommands.Scrub.class,
          DomainCommands.Replay.class,
          dev.ledger.app.retention.RetentionCommand.class,
          dev.ledger.app.work.WorkCommand.class,
          dev.ledger.app.feed.FeedCommand.class,
          dev.ledger.app.console.ConsoleCommand.class,
          DemoCommand.class);

  /**
   * {@code --json} before the subcommand: the subcommand's own {@code --json} (its result as one
   * JSON document), and an error found here (an unknown subcommand, say) as a JSON document too.
   */
  @CommandLine.Option(
      names = "--json",
      description = "The same as the subcommand's --json; errors found here as JSON too.")
  boolean json;

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
    return commandLine(args).execute(args);
  }

  /**
   * The configured picocli command line: every subcommand, error handlers, exit codes.
   *
   * @return a new command line
   */
  public static CommandLine commandLine() {
    return configure(SUBCOMMANDS);
  }

  /**
   * The command line for these arguments: when the first names a subcommand (and is not {@code
   * help}), the root with that subcommand alone, which parses, runs and reports errors exactly as
   * the whole tree does; otherwise the whole tree (the root's help, an unknown subcommand and its
   * suggestions, options before the subcommand).
   *
   * @param args the arguments
   * @return a new command line
   */
  static CommandLine commandLine(String[] args) {
    if (args.length > 0) {
      for (Class<?> c : SUBCOMMANDS) {
        Command command = c.getAnnotation(Command.class);
        if (c != CommandLine.HelpCommand.class && command.name().equals(args[0])) {
          return configure(List.of(c));
        }
      }
    }
    return commandLine();
  }

  private static CommandLine configure(List<Class<?>> subcommands) {
    CommandLine cli = new CommandLine(new Main());
    for (Class<?> c : subcommands) {
      cli.addSubcommand(c);
    }
    cli.setCaseInsensitiveEnumValuesAllowed(true);
    // registered after the subcommands: picocli gives a converter to the commands present then
    Converters.Longs longs = new Converters.Longs();
    Converters.Ints ints = new Converters.Ints();
    cli.registerConverter(Long.class, longs);
    cli.registerConverter(Long.TYPE, longs);
    cli.registerConverter(Integer.class, ints);
    cli.registerConverter(Integer.TYPE, ints);
    cli.setExitCodeExceptionMapper(ExitCodes::of);
    cli.setExecutionExceptionHandler(Main::handle);
    cli.setParameterExceptionHandler(Main::usageError);
    cli.setExecutionStrategy(
        parsed -> {
          refuseUndecodable(parsed);
          inheritJson(parsed);
          if (versionAsJson(parsed)) {
            return ExitCodes.OK;
          }
          return new CommandLine.RunLast().execute(parsed);
        });
    cli.getCommandSpec().exitCodeOnInvalidInput(ExitCodes.USAGE);
    return cli;
  }

  /**
   * {@code --version} with {@code --json} anywhere on the line: the version as the standard
   * document, {@code {"command","exitCode":0,"ok":true,"report":{"version"}}}, on stdout.
   *
   * @return whether it was printed (the command then ends with {@link ExitCodes#OK})
   */
  private static boolean versionAsJson(CommandLine.ParseResult parsed) {
    boolean version = false;
    CommandLine.ParseResult last = parsed;
    for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand()) {
      version |= p.isVersionHelpRequested();
      last = p;
    }
    if (!version || !isJson(parsed)) {
      return false;
    }
    PrintWriter out = parsed.commandSpec().commandLine().getOut();
    out.println(
        Json.document(
            last.commandSpec().qualifiedName(),
            ExitCodes.OK,
            true,
            java.util.Map.of("version", version())));
    out.flush();
    return true;
  }

  /**
   * Refuses an argument the JVM could not decode: it decodes the command line with {@code
   * sun.jnu.encoding} (the locale's, UTF-8 on a UTF-8 system) and puts U+FFFD where the bytes were
   * not text, which the ledger would store as it is. Checked for every option and positional value
   * before any command runs.
   *
   * @throws ParameterException naming the option (or the positional parameter) that holds one
   */
  private static void refuseUndecodable(CommandLine.ParseResult parsed) {
    for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand()) {
      for (OptionSpec o : p.matchedOptions()) {
        for (String v : o.originalStringValues()) {
          if (v.indexOf('\uFFFD') >= 0) {
            throw undecodable(p.commandSpec().commandLine(), o.longestName());
          }
        }
      }
      for (CommandLine.Model.PositionalParamSpec o : p.matchedPositionals()) {
        for (String v : o.originalStringValues()) {
          if (v.indexOf('\uFFFD') >= 0) {
            throw undecodable(p.commandSpec().commandLine(), o.paramLabel());
          }
        }
      }
    }
  }

  private static ParameterException undecodable(CommandLine command, String name) {
    return new ParameterException(
        command,
        name
            + ": not valid "
            + System.getProperty("sun.jnu.encoding", "UTF-8")
            + " text: the shell passed bytes that are no character in the locale's encoding;"
            + " give the value as UTF-8 text");
  }

  /**
   * {@code --json} given before the subcommand ({@code ledger-app --json task show ID}) counts as
   * the subcommand's own: the command that runs gets it set.
   */
  private static void inheritJson(CommandLine.ParseResult parsed) {
    boolean json = false;
    CommandLine.ParseResult last = parsed;
    for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand()) {
      json |= p.matchedOption("--json") != null;
      last = p;
    }
    OptionSpec own = last.commandSpec().findOption("--json");
    if (json && own != null && last.matchedOption("--json") == null) {
      own.setValue(true);
    }
  }

  /**
   * Prints a usage error as one line: what is wrong, the closest option names when an option is
   * unknown ({@code did you mean}), and where the help is; with {@code --json} also one error
   * document on stdout. An unknown option is reported as unknown even when picocli found a required
   * option missing first ({@code --domian} for {@code --domain}).
   */
  private static int usageError(ParameterException e, String[] args) {
    CommandLine failed = e.getCommandLine();
    String message = e.getMessage();
    List<String> suggestions = List.of();
    if (e instanceof UnmatchedArgumentException unmatched) {
      if (afterEndOfOptions(failed, unmatched, args)) {
        // the very name, not a misspelling: nothing to suggest
        message += "; after '--' every word is an argument: put options before it";
      } else {
        suggestions = suggestions(failed, unmatched);
      }
    } else {
      List<String> unknown = unknownOptions(failed, args);
      if (!unknown.isEmpty()) {
        UnmatchedArgumentException unmatched = new UnmatchedArgumentException(failed, unknown);
        message = unmatched.getMessage();
        suggestions = suggestions(failed, unmatched);
      }
    }
    String name = failed.getCommandSpec().qualifiedName();
    StringBuilder line = new StringBuilder("error: ").append(message.strip());
    if (!suggestions.isEmpty()) {
      line.append("; did you mean ").append(String.join(" or ", suggestions)).append('?');
    }
    line.append(" (see '").append(name).append(" --help')");
    // picocli quotes what it could not match, a connection string with its password included
    String text = Secrets.redact(line.toString().replaceAll("\\s*\\R\\s*", " "), args);
    PrintWriter err = failed.getErr();
    err.println(text);
    err.flush();
    if (wantsJson(args)) {
      PrintWriter out = failed.getOut();
      out.println(Json.error(name, ExitCodes.USAGE, text.substring("error: ".length())));
      out.flush();
    }
    return ExitCodes.USAGE;
  }

  /**
   * The names closest to the first unmatched argument: options when it looks like one, else
   * subcommands; within a small edit distance (a transposition counts as one edit, so {@code
   * --domian} finds {@code --domain} and {@code lsit} finds {@code list}), else picocli's own.
   */
  /** Whether the unmatched word is one of the command's option names, given after {@code --}. */
  private static boolean afterEndOfOptions(
      CommandLine command, UnmatchedArgumentException e, String[] args) {
    if (e.getUnmatched().isEmpty() || !List.of(args).contains("--")) {
      return false;
    }
    String given = e.getUnmatched().get(0);
    return command.getCommandSpec().options().stream()
        .anyMatch(o -> List.of(o.names()).contains(given));
  }

  private static List<String> suggestions(CommandLine command, UnmatchedArgumentException e) {
    if (e.getUnmatched().isEmpty()) {
      return e.getSuggestions();
    }
    String given = e.getUnmatched().get(0);
    if (given.contains("=")) {
      given = given.substring(0, given.indexOf('='));
    }
    List<String> candidates = new ArrayList<>();
    if (given.startsWith("-")) {
      command.getCommandSpec().options().forEach(o -> candidates.addAll(List.of(o.names())));
    } else {
      candidates.addAll(command.getSubcommands().keySet());
    }
    int best = Integer.MAX_VALUE;
    List<String> closest = new ArrayList<>();
    for (String c : candidates) {
      int d = editDistance(given, c);
      if (d == 0 || d > Math.max(1, c.length() / 3)) {
        // d == 0: the very name, unmatched because it came after "--" (usageError says so)
        continue;
      }
      if (d < best) {
        best = d;
        closest.clear();
      }
      if (d == best && !closest.contains(c)) {
        closest.add(c);
      }
    }
    return closest.isEmpty() ? e.getSuggestions() : closest;
  }

  /** Optimal string alignment distance: insertions, deletions, substitutions, transpositions. */
  static int editDistance(String a, String b) {
    int[][] d = new int[a.length() + 1][b.length() + 1];
    for (int i = 0; i <= a.length(); i++) {
      d[i][0] = i;
    }
    for (int j = 0; j <= b.length(); j++) {
      d[0][j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
        if (i > 1
            && j > 1
            && a.charAt(i - 1) == b.charAt(j - 2)
            && a.charAt(i - 2) == b.charAt(j - 1)) {
          d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.length()][b.length()];
  }

  /**
   * The arguments that look like options ({@code -x}, {@code --xyz}, {@code --xyz=v}) but are no
   * option of the command or of its parents, skipping the values of options that take one.
   */
  private static List<String> unknownOptions(CommandLine command, String[] args) {
    List<String> unknown = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if ("--".equals(arg)) {
        break;
      }
      if (!arg.startsWith("-") || arg.length() < 2 || Character.isDigit(arg.charAt(1))) {
        continue;
      }
      String optionName = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
      OptionSpec option = findOption(command, optionName);
      if (option == null) {
        unknown.add(optionName);
      } else if (option.arity().min() > 0 && !arg.contains("=")) {
        i += option.arity().min();
      }
    }
    return unknown;
  }

  private static OptionSpec findOption(CommandLine command, String name) {
    for (CommandLine c = command; c != null; c = c.getParent()) {
      OptionSpec o = c.getCommandSpec().findOption(name);
      if (o != null) {
        return o;
      }
    }
    return null;
  }

  /**
   * Whether {@code --json} is anywhere on the command line (before a {@code --}): a usage error is
   * then a JSON document too, whichever command (or parent) failed to parse it.
   */
  private static boolean wantsJson(String[] args) {
    for (String arg : args) {
      if ("--".equals(arg)) {
        return false;
      }
      if ("--json".equals(arg)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Prints an error as one line naming what was wrong (the full trace only with {@code --verbose})
   * and returns its exit code.
   */
  private static int handle(Exception e, CommandLine cli, CommandLine.ParseResult parsed) {
    boolean verbose = hasVerbose(parsed);
    PrintWriter err = cli.getErr();
    String[] args = parsed == null ? new String[0] : parsed.originalArgs().toArray(String[]::new);
    if (verbose) {
      java.io.StringWriter trace = new java.io.StringWriter();
      e.printStackTrace(new PrintWriter(trace));
      err.print(Secrets.redact(trace.toString(), args));
    }
    String message = Secrets.redact(ExitCodes.message(e), args);
    err.println("error: " + message);
    err.flush();
    int exit = ExitCodes.of(e);
    if (parsed != null && isJson(parsed)) {
      // a pipeline reading stdout gets one document even when the command failed
      PrintWriter out = cli.getOut();
      out.println(errorDocument(cli.getCommandSpec().qualifiedName(), exit, message, e));
      out.flush();
    }
    return exit;
  }

  /**
   * The {@code --json} error document: {@link Json#error}, and for a feed consumer behind the
   * retention horizon its {@code consumer}, {@code domain}, {@code missed_seq} and {@code
   * missed_later} after the error.
   */
  private static String errorDocument(String command, int exit, String message, Throwable e) {
    if (e instanceof dev.ledger.feed.FeedBehindRetentionException b) {
      java.util.Map<String, Object> extra = new java.util.LinkedHashMap<>();
      extra.put("error", message);
      extra.put("consumer", b.consumer());
      extra.put("domain", b.domain());
      extra.put("missed_seq", b.missedSeq());
      extra.put("missed_later", b.missedLater());
      return Json.document(command, exit, false, null, extra);
    }
    return Json.error(command, exit, message);
  }

  private static boolean isJson(CommandLine.ParseResult parsed) {
    for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand()) {
      if (p.matchedOption("--json") != null) {
        return true;
      }
    }
    return false;
  }

  private static boolean hasVerbose(CommandLine.ParseResult parsed) {
    for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand()) {
      if (p.matchedOption("--verbose") != null) {
        return true;
      }
    }
    return false;
  }

  /**
   * The version of this build: {@code version.properties}, written from the POM by the build.
   *
   * @return e.g. {@code 0.1.0-SNAPSHOT}
   * @throws IllegalStateException when the resource is missing (a broken build)
   */
  public static String version() {
    try (InputStream in = Main.class.getResourceAsStream("version.properties")) {
      if (in == null) {
        throw new IllegalStateException("version.properties is not on the class path");
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version");
    } catch (IOException e) {
      throw new IllegalStateException("version.properties cannot be read", e);
    }
  }

  /** The version of this build, for {@code --version}. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"ledger-app " + version()};
    }
  }
}

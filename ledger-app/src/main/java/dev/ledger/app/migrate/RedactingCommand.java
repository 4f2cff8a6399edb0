package dev.ledger.app.migrate;

import dev.ledger.app.ExitCodes;
import dev.ledger.app.Secrets;
import dev.ledger.migrate.Dsn;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The base of the migration and fleet commands: runs the command and turns any exception into one
 * line on stderr and an exit code ({@link ExitCodes#of(Throwable)}), with every connection string
 * the command opened removed from the line (they carry credentials); {@code --verbose} adds the
 * stack trace, redacted the same way.
 */
public abstract class RedactingCommand implements Callable<Integer> {

  @Spec private CommandSpec spec;

  @Option(
      names = "--verbose",
      description = "On errors, add the stack trace (connection strings removed from it).")
  private boolean verbose;

  private final List<Dsn> secrets = new CopyOnWriteArrayList<>();

  /**
   * Runs the command.
   *
   * @return the exit code ({@link ExitCodes})
   * @throws Exception anything; reported on stderr and mapped to an exit code
   */
  protected abstract int run() throws Exception;

  @Override
  public final Integer call() {
    try {
      return run();
    } catch (Exception | LinkageError e) {
      if (verbose) {
        java.io.StringWriter trace = new java.io.StringWriter();
        e.printStackTrace(new PrintWriter(trace));
        err().print(redact(trace.toString()));
      }
      String message = redact(describe(e));
      err().println(spec.qualifiedName() + ": " + message);
      if (spec.commandLine().getParseResult() != null
          && spec.commandLine().getParseResult().hasMatchedOption("--json")) {
        // a pipeline reading stdout gets one document even when the run broke
        out().println(Json.error(commandName(), ExitCodes.of(e), message));
        out().flush();
      }
      err().flush();
      return ExitCodes.of(e);
    }
  }

  /**
   * Registers a connection string whose text and password are removed from every error line.
   *
   * @param dsn the connection string
   * @return the same
   */
  protected Dsn secret(Dsn dsn) {
    secrets.add(dsn);
    return dsn;
  }

  /**
   * Removes every registered connection string (and its password) from a text, and every password
   * of the command line and of {@code $LEDGER_URL} ({@link Secrets}).
   *
   * @param text any text, may be null
   * @return the text, redacted
   */
  protected String redact(String text) {
    String out = text;
    for (Dsn dsn : secrets) {
      out = dsn.redact(out);
    }
    CommandLine.ParseResult parsed = spec.root().commandLine().getParseResult();
    return Secrets.redact(
        out, parsed == null ? new String[0] : parsed.originalArgs().toArray(String[]::new));
  }

  /**
   * Where the command's output goes (stdout unless a test set another).
   *
   * @return the writer
   */
  protected PrintWriter out() {
    return spec.commandLine().getOut();
  }

  /**
   * Where errors and progress go (stderr unless a test set another).
   *
   * @return the writer
   */
  protected PrintWriter err() {
    return spec.commandLine().getErr();
  }

  /**
   * The command's name with its parents', e.g. {@code ledger-app fleet migrate}.
   *
   * @return the name
   */
  protected String commandName() {
    return spec.qualifiedName();
  }

  private static String describe(Throwable e) {
    StringBuilder out = new StringBuilder();
    String message = e.getMessage();
    if (message == null || message.isBlank()) {
      out.append(e.getClass().getSimpleName());
    } else {
      out.append(message.strip().replaceAll("\\s*\\R\\s*", "; "));
    }
    Throwable cause = e.getCause();
    if (cause != null
        && cause.getMessage() != null
        && !out.toString().contains(cause.getMessage())) {
      out.append(" (")
          .append(cause.getMessage().strip().replaceAll("\\s*\\R\\s*", "; "))
          .append(')');
    }
    return out.toString();
  }
}

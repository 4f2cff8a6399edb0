package dev.ledger.app.migrate;

import dev.ledger.app.ExitCodes;
import dev.ledger.app.Secrets;
import dev.ledger.migrate.Dsn;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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

  /** Guards {@link #finished}: the final output is printed by the run or by the hook, once. */
  private final Object finalOutput = new Object();

  /** Whether the run's result, its error or the interruption report was printed. */
  private boolean finished;

  /** The run's progress, for the report of an interrupted run; null before the run counts. */
  private volatile Progress progress;

  /**
   * Whether a signal that stops the JVM (SIGTERM, SIGINT, SIGHUP) while the command runs makes it
   * print an interruption report first ({@link #interrupted()}): the migration and fleet runs,
   * whose {@code --json} promises one document however the run ends.
   *
   * @return false unless a command says so
   */
  protected boolean reportsInterruption() {
    return false;
  }

  /**
   * Notes the run's progress, which the interruption report shows.
   *
   * @param progress the run's progress line
   * @return the same
   */
  protected Progress track(Progress progress) {
    this.progress = progress;
    return progress;
  }

  /**
   * Prints the command's final output on stdout, unless the interruption report was printed first:
   * the two never both appear, nor interleave.
   *
   * @param text the whole output, redacted, with its line ends
   */
  protected void printResult(String text) {
    synchronized (finalOutput) {
      if (finished) {
        return;
      }
      finished = true;
      out().print(text);
      out().flush();
    }
  }

  @Override
  public final Integer call() {
    Thread hook = null;
    if (reportsInterruption()) {
      StopSignals.install();
      hook = new Thread(this::interrupted, "ledger-app-interrupted");
      Runtime.getRuntime().addShutdownHook(hook);
    }
    try {
      return run();
    } catch (Exception | LinkageError e) {
      synchronized (finalOutput) {
        if (finished) {
          return ExitCodes.of(e);
        }
        finished = true;
        if (verbose) {
          java.io.StringWriter trace = new java.io.StringWriter();
          e.printStackTrace(new PrintWriter(trace));
          err().print(redact(trace.toString()));
        }
        String message = redact(describe(e));
        err().println(spec.qualifiedName() + ": " + message);
        if (json()) {
          // a pipeline reading stdout gets one document even when the run broke
          out().println(Json.error(commandName(), ExitCodes.of(e), message));
          out().flush();
        }
        err().flush();
      }
      return ExitCodes.of(e);
    } finally {
      if (hook != null) {
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
          // the hook runs (or ran) and found the output printed, or printed the report
        }
      }
    }
  }

  /**
   * The shutdown hook: when the run has not printed its result yet, the interruption report, on
   * stdout as the {@code --json} document ({@code "outcome":"interrupted"}, the progress so far)
   * and on stderr as one line.
   */
  private void interrupted() {
    synchronized (finalOutput) {
      if (finished) {
        return;
      }
      finished = true;
      String signal = StopSignals.received();
      int exit = StopSignals.exitCode(signal);
      Progress p = progress;
      if (p != null) {
        p.close(); // the interruption's line is the last on stderr, after any progress line
      }
      Progress.Snapshot done = p == null ? null : p.snapshot();
      String message = redact(interruptedMessage(signal, p, done));
      err().println(commandName() + ": " + message);
      err().flush();
      if (json()) {
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("error", message);
        extra.put("outcome", "interrupted");
        extra.put("signal", signal);
        extra.put("progress", done);
        out().println(redact(Json.document(commandName(), exit, false, null, extra)));
        out().flush();
      }
    }
  }

  private static String interruptedMessage(String signal, Progress p, Progress.Snapshot done) {
    StringBuilder m =
        new StringBuilder("interrupted")
            .append(signal == null ? " (the JVM is shutting down)" : " by " + signal);
    if (done != null && done.total() >= 0) {
      m.append(" after ")
          .append(done.done())
          .append(" of ")
          .append(done.total())
          .append(' ')
          .append(p.unit());
      if (!done.inFlight().isEmpty()) {
        m.append(", working on ").append(String.join(", ", done.inFlight()));
      }
    } else {
      m.append(" before the run had read the database");
    }
    return m.append("; run it again to finish").toString();
  }

  /**
   * Whether the command prints JSON: its own {@code --json}, or one given before it.
   *
   * @return true for {@code --json}
   */
  protected boolean json() {
    CommandLine.Model.OptionSpec option = spec.findOption("--json");
    if (option != null && Boolean.TRUE.equals(option.getValue())) {
      return true;
    }
    CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
    return parsed != null && parsed.hasMatchedOption("--json");
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

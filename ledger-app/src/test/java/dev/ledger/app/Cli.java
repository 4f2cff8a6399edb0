package dev.ledger.app;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** Runs {@code ledger-app} in this JVM and captures its stdout and stderr. */
public final class Cli {

  private Cli() {}

  /**
   * What a command printed and returned.
   *
   * @param exit the exit code
   * @param out its stdout
   * @param err its stderr
   */
  public record Result(int exit, String out, String err) {
    /**
     * Both streams.
     *
     * @return stdout then stderr
     */
    public String all() {
      return out + err;
    }
  }

  /**
   * Runs a command line.
   *
   * @param args the arguments
   * @return what it printed and returned
   */
  public static Result run(String... args) {
    return run(Main.commandLine(), args);
  }

  /**
   * Runs arguments on a given command line.
   *
   * @param cli the command line, e.g. {@code Main.commandLine(args)}
   * @param args the arguments
   * @return what it printed and returned
   */
  public static Result run(CommandLine cli, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    int exit = cli.execute(args);
    return new Result(exit, out.toString(), err.toString());
  }
}

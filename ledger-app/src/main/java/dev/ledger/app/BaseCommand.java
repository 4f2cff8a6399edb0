package dev.ledger.app;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.InvalidInputException;
import dev.ledger.Ledger;
import java.io.PrintWriter;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The base of every command that runs against a ledger ({@link LedgerCommand}, {@code work}, {@code
 * feed}): {@code --json}, {@code --verbose}, the picocli spec, printing a result as text or as one
 * JSON document, refusing an unknown domain, and the one place where a library error naming an
 * internal field ({@code maxClaimed}, {@code batchSize}, {@code retention}) is turned into a usage
 * error naming the option the user typed ({@code --concurrency}, {@code --batch}, {@code --keep}),
 * with durations as the user writes them ({@code 100ms}, not {@code PT0.1S}): see {@link
 * OptionNames}.
 *
 * <p>Not thread-safe: picocli builds one instance per run.
 */
public abstract class BaseCommand implements Callable<Integer> {

  /** Print JSON instead of text (a usage error prints a JSON error document too). */
  @Option(
      names = "--json",
      description =
          "Print JSON instead of text: one document (JSON lines where the description says so);"
              + " errors too.")
  protected boolean json;

  /** Show the stack trace of an error (read by {@link Main}'s error handler). */
  @Option(names = "--verbose", description = "Show the stack trace of an error.")
  protected boolean verbose;

  /** The command's picocli spec, for its output streams and its options. */
  @Spec protected CommandSpec spec;

  /** For picocli and subclasses. */
  protected BaseCommand() {}

  /**
   * Runs {@link #execute()}; an {@link InvalidInputException} (or an {@link
   * IllegalArgumentException} whose message starts with a field) that names a field this command
   * sets from an option becomes a usage error naming that option ({@link OptionNames}).
   *
   * @return the exit code ({@link ExitCodes})
   * @throws Exception what {@link #execute()} throws, a field's error as a {@link
   *     ParameterException}
   */
  @Override
  public final Integer call() throws Exception {
    try {
      return execute();
    } catch (InvalidInputException e) {
      throw OptionNames.refusal(spec, e.field(), e.getMessage(), optionNames(), e);
    } catch (IllegalArgumentException e) {
      String m = String.valueOf(e.getMessage());
      int colon = m.indexOf(": ");
      if (colon <= 0) {
        throw e;
      }
      throw OptionNames.refusal(spec, m.substring(0, colon), m, optionNames(), e);
    }
  }

  /**
   * Runs the command.
   *
   * @return the exit code ({@link ExitCodes})
   * @throws Exception on failure; {@link Main} maps it to a line and an exit code
   */
  protected abstract int execute() throws Exception;

  /**
   * This command's own names for library fields, where they differ from {@link OptionNames}'s
   * shared table (e.g. {@code work}: {@code initial} is {@code --backoff}).
   *
   * @return field to option name ({@code --x}) or positional label ({@code NAME}); empty by default
   */
  protected Map<String, String> optionNames() {
    return Map.of();
  }

  /**
   * Prints a result: the document with {@code --json}, else the text as one line.
   *
   * @param out where to print
   * @param doc the JSON document
   * @param text the text
   * @return {@link ExitCodes#OK}
   */
  protected final int print(PrintWriter out, ObjectNode doc, String text) {
    if (json) {
      Output.json(out, doc);
    } else {
      out.println(text);
    }
    return ExitCodes.OK;
  }

  /**
   * Refuses a usage: a {@link ParameterException} for this command, exit {@link ExitCodes#USAGE}.
   *
   * @param message what is wrong, starting with the option's name
   * @return the error, for the caller to throw
   */
  protected final ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  /**
   * Whether the user gave an option on the command line (rather than its default).
   *
   * @param name e.g. {@code --zone}
   * @return true when it was given
   */
  protected final boolean given(String name) {
    return spec.commandLine().getParseResult() != null
        && spec.commandLine().getParseResult().hasMatchedOption(name);
  }

  /**
   * Refuses domains that do not exist (no task filed, no schema provisioned), so that a misspelt
   * name never makes a domain or writes under one by accident. Commands with a {@code --create}
   * option skip the check when it is given, and their error says so.
   *
   * @param ledger the ledger
   * @param domains the domains the user named
   * @param option what the user typed them as: {@code --domain}, or a positional label such as
   *     {@code DOMAIN}
   * @param create whether {@code --create} was given
   * @throws ParameterException naming the option and the first unknown domain
   */
  protected final void requireDomains(
      Ledger ledger, Collection<String> domains, String option, boolean create) {
    if (create) {
      return;
    }
    Collection<String> known = null;
    for (String d : domains) {
      if (known == null) {
        known = new java.util.HashSet<>(ledger.domains());
      }
      if (!known.contains(d)) {
        throw usage(
            option
                + ": unknown domain '"
                + Output.escape(d)
                + "': no task was ever filed there and no schema provisioned. Check the spelling,"
                + (spec.findOption("--create") != null
                    ? " or give --create to make it"
                    : " or provision it first: ledger-app migrate --provision "
                        + Output.escape(d)));
      }
    }
  }
}

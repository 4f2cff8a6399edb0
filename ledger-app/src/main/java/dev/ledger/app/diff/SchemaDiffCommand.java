package dev.ledger.app.diff;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.ledger.app.migrate.Json;
import dev.ledger.diff.AdviceConfig;
import dev.ledger.diff.DiffReport;
import dev.ledger.diff.FailOn;
import dev.ledger.diff.SchemaDiff;
import dev.ledger.diff.SchemaDiffException;
import dev.ledger.diff.Using;
import dev.ledger.diff.against.AgainstReport;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ledger-app schema-diff}: applies two Flyway migration sets to scratch schemas, compares
 * the catalogs they leave, and prints the difference with each change classified {@code safe},
 * {@code locking} or {@code destructive}.
 *
 * <pre>{@code
 * ledger-app schema-diff --base base/db/migration --head db/migration --fail-on destructive
 * ledger-app schema-diff --base app-1.2.jar!/db/migration --head db/migration --format json
 * }</pre>
 *
 * <p>Exit codes, for CI: {@value #NO_FAILURE} no difference or only differences {@code --fail-on}
 * allows; {@value #RULE_TRIPPED} the {@code --fail-on} rule tripped; {@value #ERROR} usage error, a
 * migration that fails, or a database error, or an {@code --against} check that could not run (the
 * report is printed first, those checks marked "not run"); {@value #UNVERIFIED} the SQL is not safe
 * to run as printed (refused, or failing or inexact when checked on a scratch schema, or rows of
 * the {@code --against} database a new constraint rejects). Errors are one line on standard error;
 * {@code --verbose} adds the stack trace and Flyway's log.
 *
 * <p>The command line of the {@code ledger-schema-diff} library ({@link SchemaDiff}): this class
 * parses the options, picks the format and maps the report to an exit code; the diff is the
 * library's.
 */
@Command(
    name = "schema-diff",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Compare two Flyway migration sets; each change is safe, locking or destructive.",
      "Applies both sets to scratch schemas of a PostgreSQL, compares the catalogs they leave"
          + " (tables, columns, keys, indexes, sequences, partitions, types, functions, views,"
          + " triggers, policies, comments, grants: docs/schema-diff.md) and prints the"
          + " difference, each change classified with its reason. The SQL is checked first on a"
          + " scratch schema: when the base plus the SQL is not exactly the head, the verdict"
          + " says so and the exit code is 3.",
      ""
    },
    footer = {
      "",
      "Examples:",
      "  ledger-app schema-diff --base base/src/main/resources/db/migration \\",
      "      --head src/main/resources/db/migration",
      "  ledger-app schema-diff --base app-1.2.jar!/db/migration \\",
      "      --head src/main/resources/db/migration --json --fail-on any",
      "  ledger-app schema-diff --base base/db/migration --head db/migration \\",
      "      --against 'jdbc:postgresql://replica/app?user=ci'"
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:no difference, or only differences --fail-on allows (the SQL checked)",
      "1:the --fail-on rule tripped (the SQL checked)",
      "2:usage error, failing migration or database error; or an --against check not run"
          + " (the report still printed)",
      "3:the SQL is not safe to run as printed: a change is refused, or checked on a scratch"
          + " schema the SQL failed or did not reach the head, or --against rows reject it"
    })
public final class SchemaDiffCommand implements Callable<Integer> {

  /** Exit code: no difference, or only differences {@code --fail-on} allows. */
  public static final int NO_FAILURE = 0;

  /** Exit code: the {@code --fail-on} rule tripped. */
  public static final int RULE_TRIPPED = 1;

  /** Exit code: usage error, failing migration or database error. */
  public static final int ERROR = 2;

  /**
   * Exit code: the SQL is not safe to run as printed (a change is refused, or the check on a
   * scratch schema failed or did not reach the head), whatever {@code --fail-on} says.
   */
  public static final int UNVERIFIED = 3;

  /** The output formats. */
  public enum Format {
    /** Markdown for a pull request comment. */
    MARKDOWN,
    /** The SQL script from base to head. */
    SQL,
    /** JSON for pipelines. */
    JSON
  }

  @Option(
      names = "--base",
      required = true,
      paramLabel = "PATH",
      description = "The base migrations: a directory, a jar, or JAR!/DIR.")
  private String base;

  @Option(
      names = "--head",
      required = true,
      paramLabel = "PATH",
      description = "The head migrations: a directory, a jar, or JAR!/DIR.")
  private String head;

  @Option(
      names = "--format",
      paramLabel = "FORMAT",
      defaultValue = "markdown",
      description = "markdown (default), sql or json.")
  private Format format;

  @Option(
      names = "--fail-on",
      paramLabel = "RULE",
      defaultValue = "destructive",
      description = "Exit with 1 on: destructive changes (default), any change, or never.")
  private FailOn failOn;

  @Option(
      names = "--json",
      description = "Print one JSON document, as --format json does; errors too.")
  private boolean json;

  @Option(
      names = "--online",
      description =
          "Print the online plan: indexes built CONCURRENTLY, foreign keys and checks added NOT"
              + " VALID then validated, SET NOT NULL through a validated CHECK, unique keys added"
              + " USING INDEX, under a lock_timeout header; each change is classified by that plan.")
  private boolean online;

  @Option(
      names = "--placeholder",
      paramLabel = "KEY=VALUE",
      description =
          "A Flyway placeholder for both sets; repeatable, each KEY once."
              + " $${flyway:defaultSchema} is filled with the scratch schema.")
  private List<String> placeholderArgs = new ArrayList<>();

  @Option(
      names = "--base-placeholder",
      paramLabel = "KEY=VALUE",
      description =
          "A Flyway placeholder for the base only (wins over --placeholder); repeatable, each"
              + " KEY once. A"
              + " placeholder whose value differs between the sides is a reviewable change.")
  private List<String> basePlaceholderArgs = new ArrayList<>();

  @Option(
      names = "--head-placeholder",
      paramLabel = "KEY=VALUE",
      description =
          "A Flyway placeholder for the head only (wins over --placeholder); repeatable, each"
              + " KEY once.")
  private List<String> headPlaceholderArgs = new ArrayList<>();

  @Option(
      names = "--using",
      paramLabel = "TABLE.COLUMN=EXPR",
      description =
          "Convert a column whose type changes with this expression (ALTER COLUMN ... TYPE ..."
              + " USING EXPR) instead of a cast, e.g. events.ts=to_timestamp(ts); repeatable, each"
              + " column once. Needed where the types have no cast (refused otherwise).")
  private List<String> usingArgs = new ArrayList<>();

  @Option(
      names = "--url",
      paramLabel = "JDBC",
      description = {
        "Use this PostgreSQL instead of an embedded one; scratch schemas are created there"
            + " and dropped. Such as",
        "jdbc:postgresql://host/db?user=me"
      })
  private String url;

  @Option(names = "--verbose", description = "Show stack traces and Flyway's log on errors.")
  private boolean verbose;

  @Mixin private AgainstOptions extra = new AgainstOptions();

  @Spec private CommandSpec spec;

  /**
   * Runs the diff and prints it.
   *
   * @return {@value #NO_FAILURE}, {@value #RULE_TRIPPED} or {@value #ERROR}
   */
  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    // Flyway logs each failure itself, naming the scratch schema; the one-line error below says
    // it better. --verbose keeps Flyway's log.
    Logger flywayLog =
        LoggerFactory.getLogger("org.flywaydb") instanceof Logger logback ? logback : null;
    Level level = flywayLog == null ? null : flywayLog.getLevel();
    if (flywayLog != null) {
      flywayLog.setLevel(verbose ? Level.INFO : Level.OFF);
    }
    try {
      Map<String, String> placeholders = placeholders("--placeholder", placeholderArgs);
      Map<String, String> basePlaceholders =
          placeholders("--base-placeholder", basePlaceholderArgs);
      Map<String, String> headPlaceholders =
          placeholders("--head-placeholder", headPlaceholderArgs);
      Map<String, String> using = Using.parse(usingArgs);
      AdviceConfig config = extra.validate();
      SchemaDiff.Compared compared =
          SchemaDiff.compare(
              new SchemaDiff.Request(
                  base,
                  head,
                  placeholders,
                  basePlaceholders,
                  headPlaceholders,
                  url,
                  failOn,
                  online,
                  using));
      DiffReport report = config.apply(compared.report());
      AgainstReport against = extra.check(compared);
      out.print(AgainstOptions.print(report, against, json ? Format.JSON : format));
      out.flush();
      if (!report.verified() || (against != null && against.rejects())) {
        return UNVERIFIED;
      }
      if (against != null && against.incomplete()) {
        // The report is printed, its unchecked data marked "not run"; the run is still an error.
        err.println("schema-diff: --against: " + against.summary());
        err.flush();
        return ERROR;
      }
      return report.failed() ? RULE_TRIPPED : NO_FAILURE;
    } catch (SchemaDiffException e) {
      return error(err, e.getMessage(), e);
    } catch (RuntimeException e) {
      // A failure nothing above foresaw (a temporary directory that cannot be removed, a bug):
      // still exit 2, so CI never reads it as the --fail-on rule tripping.
      return error(err, "unexpected error: " + e, e);
    } finally {
      if (flywayLog != null) {
        flywayLog.setLevel(level);
      }
    }
  }

  /**
   * The values of a placeholder option as a map, in the order given.
   *
   * @param option the option, for messages, e.g. {@code --placeholder}
   * @param args each {@code KEY=VALUE}
   * @return the placeholders
   * @throws SchemaDiffException naming the option for a value without {@code =}, an empty key, or a
   *     key given twice (which would otherwise silently keep the last value)
   */
  static Map<String, String> placeholders(String option, List<String> args) {
    Map<String, String> map = new LinkedHashMap<>();
    for (String arg : args) {
      int eq = arg.indexOf('=');
      if (eq < 0) {
        throw new SchemaDiffException(option + ": expected KEY=VALUE, got '" + arg + "'");
      }
      String key = arg.substring(0, eq);
      if (key.isBlank()) {
        throw new SchemaDiffException(option + ": expected KEY=VALUE with a non-empty KEY");
      }
      if (map.putIfAbsent(key, arg.substring(eq + 1)) != null) {
        throw new SchemaDiffException(
            option + ": key '" + key + "' given twice; give each key once");
      }
    }
    return map;
  }

  private int error(PrintWriter err, String message, RuntimeException e) {
    String line = extra.redact(SchemaDiff.errorLine(message, url));
    if (json || format == Format.JSON) {
      PrintWriter out = spec.commandLine().getOut();
      out.println(Json.error("ledger-app schema-diff", ERROR, line));
      out.flush();
    }
    err.println("schema-diff: " + line);
    if (verbose) {
      // Stack traces hold messages of causes too; print the trace through the same redaction.
      StringWriter trace = new StringWriter();
      e.printStackTrace(new PrintWriter(trace));
      err.print(extra.redact(SchemaDiff.redact(trace.toString(), url)));
    }
    err.flush();
    return ERROR;
  }
}

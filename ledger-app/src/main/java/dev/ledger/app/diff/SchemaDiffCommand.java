package dev.ledger.app.diff;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
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
 * migration that fails, or a database error; {@value #UNVERIFIED} the SQL is not safe to run as
 * printed (refused, or failing or inexact when checked on a scratch schema). Errors are one line on
 * standard error; {@code --verbose} adds the stack trace and Flyway's log.
 */
@Command(
    name = "schema-diff",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Applies two Flyway migration sets to scratch schemas of a PostgreSQL, compares the catalogs"
          + " they leave (schemas, tables, columns, keys, constraints, indexes, sequences) and"
          + " prints the difference, each change classified safe, locking or destructive.",
      ""
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:no difference, or only differences --fail-on allows (the SQL checked)",
      "1:the --fail-on rule tripped (the SQL checked)",
      "2:usage error, failing migration or database error",
      "3:the SQL is not safe to run as printed: a change is refused, or checked on a scratch"
          + " schema the SQL failed or did not reach the head"
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
      names = "--placeholder",
      paramLabel = "KEY=VALUE",
      description =
          "A Flyway placeholder for both sets; repeatable. $${flyway:defaultSchema} is filled"
              + " with the scratch schema.")
  private Map<String, String> placeholders = new LinkedHashMap<>();

  @Option(
      names = "--base-placeholder",
      paramLabel = "KEY=VALUE",
      description =
          "A Flyway placeholder for the base only (wins over --placeholder); repeatable. A"
              + " placeholder whose value differs between the sides is a reviewable change.")
  private Map<String, String> basePlaceholders = new LinkedHashMap<>();

  @Option(
      names = "--head-placeholder",
      paramLabel = "KEY=VALUE",
      description = "A Flyway placeholder for the head only (wins over --placeholder); repeatable.")
  private Map<String, String> headPlaceholders = new LinkedHashMap<>();

  @Option(
      names = "--url",
      paramLabel = "JDBC",
      description =
          "Use this PostgreSQL (jdbc:postgresql://host/db?user=...&password=...) instead of an"
              + " embedded one; scratch schemas are created there and dropped.")
  private String url;

  @Option(names = "--verbose", description = "Show stack traces and Flyway's log on errors.")
  private boolean verbose;

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
      checkKeys("--placeholder", placeholders);
      checkKeys("--base-placeholder", basePlaceholders);
      checkKeys("--head-placeholder", headPlaceholders);
      DiffReport report =
          SchemaDiff.run(
              new SchemaDiff.Request(
                  base, head, placeholders, basePlaceholders, headPlaceholders, url, failOn));
      out.print(
          switch (format) {
            case MARKDOWN -> report.markdown();
            case SQL -> report.sql();
            case JSON -> report.json();
          });
      out.flush();
      if (!report.verified()) {
        return UNVERIFIED;
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

  private static void checkKeys(String option, Map<String, String> values) {
    for (String key : values.keySet()) {
      if (key.isBlank()) {
        throw new SchemaDiffException(option + ": expected KEY=VALUE with a non-empty KEY");
      }
    }
  }

  private int error(PrintWriter err, String message, RuntimeException e) {
    err.println("schema-diff: " + ScratchPostgres.redact(MigrationErrors.oneLine(message), url));
    if (verbose) {
      // Stack traces hold messages of causes too; print the trace through the same redaction.
      StringWriter trace = new StringWriter();
      e.printStackTrace(new PrintWriter(trace));
      err.print(ScratchPostgres.redact(trace.toString(), url));
    }
    err.flush();
    return ERROR;
  }
}

package dev.ledger.app.diff;

import dev.ledger.diff.AdviceConfig;
import dev.ledger.diff.DiffReport;
import dev.ledger.diff.SchemaDiff;
import dev.ledger.diff.SchemaDiffException;
import dev.ledger.diff.against.AgainstDatabase;
import dev.ledger.diff.against.AgainstReport;
import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * The options of {@code schema-diff} beyond the diff itself: the data checks against a real
 * database ({@code --against}, {@code --against-timeout}) and the project's advice settings ({@code
 * --config}). A picocli mixin of {@link SchemaDiffCommand}; not thread-safe (one per command run).
 */
public final class AgainstOptions {

  @Option(
      names = "--against",
      paramLabel = "JDBC",
      description = {
        "Also check the diff against this database, read-only (a staging copy or a replica):"
            + " rows each new NOT NULL, unique key, CHECK or foreign key rejects, rows a dropped"
            + " column or table holds, and the size of each table a change locks. Such as",
        "jdbc:postgresql://replica/app?user=ci&currentSchema=app"
      })
  String against;

  @Option(
      names = "--against-timeout",
      paramLabel = "SECONDS",
      defaultValue = "30",
      description = "The statement_timeout of each --against query (default: 30).")
  int againstTimeout;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description =
          "The project's advice settings (JSON, {\"allow\": [\"prefer-text\"]}); default:"
              + " .ledger/schema-diff.json when it exists.")
  String config;

  /**
   * Checks the options before the diff runs, so that a mistake is a usage error (exit 2) at once.
   *
   * @return the project's advice settings
   * @throws SchemaDiffException naming the option
   */
  AdviceConfig validate() {
    if (against != null) {
      AgainstDatabase.validate(against);
      if (againstTimeout < 1) {
        throw new SchemaDiffException("--against-timeout: expected a number of seconds, 1 or more");
      }
    }
    return config == null
        ? AdviceConfig.read("--config", Path.of(AdviceConfig.DEFAULT_FILE), false)
        : AdviceConfig.read("--config", Path.of(config), true);
  }

  /**
   * Runs the data checks, when {@code --against} is given.
   *
   * @param compared the diff and its catalogs
   * @return what they found, or null without {@code --against}
   */
  AgainstReport check(SchemaDiff.Compared compared) {
    return against == null
        ? null
        : AgainstDatabase.check(
            compared, against, Duration.ofSeconds(againstTimeout), AgainstDatabase.DEFAULT_LIMIT);
  }

  /**
   * A report in one format with the data checks added.
   *
   * @param report the diff's report
   * @param checks the data checks, or null
   * @param format the format
   * @return the text to print
   */
  static String print(DiffReport report, AgainstReport checks, SchemaDiffCommand.Format format) {
    return switch (format) {
      case MARKDOWN -> checks == null ? report.markdown() : checks.markdown(report.markdown());
      case SQL -> checks == null ? report.sql() : checks.sql(report.sql());
      case JSON -> checks == null ? report.json() : checks.json(report.json());
    };
  }

  /**
   * Text without the password of {@code --against}'s URL.
   *
   * @param text the text, may be null
   * @return the text with the password replaced by {@code ***}
   */
  String redact(String text) {
    return SchemaDiff.redact(text, against);
  }
}

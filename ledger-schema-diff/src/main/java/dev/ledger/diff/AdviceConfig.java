package dev.ledger.diff;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A project's advice settings, read from a JSON file ({@code .ledger/schema-diff.json} by default,
 * {@code --config PATH}): the rules silenced for the whole project, besides the per-statement
 * {@code -- ledger:allow RULE} comments.
 *
 * <pre>{@code
 * {
 *   "allow": ["prefer-text", "prefer-timestamptz"]
 * }
 * }</pre>
 *
 * <p>Read with Jackson's streaming parser, so that an error names the line: an unknown key, an
 * unknown rule id or a value of the wrong shape is a {@link SchemaDiffException} naming the file,
 * the line and the key or rule.
 *
 * @param file the file it was read from, as given, or null for none
 * @param allowed the rule ids silenced for the project
 */
public record AdviceConfig(String file, Set<String> allowed) {

  /** The default file, relative to the working directory (the project's root in CI). */
  public static final String DEFAULT_FILE = ".ledger/schema-diff.json";

  /** Every rule id a finding can have. */
  public static final List<String> RULES =
      List.of(
          Advice.PREFER_BIGINT,
          Advice.PREFER_IDENTITY,
          Advice.PREFER_TEXT,
          Advice.PREFER_TIMESTAMPTZ,
          Advice.PREFER_IF_EXISTS);

  /** Copies the rule ids. */
  public AdviceConfig {
    allowed = Set.copyOf(allowed);
  }

  /** No file: nothing silenced. */
  public static final AdviceConfig NONE = new AdviceConfig(null, Set.of());

  /**
   * Reads the settings.
   *
   * @param option the option that named the file, for messages, e.g. {@code --config}
   * @param file the file, not null
   * @param required whether a missing file is an error (given by the option) or means no settings
   *     (the default file)
   * @return the settings
   * @throws SchemaDiffException naming the option, the file and the line for a file that cannot be
   *     read, is not JSON, or holds an unknown key, an unknown rule id or a value of the wrong
   *     shape
   */
  public static AdviceConfig read(String option, Path file, boolean required) {
    String where = option + " " + file;
    String text;
    try {
      text = Files.readString(file);
    } catch (NoSuchFileException e) {
      if (!required) {
        return NONE;
      }
      throw new SchemaDiffException(where + ": no such file");
    } catch (IOException e) {
      throw new SchemaDiffException(where + ": cannot read: " + e.getMessage());
    }
    Set<String> allowed = new LinkedHashSet<>();
    try (JsonParser p = new JsonFactory().createParser(text)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw error(where, p, "expected an object such as {\"allow\": [\"prefer-text\"]}");
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String key = p.currentName();
        if (!key.equals("allow")) {
          throw error(where, p, "unknown key '" + key + "'; the one key is 'allow'");
        }
        if (p.nextToken() != JsonToken.START_ARRAY) {
          throw error(where, p, "'allow' must be a list of rule ids");
        }
        while (p.nextToken() != JsonToken.END_ARRAY) {
          if (p.currentToken() != JsonToken.VALUE_STRING) {
            throw error(where, p, "'allow' must be a list of rule ids");
          }
          String rule = p.getText();
          if (!RULES.contains(rule)) {
            throw error(
                where,
                p,
                "unknown rule '" + rule + "' in 'allow'; known rules: " + String.join(", ", RULES));
          }
          allowed.add(rule);
        }
      }
      if (p.nextToken() != null) {
        throw error(where, p, "text after the object");
      }
    } catch (JsonProcessingException e) {
      throw new SchemaDiffException(
          where
              + " line "
              + e.getLocation().getLineNr()
              + ": not JSON: "
              + MigrationErrors.oneLine(e.getOriginalMessage()));
    } catch (IOException e) {
      throw new SchemaDiffException(where + ": cannot read: " + e.getMessage());
    }
    return new AdviceConfig(file.toString(), allowed);
  }

  /**
   * A report without the findings of the rules this project silences.
   *
   * @param report the report
   * @return the same report when nothing is silenced, else a copy with fewer findings
   */
  public DiffReport apply(DiffReport report) {
    if (allowed.isEmpty()) {
      return report;
    }
    return new DiffReport(
        report.base(),
        report.head(),
        report.diff(),
        report.failOn(),
        report.verification(),
        report.online(),
        report.findings().stream().filter(f -> !allowed.contains(f.rule())).toList());
  }

  private static SchemaDiffException error(String where, JsonParser p, String message) {
    return new SchemaDiffException(
        where + " line " + p.currentTokenLocation().getLineNr() + ": " + message);
  }
}

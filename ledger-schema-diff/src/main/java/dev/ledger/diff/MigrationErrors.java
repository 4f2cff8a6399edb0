package dev.ledger.diff;

import java.sql.SQLException;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.internal.sqlscript.FlywaySqlScriptException;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * Turns a failed Flyway run into one line that names the script, the line and PostgreSQL's message,
 * e.g. {@code base: migrations/V2__broken.sql line 6: syntax error at or near "nto" (SQL state
 * 42601)}.
 *
 * <p>Flyway reports the line where the failing statement's first token is. PostgreSQL reports the
 * character position of the error inside the statement as sent; the statement as sent starts with
 * the comments that precede its first token. The error's line is therefore Flyway's line plus the
 * line breaks between the first token and that position.
 */
final class MigrationErrors {

  private MigrationErrors() {}

  /**
   * Describes a failed migration.
   *
   * @param role which set failed, e.g. {@code base}
   * @param source the set's source, to name the script as the user knows it
   * @param failure what Flyway threw
   * @param redact removes secrets from a message
   * @return the exception to report, its message one line
   */
  static SchemaDiffException describe(
      String role, MigrationSource source, FlywayException failure, UnaryOperator<String> redact) {
    FlywaySqlScriptException script = find(failure, FlywaySqlScriptException.class);
    SQLException sql = find(failure, SQLException.class);
    if (script != null) {
      String file =
          source.describeScript(
              script.getResource() == null ? null : script.getResource().getAbsolutePathOnDisk(),
              script.getResource() == null ? "?" : script.getResource().getFilename());
      int position = 0;
      String message = sql == null ? oneLine(script.getMessage()) : oneLine(sql.getMessage());
      if (sql instanceof PSQLException psql && psql.getServerErrorMessage() != null) {
        ServerErrorMessage server = psql.getServerErrorMessage();
        position = server.getPosition();
        message = server.getMessage();
      }
      int line = errorLine(script.getLineNumber(), script.getStatement(), position);
      String state =
          sql == null || sql.getSQLState() == null ? "" : " (SQL state " + sql.getSQLState() + ")";
      return new SchemaDiffException(
          redact.apply(role + ": " + file + " line " + line + ": " + message + state), failure);
    }
    return new SchemaDiffException(
        redact.apply(role + ": " + oneLine(failure.getMessage())), failure);
  }

  /**
   * The line of the file an error is on.
   *
   * @param statementLine the line of the statement's first token in the file, 1-based
   * @param statement the statement as sent, leading comments included; may be null
   * @param position PostgreSQL's error position in the statement, 1-based characters; 0 when none
   * @return the line, 1-based
   */
  static int errorLine(int statementLine, String statement, int position) {
    if (statement == null || position <= 0) {
      return statementLine;
    }
    int first = firstToken(statement);
    int codePoints = statement.codePointCount(0, statement.length());
    int at = statement.offsetByCodePoints(0, Math.min(position - 1, codePoints));
    int line = statementLine;
    for (int i = first; i < at; i++) {
      if (statement.charAt(i) == '\n') {
        line++;
      }
    }
    return line;
  }

  /** The index of the first character that is neither white space nor inside a comment. */
  static int firstToken(String sql) {
    int i = 0;
    int n = sql.length();
    while (i < n) {
      if (Character.isWhitespace(sql.charAt(i))) {
        i++;
      } else if (sql.startsWith("--", i)) {
        int end = sql.indexOf('\n', i);
        i = end < 0 ? n : end + 1;
      } else if (sql.startsWith("/*", i)) {
        int depth = 1;
        i += 2;
        while (i < n && depth > 0) {
          if (sql.startsWith("/*", i)) {
            depth++;
            i += 2;
          } else if (sql.startsWith("*/", i)) {
            depth--;
            i += 2;
          } else {
            i++;
          }
        }
      } else {
        return i;
      }
    }
    return n;
  }

  /**
   * A message on one line: its lines stripped and joined with spaces, blank and rule lines left
   * out.
   *
   * @param message the message, may be null
   * @return the message on one line
   */
  static String oneLine(String message) {
    if (message == null || message.isBlank()) {
      return "unknown error";
    }
    return message
        .lines()
        .map(String::strip)
        .filter(l -> !l.isEmpty() && !l.chars().allMatch(c -> c == '-'))
        .collect(Collectors.joining(" "));
  }

  private static <T extends Throwable> T find(Throwable t, Class<T> type) {
    for (Throwable cause = t; cause != null; cause = cause.getCause()) {
      if (type.isInstance(cause)) {
        return type.cast(cause);
      }
    }
    return null;
  }
}

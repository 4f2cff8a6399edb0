package dev.ledger.diff.review;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A migration script split into its statements, each with the line it starts on, as Flyway runs
 * them: on the semicolons outside quotes, comments and dollar quotes.
 */
final class ScriptStatements {

  private static final Pattern DOLLAR_TAG = Pattern.compile("\\$[A-Za-z_]*\\$");
  private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([^}]+)}");

  /**
   * One statement.
   *
   * @param line the line its first word is on, from 1
   * @param sql its text as written, from its first word to its closing {@code ;} (left out);
   *     comments before it left out, comments inside kept
   */
  record Piece(int line, String sql) {}

  private ScriptStatements() {}

  /**
   * Splits a script.
   *
   * @param script the script's text
   * @return its statements in order; empty for a script of comments only
   */
  static List<Piece> split(String script) {
    List<Piece> out = new ArrayList<>();
    int n = script.length();
    int start = -1;
    int i = 0;
    while (i < n) {
      char c = script.charAt(i);
      int end = i + 1;
      boolean code = true;
      if (c == '-' && i + 1 < n && script.charAt(i + 1) == '-') {
        int nl = script.indexOf('\n', i);
        end = nl < 0 ? n : nl;
        code = false;
      } else if (c == '/' && i + 1 < n && script.charAt(i + 1) == '*') {
        int close = script.indexOf("*/", i + 2);
        end = close < 0 ? n : close + 2;
        code = false;
      } else if (Character.isWhitespace(c)) {
        code = false;
      } else if (c == '\'' || c == '"') {
        int close = script.indexOf(c, i + 1);
        end = close < 0 ? n : close + 1;
      } else if (c == '$') {
        Matcher tag = DOLLAR_TAG.matcher(script).region(i, n);
        if (tag.lookingAt()) {
          int close = script.indexOf(tag.group(), tag.end());
          end = close < 0 ? n : close + tag.group().length();
        }
      } else if (c == ';') {
        if (start >= 0) {
          out.add(new Piece(lineOf(script, start), script.substring(start, i).strip()));
        }
        start = -1;
        i++;
        continue;
      }
      if (code && start < 0) {
        start = i;
      }
      i = end;
    }
    if (start >= 0) {
      out.add(new Piece(lineOf(script, start), script.substring(start).strip()));
    }
    return out;
  }

  /**
   * Fills in Flyway placeholders the way Flyway does before it runs a script: {@code ${key}} from
   * the given values, {@code ${flyway:defaultSchema}}, {@code ${flyway:table}} and {@code
   * ${flyway:filename}}; any other is left as written.
   *
   * @param sql the statement
   * @param values the placeholders, by key
   * @return the statement to run
   */
  static String fill(String sql, Map<String, String> values) {
    Matcher m = PLACEHOLDER.matcher(sql);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String value = values.get(m.group(1));
      m.appendReplacement(out, Matcher.quoteReplacement(value == null ? m.group() : value));
    }
    m.appendTail(out);
    return out.toString();
  }

  private static int lineOf(String script, int offset) {
    int line = 1;
    for (int i = 0; i < offset; i++) {
      if (script.charAt(i) == '\n') {
        line++;
      }
    }
    return line;
  }
}

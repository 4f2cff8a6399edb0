package dev.ledger.diff;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The statements of the head's new migrations (scripts the base does not hold under the same name
 * and text), each with the rules its {@code -- ledger:allow RULE[, RULE...]} comments silence.
 */
final class MigrationStatements {

  private static final Pattern ALLOW =
      Pattern.compile("--\\s*ledger:allow\\s+([a-z0-9-]+(?:\\s*,\\s*[a-z0-9-]+)*)");

  /**
   * One statement of a new migration.
   *
   * @param migration the script's file name
   * @param sql the statement's text with its comments, without the closing {@code ;}
   * @param allowed the rule ids its comments silence
   */
  record Statement(String migration, String sql, Set<String> allowed) {

    /** Whether the statement names a word (an identifier), case-insensitively. */
    boolean names(String word) {
      return Pattern.compile(
              "(?<![A-Za-z0-9_$])\"?" + Pattern.quote(word) + "\"?(?![A-Za-z0-9_$])",
              Pattern.CASE_INSENSITIVE)
          .matcher(sql)
          .find();
    }
  }

  private MigrationStatements() {}

  /**
   * The statements of the scripts in {@code head} that {@code base} does not hold with the same
   * name and text, in file name order.
   *
   * @param base the base set's directory
   * @param head the head set's directory
   * @return the statements, possibly empty
   */
  static List<Statement> added(Path base, Path head) {
    List<Statement> out = new ArrayList<>();
    try (Stream<Path> files = Files.walk(head)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".sql")).sorted().toList()) {
        Path old = base.resolve(head.relativize(f).toString());
        String text = Files.readString(f);
        if (Files.isRegularFile(old) && Files.readString(old).equals(text)) {
          continue;
        }
        for (String s : split(text)) {
          out.add(new Statement(f.getFileName().toString(), s, allowed(s)));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  private static Set<String> allowed(String statement) {
    Set<String> rules = new TreeSet<>();
    Matcher m = ALLOW.matcher(statement);
    while (m.find()) {
      for (String r : m.group(1).split(",")) {
        rules.add(r.strip().toLowerCase(Locale.ROOT));
      }
    }
    return Collections.unmodifiableSet(rules);
  }

  /**
   * Splits a script on the semicolons outside quotes, comments and dollar quotes. A comment after
   * the last statement's semicolon on its line belongs to that statement.
   */
  static List<String> split(String script) {
    List<String> out = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    int i = 0;
    int n = script.length();
    while (i < n) {
      char c = script.charAt(i);
      int end = i + 1;
      if (c == '-' && i + 1 < n && script.charAt(i + 1) == '-') {
        int nl = script.indexOf('\n', i);
        end = nl < 0 ? n : nl;
      } else if (c == '/' && i + 1 < n && script.charAt(i + 1) == '*') {
        int close = script.indexOf("*/", i + 2);
        end = close < 0 ? n : close + 2;
      } else if (c == '\'' || c == '"') {
        int close = script.indexOf(c, i + 1);
        end = close < 0 ? n : close + 1;
      } else if (c == '$') {
        Matcher tag = Pattern.compile("\\$[A-Za-z_]*\\$").matcher(script).region(i, n);
        if (tag.lookingAt()) {
          int close = script.indexOf(tag.group(), tag.end());
          end = close < 0 ? n : close + tag.group().length();
        }
      } else if (c == ';') {
        // the rest of the line, when it is only a comment, goes with this statement
        int nl = script.indexOf('\n', i);
        String rest = script.substring(i + 1, nl < 0 ? n : nl);
        if (rest.strip().startsWith("--")) {
          cur.append(rest);
          i = nl < 0 ? n : nl;
        } else {
          i = i + 1;
        }
        if (!cur.toString().strip().isEmpty()) {
          out.add(cur.toString().strip());
        }
        cur.setLength(0);
        continue;
      }
      cur.append(script, i, end);
      i = end;
    }
    if (!cur.toString().strip().isEmpty() && !onlyComments(cur.toString())) {
      out.add(cur.toString().strip());
    }
    return out;
  }

  private static boolean onlyComments(String text) {
    return text.lines().map(String::strip).allMatch(l -> l.isEmpty() || l.startsWith("--"));
  }
}

package dev.ledger.diff.review;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The locks a statement that cannot run inside a transaction block takes, by its kind, as
 * PostgreSQL's documentation gives them: not measured (its {@code pg_locks} cannot be read inside
 * its own transaction), so every lock is reported as documented. Relations are named as the
 * statement writes them (unquoted when simple); a {@code DROP INDEX CONCURRENTLY}'s table is the
 * one the caller resolves before it runs. Stateless; thread-safe.
 *
 * <table>
 *   <caption>documented locks</caption>
 *   <tr><th>statement</th><th>lock</th><th>on</th></tr>
 *   <tr><td>{@code CREATE [UNIQUE] INDEX CONCURRENTLY}</td><td>{@code ShareUpdateExclusiveLock}
 *       </td><td>the table</td></tr>
 *   <tr><td>{@code DROP INDEX CONCURRENTLY}</td><td>{@code ShareUpdateExclusiveLock}</td>
 *       <td>the index's table and the index</td></tr>
 *   <tr><td>{@code REINDEX ... CONCURRENTLY}</td><td>{@code ShareUpdateExclusiveLock}</td>
 *       <td>the table or index named</td></tr>
 *   <tr><td>{@code ALTER TABLE ... DETACH PARTITION ... CONCURRENTLY}</td><td>{@code
 *       ShareUpdateExclusiveLock}</td><td>the parent and the partition</td></tr>
 *   <tr><td>{@code VACUUM} (without {@code FULL})</td><td>{@code ShareUpdateExclusiveLock}</td>
 *       <td>each table named</td></tr>
 *   <tr><td>{@code VACUUM FULL}</td><td>{@code AccessExclusiveLock}</td><td>each table named</td>
 *       </tr>
 * </table>
 */
public final class DocumentedLocks {

  /** The mode of the {@code CONCURRENTLY} forms and of a plain {@code VACUUM}. */
  static final String SHARE_UPDATE_EXCLUSIVE = "ShareUpdateExclusiveLock";

  private static final String NAME =
      "((?:\"(?:[^\"]|\"\")+\"|[\\w$]+)(?:\\.(?:\"(?:[^\"]|\"\")+\"|[\\w$]+))?)";

  private static final Pattern CREATE_INDEX =
      Pattern.compile(
          "(?is)CREATE\\s+(?:UNIQUE\\s+)?INDEX\\s+CONCURRENTLY\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?"
              + "(?:"
              + NAME
              + "\\s+)?ON\\s+(?:ONLY\\s+)?"
              + NAME
              + ".*");

  private static final Pattern DROP_INDEX =
      Pattern.compile("(?is)DROP\\s+INDEX\\s+CONCURRENTLY\\s+(?:IF\\s+EXISTS\\s+)?" + NAME + ".*");

  private static final Pattern REINDEX =
      Pattern.compile(
          "(?is)REINDEX\\s+(?:\\([^)]*\\)\\s*)?(?:INDEX|TABLE)\\s+CONCURRENTLY\\s+" + NAME + ".*");

  private static final Pattern DETACH =
      Pattern.compile(
          "(?is)ALTER\\s+TABLE\\s+(?:IF\\s+EXISTS\\s+)?(?:ONLY\\s+)?"
              + NAME
              + "\\s+DETACH\\s+PARTITION\\s+"
              + NAME
              + "\\s+CONCURRENTLY\\s*");

  private static final Pattern VACUUM =
      Pattern.compile(
          "(?is)VACUUM\\b\\s*(\\([^)]*\\))?\\s*((?:FULL|FREEZE|VERBOSE|ANALYZE)\\s+)*(.*)");

  private DocumentedLocks() {}

  /**
   * The documented locks of a statement that ran outside a transaction block.
   *
   * @param sql the statement, placeholders filled in, without its {@code ;}
   * @param indexTable for {@code DROP INDEX CONCURRENTLY}, the dropped index's table as resolved
   *     before the statement ran; null when unknown or for other statements
   * @return the locks, ordered by relation as the statement names them; empty for a kind the table
   *     does not list
   */
  public static List<ReviewedStatement.Lock> of(String sql, String indexTable) {
    String s = sql.strip();
    List<ReviewedStatement.Lock> locks = new ArrayList<>();
    Matcher m;
    if ((m = CREATE_INDEX.matcher(s)).matches()) {
      locks.add(lock(m.group(2), SHARE_UPDATE_EXCLUSIVE));
    } else if ((m = DROP_INDEX.matcher(s)).matches()) {
      if (indexTable != null) {
        locks.add(lock(indexTable, SHARE_UPDATE_EXCLUSIVE));
      }
      locks.add(lock(m.group(1), SHARE_UPDATE_EXCLUSIVE));
    } else if ((m = REINDEX.matcher(s)).matches()) {
      locks.add(lock(m.group(1), SHARE_UPDATE_EXCLUSIVE));
    } else if ((m = DETACH.matcher(s)).matches()) {
      locks.add(lock(m.group(1), SHARE_UPDATE_EXCLUSIVE));
      locks.add(lock(m.group(2), SHARE_UPDATE_EXCLUSIVE));
    } else if ((m = VACUUM.matcher(s)).matches()) {
      String options = (m.group(1) == null ? "" : m.group(1)) + " " + s.substring(0, m.start(3));
      boolean full = options.toUpperCase(Locale.ROOT).matches("(?s).*\\bFULL\\b.*");
      String mode = full ? "AccessExclusiveLock" : SHARE_UPDATE_EXCLUSIVE;
      for (String table : m.group(3).split(",")) {
        String name = table.strip().replaceAll("\\s*\\(.*", "");
        if (!name.isEmpty()) {
          locks.add(lock(name, mode));
        }
      }
    }
    locks.sort(java.util.Comparator.comparing(ReviewedStatement.Lock::relation));
    return locks;
  }

  /** The name of the {@code DROP INDEX CONCURRENTLY}'s index, or null for another statement. */
  static String droppedIndex(String sql) {
    Matcher m = DROP_INDEX.matcher(sql.strip());
    return m.matches() ? m.group(1) : null;
  }

  private static ReviewedStatement.Lock lock(String relation, String mode) {
    return new ReviewedStatement.Lock(unquote(relation), mode);
  }

  /** {@code "orders"} reads {@code orders}; a name that needs its quotes keeps them. */
  private static String unquote(String name) {
    StringBuilder out = new StringBuilder();
    for (String part : name.split("\\.(?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)")) {
      if (out.length() > 0) {
        out.append('.');
      }
      if (part.startsWith("\"") && part.endsWith("\"")) {
        String inner = part.substring(1, part.length() - 1);
        out.append(inner.matches("[a-z_][a-z0-9_$]*") ? inner : part);
      } else {
        out.append(part.toLowerCase(Locale.ROOT));
      }
    }
    return out.toString();
  }
}

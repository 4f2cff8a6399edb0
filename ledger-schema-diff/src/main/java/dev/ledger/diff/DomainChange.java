package dev.ledger.diff;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A domain changed in place with {@code ALTER DOMAIN} instead of dropped and made again (which
 * fails while a column uses it). A domain's item carries its parts as labels: its SQL name first,
 * then {@code type:BASE_TYPE}, {@code default:EXPR} (when it has one), {@code not null} (when it
 * is), and one {@code check:NAME:DEFINITION} per check constraint ({@code pg_get_constraintdef},
 * ending in {@code NOT VALID} for one not yet validated).
 *
 * @param statements the {@code ALTER DOMAIN} statements, in order
 * @param validates whether a statement checks the values already stored ({@code SET NOT NULL},
 *     {@code VALIDATE CONSTRAINT}): it fails on a value that breaks the new rule
 */
record DomainChange(List<String> statements, boolean validates) {

  private static final String TYPE = "type:";
  private static final String DEFAULT = "default:";
  private static final String NOT_NULL = "not null";
  private static final String CHECK = "check:";

  /**
   * The labels of a domain.
   *
   * @param sqlName its SQL name
   * @param baseType its base type, e.g. {@code integer}
   * @param defaultExpr its default, or null
   * @param notNull whether it is {@code NOT NULL}
   * @param checks each check: its quoted name, then its definition
   * @return the labels
   */
  static List<String> labels(
      String sqlName,
      String baseType,
      String defaultExpr,
      boolean notNull,
      Map<String, String> checks) {
    List<String> labels = new ArrayList<>();
    labels.add(sqlName);
    labels.add(TYPE + baseType);
    if (defaultExpr != null) {
      labels.add(DEFAULT + defaultExpr);
    }
    if (notNull) {
      labels.add(NOT_NULL);
    }
    checks.forEach((name, def) -> labels.add(CHECK + name + ":" + def));
    return List.copyOf(labels);
  }

  /**
   * The in-place change from one domain to another.
   *
   * @param before the base's labels
   * @param after the head's labels
   * @return the change, or null when the base type differs (the domain is made again)
   */
  static DomainChange between(List<String> before, List<String> after) {
    if (before.isEmpty()
        || after.isEmpty()
        || !Objects.equals(part(before, TYPE), part(after, TYPE))) {
      return null;
    }
    String alter = "ALTER DOMAIN " + after.get(0);
    List<String> sql = new ArrayList<>();
    boolean validates = false;
    Map<String, String> oldChecks = checks(before);
    Map<String, String> newChecks = checks(after);
    oldChecks.forEach(
        (name, def) -> {
          if (!def.equals(newChecks.get(name))) {
            sql.add(alter + " DROP CONSTRAINT " + name + ";");
          }
        });
    String oldDefault = part(before, DEFAULT);
    String newDefault = part(after, DEFAULT);
    if (!Objects.equals(oldDefault, newDefault)) {
      sql.add(alter + (newDefault == null ? " DROP DEFAULT;" : " SET DEFAULT " + newDefault + ";"));
    }
    boolean wasNotNull = before.subList(1, before.size()).contains(NOT_NULL);
    boolean isNotNull = after.subList(1, after.size()).contains(NOT_NULL);
    if (wasNotNull && !isNotNull) {
      sql.add(alter + " DROP NOT NULL;");
    } else if (!wasNotNull && isNotNull) {
      sql.add(alter + " SET NOT NULL;");
      validates = true;
    }
    for (Map.Entry<String, String> e : newChecks.entrySet()) {
      String name = e.getKey();
      String def = e.getValue();
      if (def.equals(oldChecks.get(name))) {
        continue;
      }
      boolean notValid = def.endsWith(" NOT VALID");
      String check = notValid ? def : def + " NOT VALID";
      // added NOT VALID (catalog only), then validated: the values are checked without holding
      // the columns' tables locked against writes for the whole scan
      sql.add(alter + " ADD CONSTRAINT " + name + " " + check + ";");
      if (!notValid) {
        sql.add(alter + " VALIDATE CONSTRAINT " + name + ";");
        validates = true;
      }
    }
    return new DomainChange(List.copyOf(sql), validates);
  }

  private static String part(List<String> labels, String prefix) {
    for (String l : labels.subList(1, labels.size())) {
      if (l.startsWith(prefix)) {
        return l.substring(prefix.length());
      }
    }
    return null;
  }

  private static Map<String, String> checks(List<String> labels) {
    Map<String, String> checks = new LinkedHashMap<>();
    for (String l : labels.subList(1, labels.size())) {
      if (l.startsWith(CHECK)) {
        String rest = l.substring(CHECK.length());
        int colon = separator(rest);
        checks.put(rest.substring(0, colon), rest.substring(colon + 1));
      }
    }
    return checks;
  }

  /** The colon after the (possibly quoted) constraint name. */
  private static int separator(String rest) {
    if (rest.startsWith("\"")) {
      int i = 1;
      while (i < rest.length()) {
        if (rest.charAt(i) == '"') {
          if (i + 1 < rest.length() && rest.charAt(i + 1) == '"') {
            i += 2;
            continue;
          }
          return i + 1;
        }
        i++;
      }
    }
    return rest.indexOf(':');
  }
}

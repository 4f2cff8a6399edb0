package dev.ledger.diff;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A table's storage ({@code UNLOGGED}, storage parameters such as {@code fillfactor}) as the labels
 * of a {@link Change.Kind#TABLE_STORAGE} item: the table's SQL name first, then {@link #UNLOGGED}
 * when the table is unlogged, then each parameter as PostgreSQL stores it ({@code name=value}),
 * sorted. Writes the statements from one storage to another and classes them.
 */
final class TableStorage {

  /** The label of an unlogged table. */
  static final String UNLOGGED = "UNLOGGED";

  private TableStorage() {}

  /**
   * The labels of a table's storage.
   *
   * @param tableSql the table's SQL name
   * @param unlogged whether it is unlogged
   * @param options its {@code reloptions}, sorted; may be empty
   * @return the labels, the SQL name first
   */
  static List<String> labels(String tableSql, boolean unlogged, List<String> options) {
    List<String> labels = new ArrayList<>();
    labels.add(tableSql);
    if (unlogged) {
      labels.add(UNLOGGED);
    }
    labels.addAll(options);
    return List.copyOf(labels);
  }

  /**
   * The statements that take a table from one storage to another.
   *
   * @param from the labels before, or empty for the default storage
   * @param to the labels after, or empty for the default storage
   * @return {@code SET LOGGED}/{@code SET UNLOGGED}, {@code RESET (...)}, {@code SET (...)}, each
   *     when needed; empty when they are the same
   */
  static List<String> between(List<String> from, List<String> to) {
    String tableSql = (to.isEmpty() ? from : to).get(0);
    List<String> sql = new ArrayList<>();
    if (unlogged(from) != unlogged(to)) {
      sql.add("ALTER TABLE " + tableSql + (unlogged(to) ? " SET UNLOGGED;" : " SET LOGGED;"));
    }
    Map<String, String> before = options(from);
    Map<String, String> after = options(to);
    List<String> reset = new ArrayList<>();
    for (String name : before.keySet()) {
      if (!after.containsKey(name)) {
        reset.add(name);
      }
    }
    if (!reset.isEmpty()) {
      sql.add("ALTER TABLE " + tableSql + " RESET (" + String.join(", ", reset) + ");");
    }
    List<String> set = new ArrayList<>();
    after.forEach(
        (name, value) -> {
          if (!value.equals(before.get(name))) {
            set.add(name + " = " + Sql.literal(value));
          }
        });
    if (!set.isEmpty()) {
      sql.add("ALTER TABLE " + tableSql + " SET (" + String.join(", ", set) + ");");
    }
    return sql;
  }

  /**
   * Whether going from one storage to the other rewrites the table: {@code SET LOGGED} and {@code
   * SET UNLOGGED} copy every row into a new file under an {@code ACCESS EXCLUSIVE} lock; storage
   * parameters change only the catalog and apply to rows written later.
   *
   * @param from the labels before, or empty
   * @param to the labels after, or empty
   * @return true when the persistence changes
   */
  static boolean rewrites(List<String> from, List<String> to) {
    return unlogged(from) != unlogged(to);
  }

  private static boolean unlogged(List<String> labels) {
    return labels.contains(UNLOGGED);
  }

  private static Map<String, String> options(List<String> labels) {
    Map<String, String> options = new LinkedHashMap<>();
    for (int i = 1; i < labels.size(); i++) {
      String label = labels.get(i);
      int eq = label.indexOf('=');
      if (eq > 0) {
        options.put(label.substring(0, eq), label.substring(eq + 1));
      }
    }
    return options;
  }
}

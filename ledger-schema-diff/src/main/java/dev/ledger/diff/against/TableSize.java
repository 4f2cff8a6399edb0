package dev.ledger.diff.against;

import java.util.Locale;

/**
 * The size of a table a change locks, read from the database the diff is checked against: what a
 * reviewer needs to judge a lock, e.g. {@code rewrites `orders` (48 GB, ~120M rows) under ACCESS
 * EXCLUSIVE}.
 *
 * @param table the table's normalised name
 * @param verb {@code rewrites} when the change rewrites the table, else {@code locks}
 * @param lock the lock the change takes, as the report names it, e.g. {@code ACCESS EXCLUSIVE}
 * @param change the change, e.g. {@code column `total` changed}
 * @param size the table's size with its indexes, TOAST and partitions, as {@code pg_size_pretty}
 *     prints it (e.g. {@code 48 GB}), or null when not read
 * @param rows the planner's row estimate ({@code pg_class.reltuples}, summed over partitions), or
 *     null when the table was never analyzed or the size was not read
 * @param note why the size was not read (unreachable, a timeout, a table the database lacks), or
 *     null
 */
public record TableSize(
    String table, String verb, String lock, String change, String size, Long rows, String note) {

  /**
   * The sentence for the report, e.g. {@code rewrites `orders` (48 GB, ~120M rows) under ACCESS
   * EXCLUSIVE}.
   *
   * @return the sentence, without the change and without a trailing period
   */
  public String sentence() {
    String what =
        size == null
            ? "size not read: " + note
            : size + ", " + (rows == null ? "rows not estimated (never analyzed)" : estimate(rows));
    return verb + " `" + table + "` (" + what + ") under " + lock;
  }

  /**
   * A row estimate rounded for reading, e.g. {@code ~950 rows}, {@code ~1.2k rows}, {@code ~120M
   * rows}.
   *
   * @param rows the estimate, 0 or more
   * @return the estimate with a {@code ~} and a unit
   */
  static String estimate(long rows) {
    String[] units = {"", "k", "M", "B", "T"};
    double value = rows;
    int unit = 0;
    while (value >= 999.5 && unit < units.length - 1) {
      value /= 1000;
      unit++;
    }
    String number =
        unit == 0 || value >= 9.95
            ? String.format(Locale.ROOT, "%d", Math.round(value))
            : String.format(Locale.ROOT, "%.1f", value);
    return "~" + number + units[unit] + (rows == 1 ? " row" : " rows");
  }
}

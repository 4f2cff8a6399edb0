package dev.ledger.diff;

import java.util.Locale;

/**
 * How a schema change affects a database that already holds data, from least to most severe.
 *
 * <ul>
 *   <li>{@link #SAFE}: changes only the catalog, or an object nobody uses yet (a new table);
 *   <li>{@link #LOCKING}: holds a lock that blocks reads or writes while it scans or rewrites a
 *       table (an index built without {@code CONCURRENTLY}, a type widened with a rewrite);
 *   <li>{@link #DESTRUCTIVE}: loses data (a dropped table or column, a narrowed type) or fails on
 *       data that may be there (a {@code NOT NULL} column without a default, a unique key added to
 *       rows that may hold duplicates).
 * </ul>
 */
public enum Risk {
  /** Catalog-only, or on an object nobody uses yet. */
  SAFE,
  /** Blocks reads or writes while it runs. */
  LOCKING,
  /** Loses data or fails on existing data. */
  DESTRUCTIVE;

  /**
   * The name used in reports.
   *
   * @return {@code safe}, {@code locking} or {@code destructive}
   */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The more severe of two risks.
   *
   * @param other the other risk, not null
   * @return this or {@code other}, whichever is more severe
   */
  public Risk max(Risk other) {
    return compareTo(other) >= 0 ? this : other;
  }
}

package dev.ledger.diff;

import java.util.Locale;

/**
 * Which changes fail a diff ({@link DiffReport#failed()}; {@code ledger-app schema-diff} then exits
 * with 1), for CI to fail a pull request on. Every rule but {@link #NEVER} also fails on an {@code
 * error} finding of the statement review (an applied migration edited or removed, a version below
 * the base's latest).
 */
public enum FailOn {
  /** Any destructive change. */
  DESTRUCTIVE,
  /** Any change at all. */
  ANY,
  /** Never: the diff is only reported. */
  NEVER;

  /**
   * Whether a diff trips this rule.
   *
   * @param diff the diff, not null
   * @return true when the diff holds a change this rule fails on
   */
  public boolean trippedBy(CatalogDiff diff) {
    return switch (this) {
      case DESTRUCTIVE -> diff.count(Risk.DESTRUCTIVE) > 0;
      case ANY -> !diff.isEmpty();
      case NEVER -> false;
    };
  }

  /**
   * The option value that selects this rule.
   *
   * @return {@code destructive}, {@code any} or {@code never}
   */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }
}

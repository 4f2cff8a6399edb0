package dev.ledger.console;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/** How the pages show times and durations. Stateless. */
final class Format {

  private Format() {}

  /** {@code 2026-12-04T17:12:03Z}, to the second, UTC; empty for null. */
  static String time(Instant t) {
    return t == null ? "" : t.truncatedTo(ChronoUnit.SECONDS).toString();
  }

  /**
   * {@code 3d 4h}, {@code 2h 5m}, {@code 4m 12s}, {@code 9s}; negative durations as {@code -4m}.
   */
  static String age(Duration d) {
    if (d == null) {
      return "";
    }
    String sign = d.isNegative() ? "-" : "";
    long s = Math.abs(d.getSeconds());
    if (s >= 86_400) {
      return sign + (s / 86_400) + "d " + (s % 86_400) / 3600 + "h";
    }
    if (s >= 3600) {
      return sign + (s / 3600) + "h " + (s % 3600) / 60 + "m";
    }
    if (s >= 60) {
      return sign + (s / 60) + "m " + (s % 60) + "s";
    }
    return sign + s + "s";
  }
}

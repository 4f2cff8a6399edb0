package dev.ledger.control;

import dev.ledger.codegen.db.ledger_template.tables.records.QueueControlsRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;

/**
 * A rate limit's recent claims, counted in buckets of 1/{@value QueueControls#BUCKETS} of its
 * period: {@code counts}' last element is bucket {@code slot} (epoch milliseconds divided by the
 * bucket's length), the ones before it the buckets before. A claim at time t counts every bucket
 * from {@code slot(t) - BUCKETS} on: a little more than the period, so any window of the period
 * that ends with a claim holds no more claims than the gate counted for it. The price: a limit of N
 * per period lets through between N per period and N per 21/20 of it. Immutable.
 *
 * @param bucketMs the bucket's length in milliseconds (the period divided by {@link
 *     QueueControls#BUCKETS}, rounded up)
 * @param slot the bucket of the last element
 * @param counts the claims per bucket, oldest first, {@code BUCKETS + 1} of them (stored as text)
 */
record RateWindow(long bucketMs, long slot, Integer[] counts) {

  /** The window as stored, moved to the bucket of {@code now} (or kept, if the clock went back). */
  static RateWindow of(QueueControlsRecord row, Instant now) {
    return of(row.getRatePeriodMs(), row.getRateSlot(), row.getRateCounts(), now);
  }

  /**
   * A window as stored in a row (the controls row or a slot row, domain V14), moved to the bucket
   * of {@code now}.
   *
   * @param periodMs the rate limit's period in milliseconds, positive
   * @param rateSlot the row's {@code rate_slot}, or null (0)
   * @param rateCounts the row's {@code rate_counts}, or null (none)
   */
  static RateWindow of(long periodMs, Long rateSlot, String rateCounts, Instant now) {
    long bucketMs = Math.max(1, ceilDiv(periodMs, QueueControls.BUCKETS));
    long nowSlot = Math.floorDiv(now.toEpochMilli(), bucketMs);
    long[] stored = parse(rateCounts);
    long storedSlot = rateSlot == null ? 0 : rateSlot;
    long slot = Math.max(nowSlot, storedSlot);
    Integer[] counts = new Integer[QueueControls.BUCKETS + 1];
    Arrays.fill(counts, 0);
    for (int i = 0; i < stored.length; i++) {
      long bucket = storedSlot - (stored.length - 1 - i);
      long at = bucket - (slot - QueueControls.BUCKETS); // index in the new array
      if (at >= 0 && at < counts.length) {
        counts[(int) at] = (int) stored[i];
      }
    }
    return new RateWindow(bucketMs, slot, counts);
  }

  /** The claims counted against a claim now. */
  int used() {
    int sum = 0;
    for (Integer c : counts) {
      sum += c;
    }
    return sum;
  }

  /** The window with {@code n} more claims in its last bucket. */
  RateWindow plus(int n) {
    Integer[] next = counts.clone();
    next[next.length - 1] = next[next.length - 1] + n;
    return new RateWindow(bucketMs, slot, next);
  }

  /**
   * How long until the oldest counted claim leaves the window (then a claim finds room), at least
   * 10 ms and at most {@link QueueControls#PAUSED_RECHECK}.
   */
  Duration untilRoom(Instant now) {
    long ms = QueueControls.PAUSED_RECHECK.toMillis();
    for (int i = 0; i < counts.length; i++) {
      if (counts[i] > 0) {
        long bucket = slot - QueueControls.BUCKETS + i;
        long leaves = (bucket + QueueControls.BUCKETS + 1) * bucketMs;
        ms = Math.min(ms, leaves - now.toEpochMilli());
        break;
      }
    }
    return Duration.ofMillis(Math.max(10, ms));
  }

  /** The counts as stored: comma-separated, oldest first. */
  String countsText() {
    StringBuilder b = new StringBuilder();
    for (Integer c : counts) {
      if (b.length() > 0) {
        b.append(',');
      }
      b.append(c);
    }
    return b.toString();
  }

  private static long[] parse(String text) {
    if (text == null || text.isBlank()) {
      return new long[0];
    }
    String[] parts = text.split(",");
    long[] out = new long[parts.length];
    for (int i = 0; i < parts.length; i++) {
      out[i] = Long.parseLong(parts[i].trim());
    }
    return out;
  }

  private static long ceilDiv(long a, long b) {
    return -Math.floorDiv(-a, b);
  }
}

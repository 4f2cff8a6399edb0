package dev.ledger.worker;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How a {@link WorkerPool} retries failed tasks: up to {@code maxAttempts} runs per retry chain
 * (unless a task's spec sets its own {@code max_attempts}), the retry after attempt {@code n}
 * waiting {@code min(max, initial * multiplier^(n-1))}, less a random part of up to {@code jitter}
 * of it ("equal jitter", so gaps still grow). Immutable.
 *
 * @param maxAttempts runs per chain by default, 1 to 1000
 * @param initial the wait after the first failure, more than zero
 * @param max the longest wait, at least {@code initial}
 * @param multiplier how much each wait grows, at least 1
 * @param jitter the random share taken off each wait, 0 to 0.5
 */
public record RetryPolicy(
    int maxAttempts, Duration initial, Duration max, double multiplier, double jitter) {

  /** 5 attempts; 1 s, 2 s, 4 s, 8 s, at most 5 minutes; 20 % jitter. */
  public static final RetryPolicy DEFAULT =
      new RetryPolicy(5, Duration.ofSeconds(1), Duration.ofMinutes(5), 2.0, 0.2);

  /**
   * Checks the values.
   *
   * @throws IllegalArgumentException naming the first value out of range
   */
  public RetryPolicy {
    if (maxAttempts < 1 || maxAttempts > 1000) {
      throw new IllegalArgumentException("maxAttempts: must be 1 to 1000, was " + maxAttempts);
    }
    if (initial == null || initial.isNegative() || initial.isZero()) {
      throw new IllegalArgumentException("initial: must be more than zero");
    }
    if (max == null || max.compareTo(initial) < 0) {
      throw new IllegalArgumentException("max: must be at least initial (" + initial + ")");
    }
    if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
      throw new IllegalArgumentException("multiplier: must be at least 1, was " + multiplier);
    }
    if (!(jitter >= 0.0 && jitter <= 0.5)) {
      throw new IllegalArgumentException("jitter: must be 0 to 0.5, was " + jitter);
    }
  }

  /**
   * The wait before the retry that follows failed attempt {@code attempt}.
   *
   * @param attempt the failed attempt, from 1
   * @return the wait, at most {@link #max()}
   */
  public Duration delayAfter(int attempt) {
    double base = initial.toNanos() * Math.pow(multiplier, Math.max(0, attempt - 1));
    double capped = Math.min(base, (double) max.toNanos());
    double off = jitter == 0 ? 0 : ThreadLocalRandom.current().nextDouble() * jitter * capped;
    return Duration.ofNanos((long) (capped - off));
  }
}

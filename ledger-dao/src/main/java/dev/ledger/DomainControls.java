package dev.ledger;

import java.time.Duration;

/**
 * A domain's queue controls, as {@link Ledger#controls(String)} reads them: whether its claims are
 * paused, its concurrency limit, its rate limit, and how many of its tasks are claimed now.
 * Immutable.
 *
 * @param domain the domain
 * @param paused whether claims of the domain return nothing ({@link Ledger#pause(String)})
 * @param maxClaimed the most tasks claimed at once (lease not expired) across every claimer, or
 *     null for no concurrency limit
 * @param rateClaims the most claims in any window of {@code ratePeriod}, or null for no rate limit
 * @param ratePeriod the rate limit's period, or null when {@code rateClaims} is
 * @param claimedNow how many tasks of the domain are claimed with a lease that has not expired,
 *     when read
 */
public record DomainControls(
    String domain,
    boolean paused,
    Integer maxClaimed,
    Integer rateClaims,
    Duration ratePeriod,
    long claimedNow) {

  /**
   * Whether any control is set.
   *
   * @return true when paused or limited
   */
  public boolean any() {
    return paused || maxClaimed != null || rateClaims != null;
  }

  /**
   * The rate limit as the CLI writes it, e.g. {@code 10/1s}, or null without one.
   *
   * @return the text, or null
   */
  public String rateText() {
    return rateClaims == null ? null : rateClaims + "/" + periodText(ratePeriod);
  }

  /**
   * A period as the CLI writes it: whole hours, minutes or seconds, else milliseconds.
   *
   * @param period a positive period
   * @return e.g. {@code 1s}, {@code 5m}, {@code 250ms}
   */
  static String periodText(Duration period) {
    long ms = period.toMillis();
    if (ms % 3_600_000 == 0) {
      return ms / 3_600_000 + "h";
    }
    if (ms % 60_000 == 0) {
      return ms / 60_000 + "m";
    }
    if (ms % 1000 == 0) {
      return ms / 1000 + "s";
    }
    return ms + "ms";
  }
}

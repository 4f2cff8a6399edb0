package dev.ledger;

import java.time.Duration;

/**
 * Why a claim of a domain came back short although its tasks may be claimable: the domain's queue
 * controls held it back ({@link Ledger#claimHold(String)}). A claim that finds nothing claimable in
 * a domain whose controls let it through has no hold. Immutable.
 *
 * @param reason the control that held the claim back, not null
 * @param retryAfter how soon a claim may find room when nothing else changes (a resume or a raised
 *     limit wakes pools sooner): a pause 1 s, a reached concurrency limit 200 ms, a full rate
 *     window the time until its oldest counted claim leaves it (10 ms to 1 s); not null
 */
public record ClaimHold(Reason reason, Duration retryAfter) {

  /** The control that held a claim back. */
  public enum Reason {
    /** The domain is paused ({@link Ledger#pause(String)}). */
    PAUSED,
    /** As many of the domain's tasks as its concurrency limit allows are claimed. */
    CONCURRENCY_LIMIT,
    /** The domain's rate limit window is full. */
    RATE_LIMIT
  }

  /**
   * The hold in a few words, for a message: {@code the domain is paused}, {@code the domain is at
   * its concurrency limit}, {@code the domain is rate limited}.
   *
   * @return the words, without a trailing full stop
   */
  public String describe() {
    return switch (reason) {
      case PAUSED -> "the domain is paused";
      case CONCURRENCY_LIMIT -> "the domain is at its concurrency limit";
      case RATE_LIMIT -> "the domain is rate limited";
    };
  }
}

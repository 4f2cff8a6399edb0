package dev.ledger.claim;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many rows beyond {@code max} one domain's claims read into their window, learnt from those
 * claims. A claim reads and checks every row of its window, so the slack is a claim's fixed cost
 * (bench B3: a claim of one with a window of 17 ran at 0.77–0.85x the naive claim at 100,000
 * tasks); it only pays off when concurrent claimers lock rows of the same window at once. So the
 * slack starts at {@link #MIN}, doubles (up to {@link #MAX}) after every claim that came up short
 * on a full window, which only concurrent claimers (or rows changed under the claim) cause, and
 * steps back down by one after every claim that did not. A claim that comes up short is never
 * wrong: {@link Claims} looks again behind the window in the same transaction.
 *
 * <p>Thread-safe: one per domain, shared by every claim of it through one {@code Ledger}.
 */
public final class ClaimSlack {

  /** The slack of a domain whose claims meet no one: enough for a few rows changed meanwhile. */
  public static final int MIN = 4;

  /** The largest slack: twice what a fixed slack of 16 plus {@code max} gave a claim of 16. */
  public static final int MAX = 64;

  private final AtomicInteger slack = new AtomicInteger(MIN);

  /**
   * The slack the next claim reads.
   *
   * @return {@link #MIN} to {@link #MAX}
   */
  public int current() {
    return slack.get();
  }

  /**
   * Learns from one claim.
   *
   * @param contended whether the claim came up short of {@code max} on a full window
   */
  public void record(boolean contended) {
    slack.updateAndGet(s -> contended ? Math.min(MAX, s * 2) : Math.max(MIN, s - 1));
  }

  /**
   * The window of a claim of {@code max} with a slack.
   *
   * @param max the most tasks claimed, at least 1
   * @param slack {@link #current()}
   * @return {@code max + slack} rows
   */
  public static int window(int max, int slack) {
    return max + slack;
  }
}

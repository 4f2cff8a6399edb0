package dev.ledger.feed;

import dev.ledger.LedgerException;

/**
 * A consumer is behind its domain's retention horizon: a retention purge removed events of the
 * domain that the consumer had not received (by its committed checkpoint), so the feed cannot
 * deliver them and refuses to go on as if nothing were missing. Events removed after the consumer
 * received them never cause this. The consumer's checkpoint and lease stay as they were; every poll
 * is refused until the consumer rebuilds what it keeps from another source (for example the
 * domain's current tasks) and calls {@link Feed#acceptLoss(String)}, after which it goes on with
 * the events that remain.
 */
public final class FeedBehindRetentionException extends LedgerException {

  private static final long serialVersionUID = 1L;

  private final String consumer;
  private final String domain;
  private final long missedSeq;
  private final long missedLater;

  /**
   * Creates the error.
   *
   * @param consumer the consumer
   * @param domain the domain
   * @param missedSeq the largest seq of a removed event in the checkpoint's current window that the
   *     consumer had not received (0: none)
   * @param missedLater how many removed events lay in later windows (0: none)
   */
  public FeedBehindRetentionException(
      String consumer, String domain, long missedSeq, long missedLater) {
    super(
        "feed consumer '"
            + consumer
            + "' on domain '"
            + domain
            + "' is behind the retention horizon: a retention purge removed events it had not"
            + " received ("
            + (missedSeq > 0 ? "up to seq " + missedSeq + " in its current window" : "")
            + (missedSeq > 0 && missedLater > 0 ? ", " : "")
            + (missedLater > 0 ? missedLater + " after it" : "")
            + "); rebuild the consumer's copy, then accept the loss (Feed.acceptLoss) to go on");
    this.consumer = consumer;
    this.domain = domain;
    this.missedSeq = missedSeq;
    this.missedLater = missedLater;
  }

  /**
   * The consumer.
   *
   * @return its name
   */
  public String consumer() {
    return consumer;
  }

  /**
   * The domain.
   *
   * @return the domain
   */
  public String domain() {
    return domain;
  }

  /**
   * The largest seq of a removed, undelivered event in the checkpoint's window.
   *
   * @return the seq, 0 when none
   */
  public long missedSeq() {
    return missedSeq;
  }

  /**
   * How many removed events were beyond the checkpoint's window (none of them read yet).
   *
   * @return the count, 0 when none
   */
  public long missedLater() {
    return missedLater;
  }
}

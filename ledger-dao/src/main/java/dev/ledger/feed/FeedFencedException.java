package dev.ledger.feed;

import dev.ledger.LedgerException;

/**
 * A feed reader's lease of a consumer's domain is no longer its own: another reader of the same
 * consumer took it (after this one's lease expired), so this reader's renewal or checkpoint is
 * refused and nothing of it is written. Stop delivering; {@link Feed#acquire()} again to continue
 * (the events after the last committed checkpoint are delivered again, to whoever holds the lease).
 */
public final class FeedFencedException extends LedgerException {

  private static final long serialVersionUID = 1L;

  private final String consumer;
  private final String domain;
  private final long epoch;

  /**
   * Creates the error.
   *
   * @param consumer the consumer
   * @param domain the domain
   * @param epoch the lease epoch this reader took, which is no longer current
   * @param operation what was refused, e.g. {@code commit}
   */
  public FeedFencedException(String consumer, String domain, long epoch, String operation) {
    super(
        "feed consumer '"
            + consumer
            + "' on domain '"
            + domain
            + "': "
            + operation
            + " refused, the lease of epoch "
            + epoch
            + " is no longer this reader's (another reader took it); stop delivering and"
            + " acquire again");
    this.consumer = consumer;
    this.domain = domain;
    this.epoch = epoch;
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
   * The stale epoch.
   *
   * @return the epoch this reader held
   */
  public long epoch() {
    return epoch;
  }
}

package dev.ledger.feed;

import java.util.List;

/**
 * What one {@link Feed#poll()} read: the events after the consumer's checkpoint in each domain it
 * holds, and where each domain's checkpoint goes when the batch is committed ({@link
 * Feed#commit(FeedBatch)}). Immutable.
 */
public final class FeedBatch {

  /** Where a domain's checkpoint goes: the window of transaction ids and the position in it. */
  record Position(String domain, long epoch, long xidFrom, long xidTo, long seqDone, int count) {}

  private final List<FeedEvent> events;
  private final List<Position> positions;

  FeedBatch(List<FeedEvent> events, List<Position> positions) {
    this.events = List.copyOf(events);
    this.positions = List.copyOf(positions);
  }

  /**
   * The events: each domain's in delivery order, the domains one after another in the spec's order.
   *
   * @return the events, unmodifiable, possibly empty
   */
  public List<FeedEvent> events() {
    return events;
  }

  /**
   * Whether the batch holds no event.
   *
   * @return true when empty
   */
  public boolean isEmpty() {
    return events.isEmpty();
  }

  /**
   * How many events it holds.
   *
   * @return the count
   */
  public int size() {
    return events.size();
  }

  List<Position> positions() {
    return positions;
  }
}

package dev.ledger.feed;

import java.util.List;

/**
 * What one {@link Feed#poll()} read: the events after the consumer's checkpoint in each domain it
 * holds, the {@code erased} items recorded for the consumer by scrubs ({@link #erasures()}), and
 * where each domain's checkpoint goes when the batch is committed ({@link Feed#commit(FeedBatch)}:
 * the erasures it delivered are then removed). Immutable.
 */
public final class FeedBatch {

  /**
   * Where a domain's checkpoint goes: the window of transaction ids and the position in it, and the
   * ids of the erasure rows delivered.
   */
  record Position(
      String domain,
      long epoch,
      long xidFrom,
      long xidTo,
      long seqDone,
      int count,
      List<Long> erasures) {}

  private final List<FeedEvent> events;
  private final List<FeedErasure> erasures;
  private final List<Position> positions;

  FeedBatch(List<FeedEvent> events, List<FeedErasure> erasures, List<Position> positions) {
    this.events = List.copyOf(events);
    this.erasures = List.copyOf(erasures);
    this.positions = List.copyOf(positions);
  }

  /**
   * The {@code erased} items: tasks scrubbed after this consumer may have received some of their
   * events (docs/feed.md, "Erasure"), each domain's in the order the scrubs ran. Handle them after
   * {@link #events()}: erase the copies of the events they name.
   *
   * @return the items, unmodifiable, possibly empty
   */
  public List<FeedErasure> erasures() {
    return erasures;
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
   * Whether the batch holds no event and no erasure.
   *
   * @return true when empty
   */
  public boolean isEmpty() {
    return events.isEmpty() && erasures.isEmpty();
  }

  /**
   * How many events it holds (erasures not counted).
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

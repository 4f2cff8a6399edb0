package dev.ledger.spring;

import dev.ledger.feed.FeedHandler;
import java.util.List;

/**
 * A {@link FeedHandler} bean: a named consumer of one or several domains' events (docs/feed.md).
 * The starter runs one {@link dev.ledger.feed.FeedRunner} per such bean, started after the context
 * and stopped before the {@code DataSource} ({@link LedgerFeedAutoConfiguration}).
 *
 * <pre>{@code
 * @Component
 * class IndexTasks implements LedgerFeedHandler {
 *   public String consumer() { return "search-index"; }
 *   public List<String> domains() { return List.of("orders"); }
 *   public void handle(List<FeedEvent> events, Connection tx) { index.put(events); }
 * }
 * }</pre>
 *
 * <p>Called on its runner's one thread, one batch at a time.
 */
public interface LedgerFeedHandler extends FeedHandler {

  /**
   * The consumer's name, under which its checkpoints are kept.
   *
   * @return 1 to 200 characters; constant for the bean's life
   */
  String consumer();

  /**
   * The domains it reads.
   *
   * @return at least one domain; constant for the bean's life
   */
  List<String> domains();

  /**
   * Where the consumer starts in a domain it has no checkpoint for.
   *
   * @return true: at the domain's first event; false (the default): at the events written from its
   *     first start on
   */
  default boolean fromStart() {
    return false;
  }
}

package dev.ledger.feed;

import java.sql.Connection;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * What a {@link FeedRunner} calls with each batch of a consumer's events.
 *
 * <p>{@code transaction} is a connection of the runner's data source with autocommit off; the
 * runner commits the consumer's checkpoint in it and then commits it: whatever the handler writes
 * on it happens exactly once with the checkpoint. Effects elsewhere (a search index, a message) are
 * at least once: a batch whose checkpoint did not commit is delivered again. Never commit, roll
 * back or close {@code transaction}.
 */
@FunctionalInterface
public interface FeedHandler {

  /**
   * Handles a batch's events.
   *
   * @param events the batch's events, not empty, each domain's in delivery order
   * @param transaction the transaction the checkpoint commits in
   * @throws Exception to refuse the batch: the transaction is rolled back, the failure counted and
   *     the batch delivered again after a pause
   */
  void handle(List<FeedEvent> events, Connection transaction) throws Exception;

  /**
   * Handles {@code erased} items: tasks scrubbed after the consumer may have received some of their
   * events (docs/feed.md, "Erasure"). Erase the copies of the events named. Called after {@link
   * #handle} in the same transaction when a batch holds both, and like it at least once (exactly
   * once with what is written on {@code transaction}).
   *
   * <p>The default logs a warning per item (task id and seqs: no erased text), so a handler that
   * keeps copies of event text must override it.
   *
   * @param erasures the items, not empty, each domain's in the order the scrubs ran
   * @param transaction the transaction the checkpoint commits in
   * @throws Exception to refuse the batch, as {@link #handle}
   */
  default void erased(List<FeedErasure> erasures, Connection transaction) throws Exception {
    for (FeedErasure e : erasures) {
      LoggerFactory.getLogger(FeedHandler.class)
          .warn(
              "ledger feed: task {} of domain {} was scrubbed after its events {} were delivered;"
                  + " this handler does not override erased(...), so its copies stay",
              e.taskId(),
              e.domain(),
              e.seqs());
    }
  }
}

package dev.ledger.feed;

import java.sql.Connection;
import java.util.List;

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
   * Handles a batch.
   *
   * @param events the batch, not empty, each domain's events in delivery order
   * @param transaction the transaction the checkpoint commits in
   * @throws Exception to refuse the batch: the transaction is rolled back, the failure counted and
   *     the batch delivered again after a pause
   */
  void handle(List<FeedEvent> events, Connection transaction) throws Exception;
}

package dev.ledger.feed;

import java.time.Instant;
import java.util.List;

/**
 * An {@code erased} item: a task was scrubbed ({@code ledger.scrubTasks}) after the consumer may
 * have received some of its events, so the consumer must erase its copy of them (docs/feed.md,
 * "Erasure"). Carries ids and sequence numbers only, never the erased text. Delivered after the
 * events the consumer may hold, at least once (again when its checkpoint did not commit).
 *
 * @param domain the task's domain, not null
 * @param taskId the scrubbed task's id, not null
 * @param seqs the {@code seq}s of the task's events this consumer may hold (delivered, or read by a
 *     batch that was in flight when the scrub ran), ascending, not empty; each event now holds the
 *     redaction
 * @param erasedAt when the scrub ran (the database's clock, microseconds), not null
 */
public record FeedErasure(String domain, String taskId, List<Long> seqs, Instant erasedAt) {

  /**
   * Checks and copies the fields.
   *
   * @throws NullPointerException when a field is null
   */
  public FeedErasure {
    java.util.Objects.requireNonNull(domain, "domain");
    java.util.Objects.requireNonNull(taskId, "taskId");
    seqs = List.copyOf(seqs);
    java.util.Objects.requireNonNull(erasedAt, "erasedAt");
  }
}

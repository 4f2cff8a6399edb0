package dev.ledger.retention;

import java.time.Duration;
import java.util.List;

/**
 * What one purge run did ({@link Retention#purge}).
 *
 * @param domains each domain's part, in domain order
 * @param elapsed the run's wall-clock time
 */
public record PurgeReport(List<DomainPurge> domains, Duration elapsed) {

  /**
   * Creates a report.
   *
   * @param domains each domain's part, not null (copied)
   * @param elapsed the run's time, not null
   */
  public PurgeReport {
    domains = List.copyOf(domains);
  }

  /**
   * @return tasks removed over every domain
   */
  public long tasksRemoved() {
    return domains.stream().mapToLong(DomainPurge::tasksRemoved).sum();
  }

  /**
   * @return events removed over every domain
   */
  public long eventsRemoved() {
    return domains.stream().mapToLong(DomainPurge::eventsRemoved).sum();
  }

  /**
   * @return batches (transactions that removed or examined tasks) over every domain
   */
  public long batches() {
    return domains.stream().mapToLong(DomainPurge::batches).sum();
  }

  /**
   * One domain's part of a purge run; also what a progress listener is given after each batch (the
   * totals so far).
   *
   * @param domain the domain
   * @param tasksRemoved tasks removed
   * @param eventsRemoved events removed
   * @param batches batches run
   * @param tasksKept terminal tasks past the retention kept because an open task depends on or
   *     continues them (or a retry of theirs remains), counted once per batch that saw them
   * @param batchesSkipped batches given up because a row lock was not had within the lock timeout
   *     (their tasks are left for the next run)
   * @param removedThroughSeq the domain's {@code removed_through_seq} after the run
   * @param claimClassesRemoved claim classes removed because no task of theirs remains
   * @param busy true when another purge of the domain was running, so this run left it alone
   */
  public record DomainPurge(
      String domain,
      long tasksRemoved,
      long eventsRemoved,
      long batches,
      long tasksKept,
      long batchesSkipped,
      long removedThroughSeq,
      long claimClassesRemoved,
      boolean busy) {}
}

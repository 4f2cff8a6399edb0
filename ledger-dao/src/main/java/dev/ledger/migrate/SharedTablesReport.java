package dev.ledger.migrate;

import java.util.List;

/**
 * The move of a ledger from before domain schemas (shared {@code tasks} and {@code events} in the
 * directory schema) into one schema per domain (ports the reference's {@code
 * migrate_shared_tables}).
 *
 * @param moved true when the move was committed by this run; false for plan and status (what would
 *     move) and when it failed
 * @param domains each domain found in the shared {@code tasks}, in domain order
 * @param tasksKeptAs where the shared {@code tasks} table is kept, renamed, e.g. {@code
 *     public.tasks_before_domain_schemas}
 * @param eventsKeptAs where the shared {@code events} table is kept, renamed
 * @param eventsLeftBehind shared events whose {@code task_id} matches no shared task: not moved (as
 *     in the reference), still in the kept table
 * @param error why the move failed (nothing of it was committed); null otherwise
 */
public record SharedTablesReport(
    boolean moved,
    List<MovedDomain> domains,
    String tasksKeptAs,
    String eventsKeptAs,
    long eventsLeftBehind,
    String error) {

  /** Copies the list. */
  public SharedTablesReport {
    domains = List.copyOf(domains);
  }

  /**
   * One domain of the move.
   *
   * @param domain the domain, e.g. {@code Acme Corp/EU}
   * @param schema its new schema, unquoted
   * @param tasks task rows moved (copied exactly)
   * @param events events moved, in sequence order
   */
  public record MovedDomain(String domain, String schema, long tasks, long events) {}
}

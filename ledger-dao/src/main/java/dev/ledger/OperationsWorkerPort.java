package dev.ledger;

import dev.ledger.worker.WorkerPort;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The worker port of a ledger or of a transaction view ({@link LedgerOperations#worker()}): each
 * call runs in that view's transaction context, as the view's own operations do. Thread-safe when
 * the view is.
 */
final class OperationsWorkerPort implements WorkerPort {

  private final LedgerOperations on;

  OperationsWorkerPort(LedgerOperations on) {
    this.on = on;
  }

  @Override
  public List<ClaimedTask> claimTasks(String domain, Claimer claimer, int max) {
    return on.writeInOneRoundTrip(
        "claim", tx -> on.ops.claims.claimTasks(tx, domain, claimer, max));
  }

  @Override
  public java.util.Optional<java.util.Map.Entry<String, java.time.Duration>> heldBack(
      String domain) {
    return on.ops
        .claims
        .heldBack(domain)
        .map(
            h ->
                java.util.Map.entry(
                    h.why().name().toLowerCase(java.util.Locale.ROOT), h.recheck()));
  }

  @Override
  public List<Lease> completeAll(String domain, List<Completion> completions) {
    return on.write(
        "complete all", tx -> on.ops.batchCompletion.completeAll(tx, domain, completions));
  }

  @Override
  public CompletedBatch completeAvailable(String domain, List<Completion> completions) {
    return on.writeInOneRoundTrip(
        "complete available",
        tx -> on.ops.batchCompletion.completeAvailable(tx, domain, completions));
  }

  @Override
  public FailureRecord fail(
      Lease lease, String error, int defaultMaxAttempts, Duration retryDelay) {
    return on.write(
        "fail", tx -> on.ops.retries.fail(tx, lease, error, defaultMaxAttempts, retryDelay));
  }

  @Override
  public List<String> admitDue(String domain, int max) {
    return on.write("admit due", tx -> on.ops.retries.admitDue(tx, domain, max));
  }

  @Override
  public Optional<Instant> nextDue(String domain) {
    return on.read("next due", tx -> on.ops.workerReads.nextDue(tx, domain));
  }

  @Override
  public Map<String, Pickup> pickups(String domain, Collection<String> ids) {
    return on.read("pickups", tx -> on.ops.workerReads.pickups(tx, domain, ids));
  }
}

package dev.ledger.claim;

import dev.ledger.Lease;
import dev.ledger.LeaseLostException;
import dev.ledger.Validation;
import dev.ledger.append.Transitions;
import dev.ledger.event.Event;
import dev.ledger.event.EventLog;
import dev.ledger.kernel.Engine;
import dev.ledger.kernel.Tx;
import java.time.Duration;
import java.time.Instant;

/**
 * The operations under a lease: heartbeat, release, leave a handoff, complete. Each is fenced: it
 * locks the task's row and is refused with {@link LeaseLostException} unless the lease is the
 * task's current one (claimed, same holder, same attempt), then appends and projects its event in
 * the operation's transaction. So a worker may complete its task in the same transaction as its own
 * business writes: if that transaction rolls back, the task is still claimed by it. Arguments are
 * checked first (nothing is written for bad input). Ports the reference's {@code heartbeat}, {@code
 * release}, {@code leave_handoff} and {@code complete}. Thread-safe.
 */
public final class Leases {

  private final Engine engine;
  private final Transitions transitions;

  /**
   * Creates the operations.
   *
   * @param engine the ledger's shared state
   * @param transitions the transitions by id
   */
  public Leases(Engine engine, Transitions transitions) {
    this.engine = engine;
    this.transitions = transitions;
  }

  /**
   * Extends a lease.
   *
   * @param tx the operation's transaction context
   * @param lease the current lease, not null
   * @param extend the new lease runs this long from now; more than zero
   * @return the extended lease
   * @throws LeaseLostException when the lease is no longer the task's current one
   */
  public Lease heartbeat(Tx tx, Lease lease, Duration extend) {
    Validation.leaseDuration("extend", extend);
    Instant[] until = new Instant[1];
    fenced(
        tx,
        lease,
        "heartbeat",
        row -> {
          until[0] = engine.now().plus(extend);
          return new Event.Heartbeat(until[0]);
        });
    return new Lease(lease.taskId(), lease.holder(), lease.attempt(), until[0]);
  }

  /**
   * Gives a claimed task back to the queue.
   *
   * @param tx the operation's transaction context
   * @param lease the current lease, not null
   * @throws LeaseLostException when the lease is no longer the task's current one
   */
  public void release(Tx tx, Lease lease) {
    fenced(tx, lease, "release", row -> new Event.Released());
  }

  /**
   * Leaves a handoff note on a claimed task.
   *
   * @param tx the operation's transaction context
   * @param lease the current lease, not null
   * @param handoff the note, 1 to {@value Validation#MAX_BODY} characters
   * @throws LeaseLostException when the lease is no longer the task's current one
   */
  public void leaveHandoff(Tx tx, Lease lease, String handoff) {
    Validation.required("handoff", handoff, Validation.MAX_BODY);
    fenced(tx, lease, "leave a handoff on", row -> new Event.HandoffLeft(handoff));
  }

  /**
   * Completes a claimed task.
   *
   * @param tx the operation's transaction context
   * @param lease the current lease, not null
   * @param handoff the result note, or null
   * @throws LeaseLostException when the lease is no longer the task's current one
   */
  public void complete(Tx tx, Lease lease, String handoff) {
    Validation.text("handoff", handoff, Validation.MAX_BODY);
    fenced(tx, lease, "complete", row -> new Event.Completed(handoff));
  }

  private void fenced(Tx tx, Lease lease, String operation, EventLog.EventDecider decide) {
    transitions.underLease(tx, lease, operation, decide);
  }
}

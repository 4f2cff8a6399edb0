package dev.ledger.append;

import static dev.ledger.event.EventLog.wrong;

import dev.ledger.InvalidInputException;
import dev.ledger.Lease;
import dev.ledger.LeaseLostException;
import dev.ledger.Status;
import dev.ledger.Validation;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.event.Event;
import dev.ledger.event.EventLog;
import dev.ledger.kernel.Engine;
import dev.ledger.kernel.Tx;

/**
 * The transitions of a task by id that need no lease: admit, invalidate, post and rescore. Each
 * locks the task's row, checks its state, appends the event and projects it, in the operation's
 * transaction. Arguments are checked first (nothing is written for bad input). Ports the
 * reference's {@code admit}, {@code invalidate}, {@code post} and {@code rescore}. Thread-safe.
 */
public final class Transitions {

  private final Engine engine;
  private final EventLog log;

  /**
   * Creates the operations.
   *
   * @param engine the ledger's shared state
   * @param log the event log writer
   */
  public Transitions(Engine engine, EventLog log) {
    this.engine = engine;
    this.log = log;
  }

  /**
   * Admits a proposed task.
   *
   * @param tx the operation's transaction context
   * @param id the task id
   * @throws dev.ledger.TaskNotFoundException when no task has the id
   * @throws dev.ledger.WrongStateException when the task is not {@code proposed}
   */
  public void admit(Tx tx, String id) {
    apply(
        tx,
        id,
        row -> {
          if (!Status.PROPOSED.wire().equals(row.getStatus())) {
            throw wrong(row, "admit", "only a proposed task can be admitted");
          }
          if (row.getNotBefore() != null && row.getNotBefore().isAfter(engine.now())) {
            throw wrong(
                row,
                "admit",
                "it may not run before "
                    + row.getNotBefore()
                    + "; a worker pool of its domain admits it then");
          }
          return new Event.Admitted();
        });
  }

  /**
   * Admits a task if it is still proposed and not delayed past now ({@code not_before}); does
   * nothing otherwise (a retried {@code fileAndAdmit} whose first attempt committed, a delayed
   * task).
   *
   * @param tx the operation's transaction context
   * @param id the task id
   * @throws dev.ledger.TaskNotFoundException when no task has the id
   */
  public void admitIfProposed(Tx tx, String id) {
    apply(
        tx,
        id,
        row ->
            Status.PROPOSED.wire().equals(row.getStatus())
                    && (row.getNotBefore() == null || !row.getNotBefore().isAfter(engine.now()))
                ? new Event.Admitted()
                : null); // a delayed task stays proposed until a worker pool admits it
  }

  /**
   * Invalidates an open task.
   *
   * @param tx the operation's transaction context
   * @param id the task id
   * @param reason why, 1 to {@value Validation#MAX_BODY} characters
   * @param supersededBy the task replacing it, or null; must exist
   * @throws InvalidInputException naming {@code reason} or {@code superseded_by}
   * @throws dev.ledger.TaskNotFoundException when no task has the id
   * @throws dev.ledger.WrongStateException when the task is completed or invalidated
   */
  public void invalidate(Tx tx, String id, String reason, String supersededBy) {
    Validation.required("reason", reason, Validation.MAX_BODY);
    Validation.text("superseded_by", supersededBy, Validation.MAX_NAME);
    if (id != null && id.equals(supersededBy)) {
      throw new InvalidInputException(
          "superseded_by",
          "is the task being invalidated ('" + id + "'): a task cannot replace itself");
    }
    if (supersededBy != null && engine.findSchemaOfTask(tx, supersededBy).isEmpty()) {
      throw new InvalidInputException("superseded_by", "no task with id '" + supersededBy + "'");
    }
    apply(
        tx,
        id,
        row -> {
          if (Status.parse(row.getStatus()).terminal()) {
            throw wrong(row, "invalidate", "only an open task can be invalidated");
          }
          return new Event.Invalidated(reason, supersededBy);
        });
  }

  /**
   * Records where a completed task's result was posted.
   *
   * @param tx the operation's transaction context
   * @param id the task id
   * @param to where, e.g. {@code tracker:ops}, 1 to {@value Validation#MAX_NAME} characters
   * @throws InvalidInputException naming {@code to}
   * @throws dev.ledger.TaskNotFoundException when no task has the id
   * @throws dev.ledger.WrongStateException when the task is not completed
   */
  public void post(Tx tx, String id, String to) {
    Validation.required("to", to, Validation.MAX_NAME);
    apply(
        tx,
        id,
        row -> {
          if (!Status.COMPLETED.wire().equals(row.getStatus())) {
            throw wrong(row, "post", "only a completed task's result can be posted");
          }
          return new Event.Posted(to);
        });
  }

  /**
   * Changes an open task's priority.
   *
   * @param tx the operation's transaction context
   * @param id the task id
   * @param priority the new priority
   * @param why why, 1 to {@value Validation#MAX_BODY} characters
   * @throws InvalidInputException naming {@code why}
   * @throws dev.ledger.TaskNotFoundException when no task has the id
   * @throws dev.ledger.WrongStateException when the task is completed or invalidated
   */
  public void rescore(Tx tx, String id, long priority, String why) {
    Validation.required("why", why, Validation.MAX_BODY);
    apply(
        tx,
        id,
        row -> {
          if (Status.parse(row.getStatus()).terminal()) {
            throw wrong(row, "rescore", "only an open task can be rescored");
          }
          return new Event.Rescored(priority, why);
        });
  }

  /**
   * The transition of a task under its lease, the fence every operation under a lease passes
   * (heartbeat, release, handoff, complete, fail): the task's row is locked and the operation is
   * refused unless the lease is the task's current one (claimed, same holder, same attempt).
   *
   * @param tx the operation's transaction context
   * @param lease the lease the caller holds, not null
   * @param operation what is done under it, for the refusal, e.g. {@code complete}
   * @param decide decides the event from the locked row, once the lease is known current
   * @return the row after the event
   * @throws InvalidInputException naming {@code lease} when it is null
   * @throws LeaseLostException when the lease is not the task's current one (nothing written)
   * @throws dev.ledger.TaskNotFoundException when no task has the lease's id
   */
  public TasksRecord underLease(
      Tx tx, Lease lease, String operation, EventLog.EventDecider decide) {
    if (lease == null) {
      throw new InvalidInputException("lease", "must not be null");
    }
    return apply(
        tx,
        lease.taskId(),
        row -> {
          if (!current(row, lease)) {
            throw new LeaseLostException(lease, operation, describe(row));
          }
          return decide.decide(row);
        });
  }

  private static boolean current(TasksRecord row, Lease lease) {
    return Status.CLAIMED.wire().equals(row.getStatus())
        && lease.holder().equals(row.getHolder())
        && row.getAttempts() == lease.attempt();
  }

  private static String describe(TasksRecord row) {
    Status s = Status.parse(row.getStatus());
    return s == Status.CLAIMED
        ? "claimed by " + row.getHolder() + " (attempt " + row.getAttempts() + ")"
        : s.wire();
  }

  /**
   * The generic transition of one task by id in {@code tx}: routes the id, then {@link
   * EventLog#transition}.
   *
   * @param tx the operation's transaction context
   * @param id the task id
   * @param decide decides the event from the locked row
   * @return the row after the event
   * @throws dev.ledger.TaskNotFoundException when no task has the id
   */
  public TasksRecord apply(Tx tx, String id, EventLog.EventDecider decide) {
    return log.transition(tx, engine.taskDomain(tx, id), id, decide);
  }
}

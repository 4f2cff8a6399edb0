package dev.ledger.claim;

import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;
import static dev.ledger.event.EventLog.wrong;

import dev.ledger.ClaimedTask;
import dev.ledger.Claimer;
import dev.ledger.InvalidInputException;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Validation;
import dev.ledger.append.Transitions;
import dev.ledger.codegen.db.ledger_template.tables.Tasks;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.event.Event;
import dev.ledger.kernel.Engine;
import dev.ledger.kernel.Rows;
import dev.ledger.kernel.Tx;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * Claiming: the next claimable tasks of a domain in one statement ({@link #claimBatch}, SQL in
 * {@link ClaimSql}), or one given task ({@link #claim}), in the operation's transaction, with a
 * {@code claimed} event per task. Arguments are checked first (nothing is written for bad input).
 * Ports the reference's {@code claim_next} and {@code claim}. Thread-safe.
 */
public final class Claims {

  private final Engine engine;
  private final Transitions transitions;

  /** Each domain's claim window slack, learnt from its claims; bounded by the domains claimed. */
  private final java.util.concurrent.ConcurrentMap<String, ClaimSlack> slacks =
      new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * Creates the operations.
   *
   * @param engine the ledger's shared state
   * @param transitions the transitions by id (a claim by id is one)
   */
  public Claims(Engine engine, Transitions transitions) {
    this.engine = engine;
    this.transitions = transitions;
  }

  /**
   * Claims up to {@code max} claimable tasks in one statement: admitted (or claimed with an expired
   * lease), every requirement in the claimer's manifest, label within its handling, every
   * dependency completed, no open continuation; highest priority first, then oldest. When
   * concurrent transactions hold rows of the claim's window and it comes up short, it claims again
   * from a window 8 times larger, up to {@link ClaimSql#MAX_CLAIM_WINDOW}, and the domain's next
   * claims read a wider window ({@link ClaimSlack}).
   *
   * @param tx the operation's transaction context
   * @param domain the domain
   * @param claimer who claims, and on what terms (checked when it was made); not null
   * @param max the most tasks, 1 to 1000
   * @return the leases, in claim order; empty when none (or the domain is unknown)
   * @throws InvalidInputException naming {@code domain}, {@code claimer} or {@code max}
   */
  public List<Lease> claimBatch(Tx tx, String domain, Claimer claimer, int max) {
    return claimTasks(tx, domain, claimer, max).stream().map(ClaimedTask::lease).toList();
  }

  /**
   * Claims as {@link #claimBatch} does and returns each task with its row after the claim, read by
   * the claiming statement itself.
   *
   * @param tx the operation's transaction context
   * @param domain the domain
   * @param claimer who claims, and on what terms; not null
   * @param max the most tasks, 1 to 1000
   * @return the leases and tasks, in claim order; empty when none (or the domain is unknown)
   * @throws InvalidInputException naming {@code domain}, {@code claimer} or {@code max}
   */
  public List<ClaimedTask> claimTasks(Tx tx, String domain, Claimer claimer, int max) {
    Validation.domain(domain);
    checkClaimer(claimer);
    String holder = claimer.holder();
    if (max < 1 || max > 1000) {
      throw new InvalidInputException("max", "must be 1 to 1000, was " + max);
    }
    Optional<String> schema = engine.schemaOf(tx, domain);
    if (schema.isEmpty()) {
      return List.of();
    }
    DSLContext ctx = tx.forSchema(schema.get());
    Instant now = engine.now();
    Instant until = now.plus(claimer.lease());
    ClaimSql.ClaimArgs args =
        new ClaimSql.ClaimArgs(
            now,
            until,
            holder,
            ClaimSql.jsonArray(claimer.manifest()),
            claimer.handling().rank(),
            new Event.Claimed(holder, until).payload());
    ClaimSlack slack = slacks.computeIfAbsent(schema.get(), s -> new ClaimSlack());
    int window = ClaimSlack.window(max, slack.current());
    ClaimSql.Claimed claimed =
        ClaimSql.claimIn(engine.statements(), ctx, args, max, window, engine.citus());
    List<TasksRecord> rows = new ArrayList<>(claimed.rows());
    // short of max with a full window: concurrent transactions hold (or just changed) rows of
    // the window; look behind them in a window 8 times larger, and widen the next claims'
    boolean contended = rows.size() < max && claimed.windowRows() >= window;
    while (rows.size() < max
        && window <= ClaimSql.MAX_CLAIM_WINDOW / 8
        && claimed.windowRows() >= window) {
      window *= 8;
      claimed =
          ClaimSql.claimIn(
              engine.statements(), ctx, args, max - rows.size(), window, engine.citus());
      rows.addAll(claimed.rows());
    }
    slack.record(contended);
    rows.sort(ClaimSql.CLAIM_ORDER);
    List<ClaimedTask> out = new ArrayList<>(rows.size());
    for (TasksRecord row : rows) {
      out.add(
          new ClaimedTask(
              new Lease(row.getId(), holder, row.getAttempts(), until), Rows.task(row)));
    }
    return out;
  }

  /**
   * Claims one given task, when it is claimable by this claimer.
   *
   * @param tx the operation's transaction context
   * @param id the task id
   * @param claimer who claims, and on what terms; not null
   * @return the lease
   * @throws InvalidInputException naming {@code claimer} when it is null
   * @throws dev.ledger.TaskNotFoundException when no task has the id
   * @throws dev.ledger.WrongStateException when the task is not claimable by this claimer, saying
   *     why
   */
  public Lease claim(Tx tx, String id, Claimer claimer) {
    checkClaimer(claimer);
    String holder = claimer.holder();
    List<String> manifest = claimer.manifest();
    Label handling = claimer.handling();
    Instant[] until = new Instant[1];
    TasksRecord after =
        transitions.apply(
            tx,
            id,
            row -> {
              Instant now = engine.now();
              Tasks t = TASKS.as("t");
              boolean ok =
                  DSL.using(row.configuration())
                      .fetchExists(
                          DSL.selectOne()
                              .from(t)
                              .where(t.ID.eq(id))
                              .and(
                                  ClaimSql.claimable(
                                      t,
                                      DSL.val(now, t.LEASE_UNTIL),
                                      DSL.val(ClaimSql.jsonArray(manifest)),
                                      DSL.val(handling.rank(), t.LABEL_RANK),
                                      engine.citus())));
              if (!ok) {
                throw wrong(row, "claim", ClaimSql.whyNotClaimable(row, now, manifest, handling));
              }
              until[0] = now.plus(claimer.lease());
              return new Event.Claimed(holder, until[0]);
            });
    return new Lease(id, holder, after.getAttempts(), until[0]);
  }

  private static void checkClaimer(Claimer claimer) {
    if (claimer == null) {
      throw new InvalidInputException("claimer", "must not be null");
    }
  }
}

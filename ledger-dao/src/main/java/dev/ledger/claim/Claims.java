package dev.ledger.claim;

import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;
import static dev.ledger.event.EventLog.wrong;

import dev.ledger.ClaimedTask;
import dev.ledger.Claimer;
import dev.ledger.InvalidInputException;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Validation;
import dev.ledger.append.Transitions;
import dev.ledger.codegen.convert.Rfc3339;
import dev.ledger.codegen.db.ledger_template.tables.Tasks;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.control.QueueControls;
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

  private final QueueControls controls;

  /** The schemas whose claims pass the gate first (a control was seen set). */
  private final java.util.Set<String> gatedSchemas =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** The domains whose last claim the controls held back. */
  private final java.util.concurrent.ConcurrentMap<String, HeldBack> held =
      new java.util.concurrent.ConcurrentHashMap<>();

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
    this.controls = new QueueControls(engine);
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
    ClaimSlack slack = slacks.computeIfAbsent(schema.get(), s -> new ClaimSlack());
    boolean citus = engine.citus();
    List<TasksRecord> rows;
    if (gatedSchemas.contains(schema.get()) && !citus) {
      rows = claimGated(tx, ctx, domain, schema.get(), claimer, max, slack);
    } else {
      Gated gated =
          gatedSchemas.contains(schema.get()) ? gate(ctx, domain, schema.get(), max) : null;
      if (gated != null && gated.grant().allowed() == 0) {
        return List.of();
      }
      ClaimedRows claimed = claimRows(tx, ctx, schema.get(), claimer, gated, max, slack);
      rows = claimed.rows();
      if (gated == null && rows.isEmpty() && claimed.controlsOn()) {
        // the claim found a control set (the statement claimed nothing): pass the gate, claim
        // again
        gatedSchemas.add(schema.get());
        if (!citus) {
          // committing itself too when the ungated claim did (it claimed nothing); else in the
          // transaction the ungated claim began, the lock held to its commit (once per schema and
          // process, when a control is first seen)
          rows = claimGated(tx, ctx, domain, schema.get(), claimer, max, slack);
        } else {
          gated = gate(ctx, domain, schema.get(), max);
          if (gated == null || gated.grant().allowed() == 0) {
            return List.of();
          }
          rows = claimRows(tx, ctx, schema.get(), claimer, gated, max, slack).rows();
        }
      }
      if (gated != null) {
        controls.spend(ctx, gated.grant(), rows.size());
      }
    }
    rows.sort(ClaimSql.CLAIM_ORDER);
    List<ClaimedTask> out = new ArrayList<>(rows.size());
    for (TasksRecord row : rows) {
      out.add(
          new ClaimedTask(
              new Lease(row.getId(), holder, row.getAttempts(), untilOf(row)), Rows.task(row)));
    }
    return out;
  }

  /**
   * A claim of a domain with a queue control set, outside Citus: the controls row's lock, the gate
   * and the claim in one round trip ({@link GatedClaimSql#claimGated}); records whether the
   * controls held it back, and forgets the schema as controlled when it finds no control set. When
   * concurrent claimers hold rows of its window, it claims again from a larger one (the gate then
   * counts what this claim took already: in the same transaction, or, when each claim commits
   * itself, in the one committed before).
   *
   * <p>In a transaction of the ledger's own that has run no statement yet (the domain's schema was
   * cached: {@link Tx#canCommitItself()}), each claim statement commits itself in its own round
   * trip, the bounds and the controls row's lock included ({@link Tx#commitItself}): the lock is
   * held for the server's time only, never across a round trip of the client's.
   */
  private List<TasksRecord> claimGated(
      Tx tx,
      DSLContext ctx,
      String domain,
      String schema,
      Claimer claimer,
      int max,
      ClaimSlack slack) {
    String holder = claimer.holder();
    boolean dbClock = engine.systemClock();
    // the payload around its "until", which the statement writes from the time it reads
    String payload =
        String.valueOf(
            EVENTS
                .PAYLOAD
                .getDataType()
                .getConverter()
                .to(new Event.Claimed(holder, Instant.EPOCH).payload()));
    String epoch = Rfc3339.format(Instant.EPOCH);
    int at = payload.lastIndexOf(epoch);
    long leaseNanos = claimer.lease().toNanos();
    GatedClaimSql.GatedArgs args =
        new GatedClaimSql.GatedArgs(
            engine.now(),
            leaseNanos / 1000, // Instant.plus then truncated to microseconds: floor, leases > 0
            dbClock,
            holder,
            ClaimSql.jsonArray(claimer.manifest()),
            claimer.handling().rank(),
            payload.substring(0, at),
            payload.substring(at + epoch.length()));
    int window = ClaimSlack.window(max, slack.current());
    GatedClaimSql.GatedClaim first = gatedOnce(tx, ctx, schema, args, max, window);
    QueueControls.Hold[] why = new QueueControls.Hold[1];
    int allowed = allowed(first.gate(), max, why);
    if (!first.gate().active()) {
      gatedSchemas.remove(schema);
      held.remove(domain);
    } else if (why[0] != null) {
      held.put(domain, new HeldBack(why[0], recheck(first.gate(), why[0])));
    } else {
      held.remove(domain);
    }
    List<TasksRecord> rows = new ArrayList<>(first.rows());
    int ask = Math.min(max, allowed);
    boolean contended = rows.size() < ask && first.windowRows() >= window;
    int windowRows = first.windowRows();
    while (rows.size() < ask && window <= ClaimSql.MAX_CLAIM_WINDOW / 8 && windowRows >= window) {
      window *= 8;
      GatedClaimSql.GatedClaim next = gatedOnce(tx, ctx, schema, args, ask - rows.size(), window);
      rows.addAll(next.rows());
      windowRows = next.windowRows();
    }
    slack.record(contended);
    return rows;
  }

  /**
   * One gated claim: committing itself when the transaction allows, else in it. A claim that
   * commits itself and asks for at most {@link GatedClaimSql#FAST_MAX} tries the fast path first
   * (one slot row, overlapping other claims); when that finds no free slot row or too little room
   * under a limit, it claimed nothing and the exact gate follows (docs/controls.md).
   */
  private GatedClaimSql.GatedClaim gatedOnce(
      Tx tx, DSLContext ctx, String schema, GatedClaimSql.GatedArgs args, int max, int window) {
    if (tx.canCommitItself()) {
      if (max <= GatedClaimSql.FAST_MAX) {
        GatedClaimSql.GatedClaim fast =
            tx.commitItself(
                schema,
                (own, bounds) ->
                    GatedClaimSql.claimGated(
                        engine.statements(), own, args, max, window, bounds, true));
        if (!fast.gate().slow()) {
          return fast;
        }
        tx.committedNothing(); // it claimed and wrote nothing
      }
      return tx.commitItself(
          schema,
          (own, bounds) ->
              GatedClaimSql.claimGated(engine.statements(), own, args, max, window, bounds, false));
    }
    return GatedClaimSql.claimGated(engine.statements(), ctx, args, max, window, null, false);
  }

  /**
   * What the gate let a claim of {@code max} take, as {@link QueueControls#open} decides it, and
   * (in {@code why[0]}) the control that held it back, or null.
   */
  private static int allowed(GatedClaimSql.GateState g, int max, QueueControls.Hold[] why) {
    if (!g.active()) {
      return max;
    }
    if (g.paused()) {
      why[0] = QueueControls.Hold.PAUSED;
      return 0;
    }
    long allowed = max;
    if (g.free() != null && g.free() < allowed) {
      allowed = g.free();
      why[0] = QueueControls.Hold.CONCURRENCY;
    }
    if (g.rateLeft() != null && g.rateLeft() < allowed) {
      allowed = g.rateLeft();
      why[0] = QueueControls.Hold.RATE;
    }
    return (int) allowed;
  }

  /** When a held-back claimer should claim again (as {@link QueueControls#open} says it). */
  private static java.time.Duration recheck(GatedClaimSql.GateState g, QueueControls.Hold why) {
    return switch (why) {
      case PAUSED -> QueueControls.PAUSED_RECHECK;
      case CONCURRENCY -> QueueControls.LIMITED_RECHECK;
      case RATE -> {
        // until the oldest counted claim leaves the window (RateWindow.untilRoom)
        long ms = QueueControls.PAUSED_RECHECK.toMillis();
        if (g.firstBucket() != null && g.bucketMs() != null) {
          long leaves = (g.firstBucket() + QueueControls.BUCKETS + 1) * g.bucketMs();
          ms = Math.min(ms, leaves - g.nowMs());
        }
        yield java.time.Duration.ofMillis(Math.max(10, ms));
      }
    };
  }

  /** A claim that passed the gate: its grant, and the domain for the held-back record. */
  private record Gated(QueueControls.Grant grant) {}

  /** The rows a claim took, and whether its first statement found a queue control set. */
  private record ClaimedRows(List<TasksRecord> rows, boolean controlsOn) {}

  /**
   * Passes the domain's gate: locks its controls row and reads the grant; records the domain as
   * held back (or not) for {@link #heldBack}. Null when no control is set (the schema claims
   * ungated again).
   */
  private Gated gate(DSLContext ctx, String domain, String schema, int max) {
    Optional<QueueControls.Grant> grant = controls.open(ctx, max);
    if (grant.isEmpty()) {
      gatedSchemas.remove(schema);
      held.remove(domain);
      return null;
    }
    QueueControls.Grant g = grant.get();
    if (g.hold() != null) {
      held.put(domain, new HeldBack(g.hold(), g.recheck()));
    } else {
      held.remove(domain);
    }
    return new Gated(g);
  }

  /**
   * Claims up to {@code max} tasks (the grant's allowed when gated, at the grant's time), from a
   * larger window while concurrent claimers hold rows of a full one.
   *
   * <p>In a transaction of the ledger's own that has run no statement yet (the domain's schema was
   * cached: {@link Tx#canCommitItself()}), outside Citus, each claim statement commits itself in
   * its own round trip, the bounds included ({@link Tx#commitItself}; issue 26): the claim is one
   * round trip, not the bounds', the claim's and the commit's. A claim from a larger window then
   * commits on its own too, after the first: its rows are the ones the first left (its candidates
   * are read again), and a failure of it is reported as an unknown outcome (the first's leases
   * committed).
   */
  private ClaimedRows claimRows(
      Tx tx,
      DSLContext ctx,
      String schema,
      Claimer claimer,
      Gated gated,
      int max,
      ClaimSlack slack) {
    String holder = claimer.holder();
    Instant now = gated != null ? gated.grant().now() : engine.now();
    int ask = gated != null ? Math.min(max, gated.grant().allowed()) : max;
    Instant until = now.plus(claimer.lease());
    ClaimSql.ClaimArgs args =
        new ClaimSql.ClaimArgs(
            now,
            until,
            holder,
            ClaimSql.jsonArray(claimer.manifest()),
            claimer.handling().rank(),
            new Event.Claimed(holder, until).payload());
    boolean g = gated != null;
    int window = ClaimSlack.window(ask, slack.current());
    ClaimSql.Claimed claimed = claimOnce(tx, ctx, schema, args, ask, window, g);
    boolean controlsOn = claimed.controlsOn();
    List<TasksRecord> rows = new ArrayList<>(claimed.rows());
    // short of ask with a full window: concurrent transactions hold (or just changed) rows of
    // the window; look behind them in a window 8 times larger, and widen the next claims'
    boolean contended = rows.size() < ask && claimed.windowRows() >= window;
    while (rows.size() < ask
        && window <= ClaimSql.MAX_CLAIM_WINDOW / 8
        && claimed.windowRows() >= window) {
      window *= 8;
      claimed = claimOnce(tx, ctx, schema, args, ask - rows.size(), window, g);
      rows.addAll(claimed.rows());
    }
    slack.record(contended);
    return new ClaimedRows(rows, controlsOn);
  }

  /** One ungated claim statement: committing itself when the transaction allows, else in it. */
  private ClaimSql.Claimed claimOnce(
      Tx tx,
      DSLContext ctx,
      String schema,
      ClaimSql.ClaimArgs args,
      int max,
      int window,
      boolean gated) {
    boolean citus = engine.citus();
    if (!citus && tx.canCommitItself()) {
      return tx.commitItself(
          schema,
          (own, bounds) ->
              ClaimSql.claimIn(engine.statements(), own, args, max, window, false, gated, bounds));
    }
    return ClaimSql.claimIn(engine.statements(), ctx, args, max, window, citus, gated, null);
  }

  private static Instant untilOf(TasksRecord row) {
    return row.getLeaseUntil();
  }

  /**
   * Whether the last claim of a domain through this ledger was held back by its queue controls:
   * why, and when to claim again if nothing wakes the claimer sooner. Worker pools back off on it.
   *
   * @param domain the domain
   * @return the hold, or empty when the last claim was not held back
   */
  public Optional<HeldBack> heldBack(String domain) {
    return Optional.ofNullable(held.get(domain));
  }

  /**
   * A claim held back by a domain's controls.
   *
   * @param why the control that held it back
   * @param recheck how soon to claim again when nothing wakes the claimer sooner
   */
  public record HeldBack(QueueControls.Hold why, java.time.Duration recheck) {}

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
              DSLContext domainCtx = DSL.using(row.configuration());
              // a claim by id passes the domain's controls too (a pause, a full limit refuse it)
              Optional<QueueControls.Grant> grant = controls.open(domainCtx, 1);
              if (grant.isPresent() && grant.get().allowed() == 0) {
                throw wrong(row, "claim", heldBackWhy(grant.get()));
              }
              Instant now = grant.map(QueueControls.Grant::now).orElseGet(engine::now);
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
              grant.ifPresent(g -> controls.spend(domainCtx, g, 1));
              return new Event.Claimed(holder, until[0]);
            });
    return new Lease(id, holder, after.getAttempts(), until[0]);
  }

  private static String heldBackWhy(QueueControls.Grant grant) {
    return switch (grant.hold()) {
      case PAUSED -> "its domain is paused (resume it to claim)";
      case CONCURRENCY ->
          "its domain's concurrency limit of "
              + grant.row().getMaxClaimed()
              + " claimed tasks is reached";
      case RATE -> "its domain's rate limit is reached; try again in " + grant.recheck();
    };
  }

  private static void checkClaimer(Claimer claimer) {
    if (claimer == null) {
      throw new InvalidInputException("claimer", "must not be null");
    }
  }
}

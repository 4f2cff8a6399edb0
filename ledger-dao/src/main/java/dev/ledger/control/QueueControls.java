package dev.ledger.control;

import static dev.ledger.codegen.db.ledger_template.Tables.QUEUE_CONTROLS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.DomainControls;
import dev.ledger.InvalidInputException;
import dev.ledger.Status;
import dev.ledger.Validation;
import dev.ledger.codegen.db.ledger_template.tables.records.QueueControlsRecord;
import dev.ledger.kernel.Engine;
import dev.ledger.kernel.Tx;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;

/**
 * A domain's queue controls (pause, concurrency limit, rate limit), kept in its schema's {@code
 * queue_controls} row (domain migration V10): setting and reading them, and the gate a claim passes
 * when one is set ({@link #open}, {@link #spend}). Without a row (or with nothing set in it) a
 * claim pays only the claim statement's {@link #noneActive()} test. Thread-safe (stateless apart
 * from the engine).
 *
 * <p>Race-free across processes: the exact gate locks the row ({@code FOR UPDATE}) and then every
 * slot row of domain V14's {@code queue_control_slots} before it counts the domain's claimed tasks
 * and reads the rate window (the controls row's counts and every slot row's), and holds the locks
 * until its transaction ends, so it sees what every earlier claim committed (READ COMMITTED takes a
 * new snapshot per statement, after the lock). The fast path of a claim far from the limits holds
 * one slot row only ({@code GatedClaimSql}, docs/controls.md); the setters lock the row and every
 * slot row, so a change waits for the fast claims in flight.
 */
public final class QueueControls {

  /** The buckets a rate limit's period is divided into: the window is kept to 1/20 of it. */
  public static final int BUCKETS = 20;

  /** The shortest rate period. */
  public static final Duration MIN_PERIOD = Duration.ofMillis(100);

  /** The longest rate period. */
  public static final Duration MAX_PERIOD = Duration.ofDays(1);

  /** The largest concurrency or rate limit. */
  public static final int MAX_LIMIT = 1_000_000;

  /** How soon a held-back pool claims again when nothing else wakes it (paused). */
  public static final Duration PAUSED_RECHECK = Duration.ofSeconds(1);

  /** How soon a pool held back by the concurrency limit claims again (another pool's slot). */
  public static final Duration LIMITED_RECHECK = Duration.ofMillis(200);

  private static final String CLAIMED = Status.CLAIMED.wire();

  /** Why a controlled claim took fewer tasks than asked. */
  public enum Hold {
    /** The domain is paused. */
    PAUSED,
    /** As many tasks as the concurrency limit allows are claimed. */
    CONCURRENCY,
    /** The rate limit's window is full. */
    RATE
  }

  /**
   * What the gate let a claim take.
   *
   * @param allowed the most tasks the claim may take now, 0 to the asked number
   * @param hold why fewer than asked, or null when the controls did not limit the claim
   * @param recheck when a held-back claimer should claim again (when nothing wakes it sooner)
   * @param now the claim's time, read after the row was locked (its {@code claimed} events carry
   *     it)
   * @param row the locked row
   */
  public record Grant(
      int allowed, Hold hold, Duration recheck, Instant now, QueueControlsRecord row) {}

  private final Engine engine;

  /**
   * Creates the operations.
   *
   * @param engine the ledger's shared state
   */
  public QueueControls(Engine engine) {
    this.engine = engine;
  }

  // ---------------------------------------------------------------------------------------------
  // the claim's side

  /**
   * The claim statement's check when it runs ungated: no control is set in the domain (an
   * uncorrelated {@code NOT EXISTS} over a table of at most one row).
   *
   * @return the condition
   */
  public static Condition noneActive() {
    return DSL.notExists(
        DSL.selectOne().from(QUEUE_CONTROLS).where(QUEUE_CONTROLS.ACTIVE.isTrue()));
  }

  /**
   * Whether a control is set, as a column of the claim statement (it tells an ungated claim to pass
   * the gate).
   *
   * @return the field
   */
  public static Field<Boolean> anyActive() {
    return DSL.field(
        DSL.exists(DSL.selectOne().from(QUEUE_CONTROLS).where(QUEUE_CONTROLS.ACTIVE.isTrue())));
  }

  /**
   * Locks the domain's controls and says how many tasks a claim of {@code max} may take now.
   *
   * @param ctx the domain's context, in the claim's transaction
   * @param max what the claim asks for
   * @return the grant, or empty when no control is set (the claim runs ungated)
   */
  public Optional<Grant> open(DSLContext ctx, int max) {
    QueueControlsRecord row =
        ctx.selectFrom(QUEUE_CONTROLS).where(QUEUE_CONTROLS.ACTIVE.isTrue()).forUpdate().fetchOne();
    if (row == null) {
      return Optional.empty();
    }
    // every slot row after the controls row (the exact gate's order): no fast claim is in flight
    // while this claim counts, and none starts until it ends
    org.jooq.Result<org.jooq.Record2<Long, String>> slots = lockSlots(ctx);
    if (Boolean.TRUE.equals(row.getPaused())) {
      return Optional.of(new Grant(0, Hold.PAUSED, PAUSED_RECHECK, engine.now(), row));
    }
    int allowed = max;
    Hold hold = null;
    Duration recheck = Duration.ZERO;
    int claimed = row.getMaxClaimed() == null ? 0 : claimedNow(ctx, engine.now());
    // the claim's time, read after the lock and the count: the claimed events of a domain's
    // controlled claims are in their order, and every task the count saw ended (its completion
    // committed before the count) carries an earlier time than the claims the count let through,
    // so the event log proves the limit (docs/controls.md)
    Instant now = engine.now();
    if (row.getMaxClaimed() != null) {
      int free = (int) Math.max(0, row.getMaxClaimed() - claimed);
      if (free < allowed) {
        allowed = free;
        hold = Hold.CONCURRENCY;
        recheck = LIMITED_RECHECK;
      }
    }
    if (row.getRateClaims() != null) {
      RateWindow w = RateWindow.of(row, now);
      long used = w.used();
      for (org.jooq.Record2<Long, String> s : slots) {
        used += RateWindow.of(row.getRatePeriodMs(), s.value1(), s.value2(), now).used();
      }
      int left = (int) Math.max(0, row.getRateClaims() - used);
      if (left < allowed) {
        allowed = left;
        hold = Hold.RATE;
        recheck = w.untilRoom(now);
      }
    }
    return Optional.of(new Grant(allowed, hold, recheck, now, row));
  }

  /**
   * Counts a controlled claim's tasks in the rate window (nothing to do without a rate limit).
   *
   * @param ctx the domain's context, in the claim's transaction (the row is locked)
   * @param grant the claim's grant
   * @param claimed how many tasks the claim took
   */
  public void spend(DSLContext ctx, Grant grant, int claimed) {
    if (grant.row().getRateClaims() == null || claimed == 0) {
      return;
    }
    RateWindow w = RateWindow.of(grant.row(), grant.now()).plus(claimed);
    ctx.update(QUEUE_CONTROLS)
        .set(QUEUE_CONTROLS.RATE_SLOT, w.slot())
        .set(QUEUE_CONTROLS.RATE_COUNTS, w.countsText())
        .execute();
  }

  /** Domain V14's slot rows (see {@link #lockSlots}). */
  private static final org.jooq.Table<org.jooq.Record> SLOTS =
      DSL.table(DSL.name(dev.ledger.schema.RenderMappedDsl.DOMAIN_TEMPLATE, "queue_control_slots"));

  private static final Field<Long> SLOT_RATE_SLOT =
      DSL.field(DSL.name("rate_slot"), org.jooq.impl.SQLDataType.BIGINT);
  private static final Field<String> SLOT_RATE_COUNTS =
      DSL.field(DSL.name("rate_counts"), org.jooq.impl.SQLDataType.CLOB);

  /**
   * Locks every slot row of the domain (domain V14), in slot order, and reads their rate windows:
   * taken after the controls row's lock by the exact gate and by every change of the controls, so
   * it waits for the fast claims in flight (at most one a row) and keeps new ones out until its
   * transaction ends (docs/controls.md).
   */
  private static org.jooq.Result<org.jooq.Record2<Long, String>> lockSlots(DSLContext ctx) {
    return ctx.select(SLOT_RATE_SLOT, SLOT_RATE_COUNTS)
        .from(SLOTS)
        .orderBy(DSL.field(DSL.name("slot")))
        .forUpdate()
        .fetch();
  }

  private static int claimedNow(DSLContext ctx, Instant now) {
    return ctx.selectCount()
        .from(TASKS)
        .where(TASKS.STATUS.eq(DSL.inline(CLAIMED)))
        .and(TASKS.LEASE_UNTIL.ge(DSL.val(now, TASKS.LEASE_UNTIL)))
        .fetchOne(0, int.class);
  }

  // ---------------------------------------------------------------------------------------------
  // setting and reading

  /**
   * Pauses or resumes a domain's claims. A resume notifies the domain's wake-up channel (at
   * commit), so listening worker pools claim at once.
   *
   * @param tx the operation's transaction
   * @param domain the domain (provisioned first when new)
   * @param paused true to pause, false to resume
   * @return the controls after the change
   * @throws InvalidInputException naming {@code domain}
   */
  public DomainControls pause(Tx tx, String domain, boolean paused) {
    Validation.domain(domain);
    String schema = engine.schemaForWrite(tx, domain);
    DSLContext ctx = tx.forSchema(schema);
    // the controls row, then every slot row: a pause waits for the fast claims in flight, and every
    // claim whose statement begins after its commit sees it
    ctx.insertInto(QUEUE_CONTROLS).defaultValues().onConflictDoNothing().execute();
    ctx.selectOne().from(QUEUE_CONTROLS).forUpdate().fetch();
    lockSlots(ctx);
    ctx.update(QUEUE_CONTROLS).set(QUEUE_CONTROLS.PAUSED, paused).execute();
    if (!paused) {
      wake(ctx, schema);
    }
    return read(ctx, domain);
  }

  /**
   * Sets or clears a domain's limits. A null argument leaves that limit as it is; {@code clear}
   * removes both first. Changing the rate limit starts its window afresh.
   *
   * @param tx the operation's transaction
   * @param domain the domain (provisioned first when new)
   * @param maxClaimed the concurrency limit, 1 to {@value #MAX_LIMIT}, or null
   * @param rateClaims the rate limit's claims, 1 to {@value #MAX_LIMIT}, or null (with {@code
   *     ratePeriod})
   * @param ratePeriod the rate limit's period, {@link #MIN_PERIOD} to {@link #MAX_PERIOD}, or null
   *     (with {@code rateClaims})
   * @param clear whether to remove both limits (then the others must be null)
   * @return the controls after the change
   * @throws InvalidInputException naming {@code domain}, {@code maxClaimed}, {@code rateClaims},
   *     {@code ratePeriod} or {@code clear}; nothing is written
   */
  public DomainControls limit(
      Tx tx,
      String domain,
      Integer maxClaimed,
      Integer rateClaims,
      Duration ratePeriod,
      boolean clear) {
    Validation.domain(domain);
    checkLimits(maxClaimed, rateClaims, ratePeriod, clear);
    String schema = engine.schemaForWrite(tx, domain);
    DSLContext ctx = tx.forSchema(schema);
    ctx.insertInto(QUEUE_CONTROLS).defaultValues().onConflictDoNothing().execute();
    QueueControlsRecord row = ctx.selectFrom(QUEUE_CONTROLS).forUpdate().fetchOne();
    lockSlots(ctx); // after the controls row, as the exact gate: no fast claim in flight
    if (clear) {
      row.setMaxClaimed(null);
      row.setRateClaims(null);
      row.setRatePeriodMs(null);
    }
    if (maxClaimed != null) {
      row.setMaxClaimed(maxClaimed.longValue());
    }
    boolean fresh = false;
    if (rateClaims != null) {
      Long periodMs = ratePeriod.toMillis();
      if (!periodMs.equals(row.getRatePeriodMs())) {
        row.setRateSlot(0L);
        row.setRateCounts("");
        fresh = true;
      }
      row.setRateClaims(rateClaims.longValue());
      row.setRatePeriodMs(periodMs);
    }
    if (row.getRateClaims() == null) {
      row.setRateSlot(0L);
      row.setRateCounts("");
      fresh = true;
    }
    if (fresh) {
      // the window starts afresh in every row it is spread over
      ctx.update(SLOTS).set(SLOT_RATE_SLOT, 0L).set(SLOT_RATE_COUNTS, "").execute();
    }
    ctx.update(QUEUE_CONTROLS)
        .set(QUEUE_CONTROLS.MAX_CLAIMED, row.getMaxClaimed())
        .set(QUEUE_CONTROLS.RATE_CLAIMS, row.getRateClaims())
        .set(QUEUE_CONTROLS.RATE_PERIOD_MS, row.getRatePeriodMs())
        .set(QUEUE_CONTROLS.RATE_SLOT, row.getRateSlot())
        .set(QUEUE_CONTROLS.RATE_COUNTS, row.getRateCounts())
        .execute();
    wake(ctx, schema); // a raised or removed limit: held-back pools claim again now
    return read(ctx, domain);
  }

  /**
   * Reads a domain's controls and how many of its tasks are claimed now.
   *
   * @param tx the read's connection context
   * @param domain the domain
   * @return the controls; nothing set (and 0 claimed) for a domain without a schema
   * @throws InvalidInputException naming {@code domain}
   */
  public DomainControls read(Tx tx, String domain) {
    Validation.domain(domain);
    Optional<String> schema = engine.schemaOf(tx, domain);
    if (schema.isEmpty()) {
      return new DomainControls(domain, false, null, null, null, 0);
    }
    return read(tx.forSchema(schema.get()), domain);
  }

  private DomainControls read(DSLContext ctx, String domain) {
    QueueControlsRecord row = ctx.selectFrom(QUEUE_CONTROLS).fetchOne();
    long claimed = claimedNow(ctx, engine.now());
    if (row == null) {
      return new DomainControls(domain, false, null, null, null, claimed);
    }
    return new DomainControls(
        domain,
        Boolean.TRUE.equals(row.getPaused()),
        row.getMaxClaimed() == null ? null : row.getMaxClaimed().intValue(),
        row.getRateClaims() == null ? null : row.getRateClaims().intValue(),
        row.getRatePeriodMs() == null ? null : Duration.ofMillis(row.getRatePeriodMs()),
        claimed);
  }

  private static void wake(DSLContext ctx, String schema) {
    // the channel the domain's triggers notify (domain V7); pools claim on "admitted"
    ctx.select(
            DSL.function(
                "pg_notify", Object.class, DSL.val(schema), DSL.inline(Status.ADMITTED.wire())))
        .fetch();
  }

  /**
   * Checks a change of limits.
   *
   * @throws InvalidInputException naming the first bad field
   */
  static void checkLimits(
      Integer maxClaimed, Integer rateClaims, Duration ratePeriod, boolean clear) {
    if (maxClaimed != null && (maxClaimed < 1 || maxClaimed > MAX_LIMIT)) {
      throw new InvalidInputException(
          "maxClaimed", "must be 1 to " + MAX_LIMIT + ", was " + maxClaimed);
    }
    if (rateClaims != null && (rateClaims < 1 || rateClaims > MAX_LIMIT)) {
      throw new InvalidInputException(
          "rateClaims", "must be 1 to " + MAX_LIMIT + ", was " + rateClaims);
    }
    if ((rateClaims == null) != (ratePeriod == null)) {
      throw new InvalidInputException(
          rateClaims == null ? "rateClaims" : "ratePeriod",
          "a rate limit needs both its claims and its period");
    }
    if (ratePeriod != null
        && (ratePeriod.compareTo(MIN_PERIOD) < 0 || ratePeriod.compareTo(MAX_PERIOD) > 0)) {
      throw new InvalidInputException(
          "ratePeriod", "must be " + MIN_PERIOD + " to " + MAX_PERIOD + ", was " + ratePeriod);
    }
    if (clear && (maxClaimed != null || rateClaims != null)) {
      throw new InvalidInputException("clear", "clears both limits: set no limit with it");
    }
    if (!clear && maxClaimed == null && rateClaims == null) {
      throw new InvalidInputException(
          "maxClaimed", "give a concurrency limit, a rate limit, or clear");
    }
  }
}

package dev.ledger.claim;

import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.QUEUE_CONTROLS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledger.Status;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.control.QueueControls;
import dev.ledger.kernel.RenderedStatement;
import dev.ledger.kernel.RenderedStatement.Slot;
import java.time.Instant;
import java.util.List;
import org.jooq.CommonTableExpression;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Record1;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * The claim of a domain with a queue control set, outside Citus (docs/controls.md, "How it is
 * enforced"): the controls row's lock and one statement that counts the domain's claimed tasks,
 * reads the rate window, claims at most what the controls allow (from {@link ClaimSql}'s walk of
 * the claim classes, candidates and claiming {@code UPDATE}) and spends the window, sent together
 * in one round trip ({@link #claimGated}). Rendered once per domain schema ({@link
 * RenderedStatement}). Stateless.
 */
final class GatedClaimSql {

  private GatedClaimSql() {}

  /** The slot rows of a domain (domain migration V14's {@code queue_control_slots}). */
  static final int SLOT_ROWS = 8;

  /**
   * The most tasks a claim may ask for on the fast path: the other slots' claims in flight are
   * counted as this many each.
   */
  static final int FAST_MAX = 32;

  /** The custom setting through which the fast path's lead statement names its slot row. */
  private static final String SLOT_SETTING = "ledger.gate_slot";

  /** Domain V14's slot rows (not generated: read and written by these statements only). */
  static final Table<Record> SLOTS_TABLE =
      DSL.table(DSL.name(dev.ledger.schema.RenderMappedDsl.DOMAIN_TEMPLATE, "queue_control_slots"));

  private static final Slot<Long> LEASE_MICROS = Slot.of("lease micros", SQLDataType.BIGINT);

  /**
   * 1: the claim's time is the database server's clock, read after the lock; 0: {@link
   * ClaimSql#NOW}.
   */
  private static final Slot<Integer> DB_CLOCK = Slot.of("db clock", SQLDataType.INTEGER);

  /** The claimed payload's text before its {@code until} value. */
  private static final Slot<String> PAYLOAD_HEAD =
      Slot.of("claimed payload head", SQLDataType.CLOB);

  /** The claimed payload's text after its {@code until} value. */
  private static final Slot<String> PAYLOAD_TAIL =
      Slot.of("claimed payload tail", SQLDataType.CLOB);

  /** {@code lock_timeout} of a claim that commits itself ({@link #claimGated} with bounds). */
  private static final Slot<String> LOCK_TIMEOUT = Slot.of("lock_timeout", SQLDataType.VARCHAR);

  /** {@code statement_timeout} of a claim that commits itself. */
  private static final Slot<String> STATEMENT_TIMEOUT =
      Slot.of("statement_timeout", SQLDataType.VARCHAR);

  /** The gated claim's slots, in the order {@link #claimGated} passes them. */
  private static final List<Slot<?>> SLOTS =
      List.of(
          ClaimSql.NOW,
          LEASE_MICROS,
          DB_CLOCK,
          ClaimSql.HOLDER,
          ClaimSql.MANIFEST,
          ClaimSql.RANK,
          ClaimSql.MAX,
          ClaimSql.WINDOW,
          PAYLOAD_HEAD,
          PAYLOAD_TAIL);

  /** The slots of the claim that commits itself: {@link #SLOTS}, then the two bounds. */
  private static final List<Slot<?>> SELF_COMMITTING_SLOTS =
      java.util.stream.Stream.concat(
              SLOTS.stream(), java.util.stream.Stream.of(LOCK_TIMEOUT, STATEMENT_TIMEOUT))
          .toList();

  private static final Field<Boolean> GATE_ACTIVE =
      DSL.field(DSL.name("gate_active"), SQLDataType.BOOLEAN);
  private static final Field<Boolean> GATE_PAUSED =
      DSL.field(DSL.name("gate_paused"), SQLDataType.BOOLEAN);
  private static final Field<Long> GATE_FREE = DSL.field(DSL.name("gate_free"), SQLDataType.BIGINT);
  private static final Field<Long> GATE_RATE_LEFT =
      DSL.field(DSL.name("gate_rate_left"), SQLDataType.BIGINT);
  private static final Field<Long> GATE_FIRST_BUCKET =
      DSL.field(DSL.name("gate_first_bucket"), SQLDataType.BIGINT);
  private static final Field<Long> GATE_BUCKET_MS =
      DSL.field(DSL.name("gate_bucket_ms"), SQLDataType.BIGINT);
  private static final Field<Long> GATE_NOW_MS =
      DSL.field(DSL.name("gate_now_ms"), SQLDataType.BIGINT);
  private static final Field<Boolean> GATE_SLOW =
      DSL.field(DSL.name("gate_slow"), SQLDataType.BOOLEAN);

  /** What the gated claim returns: {@link ClaimSql#CLAIMED}'s columns, then the gate's. */
  private static final Field<?>[] GATED_CLAIMED = gatedFields();

  private static Field<?>[] gatedFields() {
    List<Field<?>> out = new java.util.ArrayList<>(List.of(ClaimSql.CLAIMED));
    out.addAll(
        List.of(
            GATE_ACTIVE,
            GATE_PAUSED,
            GATE_FREE,
            GATE_RATE_LEFT,
            GATE_FIRST_BUCKET,
            GATE_BUCKET_MS,
            GATE_NOW_MS,
            GATE_SLOW));
    return out.toArray(Field<?>[]::new);
  }

  /** The values a gated claim binds. */
  record GatedArgs(
      Instant now,
      long leaseMicros,
      boolean dbClock,
      String holder,
      String manifest,
      long rank,
      String payloadHead,
      String payloadTail) {}

  /**
   * What the gate saw, read after the controls row was locked: whether a control is set, the pause,
   * the room under the concurrency limit (null without one), the room in the rate window (null
   * without a rate limit), the window's oldest bucket holding a claim, its bucket length and the
   * claim's time in epoch milliseconds (for when the window has room again), and whether a fast
   * claim found no free slot row or too little margin under a limit (it claimed nothing: the claim
   * must pass the exact gate, {@code claimGated} with {@code fast} false).
   */
  record GateState(
      boolean active,
      boolean paused,
      Long free,
      Long rateLeft,
      Long firstBucket,
      Long bucketMs,
      long nowMs,
      boolean slow) {}

  /** What one gated claim statement did. */
  record GatedClaim(List<TasksRecord> rows, int windowRows, GateState gate) {}

  private static final String TIME_FORMAT = "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'";

  /**
   * Claims up to {@code max} tasks of a domain with a queue control set, in one round trip: a lead
   * statement locks the controls row ({@code FOR UPDATE}); the claim statement, sent with it and
   * run after it (so its snapshot sees every claim and completion committed before the lock),
   * counts the domain's claimed tasks with a live lease, reads the rate window, claims at most what
   * the controls allow, and counts what it took in the window. The claim's time is read after the
   * lock and the count: the database server's clock when {@code dbClock} (the ledger's clock is the
   * system's), else {@link GatedArgs#now}.
   *
   * <p>With {@code bounds} (a claim that commits itself, {@link dev.ledger.kernel.Tx#commitItself},
   * on a connection in autocommit mode) a first statement sets {@code lock_timeout} and {@code
   * statement_timeout} for the implicit transaction the three statements run in: the lock's wait
   * and the claim are bounded, and the server commits, releasing the lock, before the answer is
   * sent. Without, the statements run in the operation's transaction and the lock is held to its
   * end.
   *
   * <p>The exact gate ({@code fast} false) locks the controls row and then every slot row (domain
   * V14, in slot order), so no fast claim is in flight while it counts, and counts what it took in
   * the controls row's window. The fast path ({@code fast} true, a claim of at most {@link
   * #FAST_MAX} that commits itself) locks one free slot row ({@code SKIP LOCKED}) and reads the
   * controls row without locking it: at most {@link #SLOT_ROWS} fast claims are in flight, each of
   * at most {@link #FAST_MAX}, so when the count and the window leave room for the others' {@code
   * (SLOT_ROWS - 1) * FAST_MAX} and its own {@code max}, it claims {@code max} and counts it in its
   * slot row's window; else (or with no slot row free) it claims nothing and says {@link
   * GateState#slow}.
   *
   * @param bounds {@code lock_timeout} and {@code statement_timeout} as {@link
   *     dev.ledger.kernel.Tx#commitItself} gives them, or null inside a transaction
   * @param fast whether to take the fast path (only with {@code bounds}, and {@code max <=} {@link
   *     #FAST_MAX})
   */
  static GatedClaim claimGated(
      RenderedStatement.Cache statements,
      DSLContext ctx,
      GatedArgs a,
      int max,
      int window,
      String[] bounds,
      boolean fast) {
    boolean self = bounds != null;
    if (fast && (!self || max > FAST_MAX)) {
      throw new IllegalArgumentException(
          "the fast path is for a claim of at most " + FAST_MAX + " that commits itself");
    }
    RenderedStatement claim =
        statements.get(
            ctx,
            fast ? "claim gated fast" : self ? "claim gated, committing itself" : "claim gated",
            () ->
                fast
                    ? List.of(boundsLead(), slotLead())
                    : self
                        ? List.of(boundsLead(), lockLead(), lockSlotsLead())
                        : List.of(lockLead(), lockSlotsLead()),
            () -> gatedTemplate(fast),
            self ? SELF_COMMITTING_SLOTS : SLOTS);
    Object[] values = {
      a.now(),
      a.leaseMicros(),
      a.dbClock() ? 1 : 0,
      a.holder(),
      a.manifest(),
      a.rank(),
      max,
      window,
      a.payloadHead(),
      a.payloadTail(),
      self ? bounds[0] : null,
      self ? bounds[1] : null
    };
    Object[] bound = self ? values : java.util.Arrays.copyOf(values, SLOTS.size());
    List<TasksRecord> rows = new java.util.ArrayList<>();
    int windowRows = 0;
    GateState gate = null;
    for (Record r : claim.fetch(ctx, GATED_CLAIMED, bound)) {
      windowRows = r.get(ClaimSql.WINDOW_ROWS);
      gate =
          new GateState(
              Boolean.TRUE.equals(r.get(GATE_ACTIVE)),
              Boolean.TRUE.equals(r.get(GATE_PAUSED)),
              r.get(GATE_FREE),
              r.get(GATE_RATE_LEFT),
              r.get(GATE_FIRST_BUCKET),
              r.get(GATE_BUCKET_MS),
              r.get(GATE_NOW_MS),
              Boolean.TRUE.equals(r.get(GATE_SLOW)));
      if (r.get(TASKS.ID) != null) {
        TasksRecord row = r.into(TASKS);
        row.changed(false);
        rows.add(row);
      }
    }
    return new GatedClaim(rows, windowRows, gate);
  }

  /** The statement that sets a transaction's bounds (a claim that commits itself). */
  private static org.jooq.Query boundsLead() {
    return DSL.select(
        setConfig("lock_timeout", LOCK_TIMEOUT), setConfig("statement_timeout", STATEMENT_TIMEOUT));
  }

  private static Field<String> setConfig(String setting, Slot<String> value) {
    return DSL.function(
        "set_config", String.class, DSL.inline(setting), value.field(), DSL.inline(true));
  }

  /** The controls row's lock: the claims of a controlled domain take turns. */
  private static org.jooq.Query lockLead() {
    return DSL.selectOne().from(QUEUE_CONTROLS).where(QUEUE_CONTROLS.ACTIVE.isTrue()).forUpdate();
  }

  /**
   * Every slot row's lock, in slot order (after the controls row's): the exact gate waits for the
   * fast claims in flight and excludes new ones until it ends.
   */
  private static org.jooq.Query lockSlotsLead() {
    return DSL.query("select slot from {0} order by slot for update", SLOTS_TABLE);
  }

  /**
   * The fast path's lock: one free slot row, its number kept in {@link #SLOT_SETTING} for the
   * transaction (empty when every row is locked).
   */
  private static org.jooq.Query slotLead() {
    return DSL.query(
        "select set_config('"
            + SLOT_SETTING
            + "', coalesce(max(s.slot)::text, ''), true) from (select slot from {0}"
            + " order by slot for update skip locked limit 1) as s",
        SLOTS_TABLE);
  }

  /**
   * The window's counts of the slot rows (V14) in a claim's window, and their oldest bucket (each
   * row's window as {@code RateWindow.of} moves it), computed once per statement: the claim's
   * bucket from {@code gate_time} and {@code gate_row} by scalar subqueries, so the planner costs
   * the slot rows once (joined to the controls row it multiplied the estimates of two tables
   * without statistics past {@code jit_above_cost}: seconds of JIT compiling a 1 ms statement).
   * {@code {0}} is the slot rows' table.
   */
  private static String slotsWindow(int b) {
    String bucket = "r.rate_slot - (cardinality(x.a) - u.i)";
    return "select coalesce(sum(u.n), 0) as used_n, min("
        + bucket
        + ") filter (where u.n > 0) as first_b from {0} as r cross join lateral (select"
        + " cast(string_to_array(nullif(r.rate_counts, ''), ',') as bigint[]) as a) as x cross"
        + " join lateral unnest(x.a) with ordinality as u(n, i) where "
        + bucket
        + " >= greatest((select t.now_ms from gate_time as t) / (select c.bucket_ms from gate_row"
        + " as c), r.rate_slot) - "
        + b;
  }

  /** The gated claim statement (see {@link #claimGated}). */
  private static org.jooq.Query gatedTemplate(boolean fast) {
    int b = QueueControls.BUCKETS;
    CommonTableExpression<Record> time =
        DSL.name("gate_time")
            .asMaterialized(
                DSL.resultQuery(
                    "select x.ts, to_char(x.ts at time zone 'UTC', "
                        + TIME_FORMAT
                        + ") as g_at, to_char((x.ts + cast({0} as double precision)"
                        + " * interval '1 microsecond') at time zone 'UTC', "
                        + TIME_FORMAT
                        + ") as g_until, cast(floor(extract(epoch from x.ts) * 1000) as bigint)"
                        + " as now_ms from (select case when {1} = 1 then clock_timestamp()"
                        + " else cast({2} as timestamp with time zone) end as ts) as x",
                    LEASE_MICROS.field(),
                    DB_CLOCK.field(),
                    ClaimSql.NOW.field()));
    CommonTableExpression<Record> row =
        DSL.name("gate_row")
            .asMaterialized(
                DSL.resultQuery(
                    "select q.paused, q.max_claimed, q.rate_claims, q.rate_slot,"
                        + " greatest(1, (q.rate_period_ms + "
                        + (b - 1)
                        + ") / "
                        + b
                        + ") as bucket_ms,"
                        + " cast(string_to_array(nullif(q.rate_counts, ''), ',') as bigint[])"
                        + " as counts from {0} as q where q.active",
                    QUEUE_CONTROLS));
    // fast: the slot row the lead statement locked, read here (the controls row is not locked)
    CommonTableExpression<Record> mine =
        DSL.name("gate_mine")
            .asMaterialized(
                DSL.resultQuery(
                    "select m.slot as mine, m.rate_slot as m_stored,"
                        + " cast(string_to_array(nullif(m.rate_counts, ''), ',') as bigint[])"
                        + " as m_counts from {0} as m where m.slot = cast(nullif(current_setting('"
                        + SLOT_SETTING
                        + "', true), '') as smallint)",
                    SLOTS_TABLE));
    CommonTableExpression<Record> slots =
        DSL.name("gate_slots").asMaterialized(DSL.resultQuery(slotsWindow(b), SLOTS_TABLE));
    // the bucket of the i-th count (1-based): the stored slot's, minus the counts after it
    String bucket = "v.stored_slot - (cardinality(v.counts) - u.i)";
    String inWindow = bucket + " >= v.slot - " + b;
    // the others' claims in flight that a fast claim cannot see: one per other slot row, each of at
    // most FAST_MAX
    long margin = (long) (SLOT_ROWS - 1) * FAST_MAX;
    String allowedSql =
        fast
            ? "case when not w.active then {0} when w.paused then 0 when w.mine is not null and"
                + " coalesce(w.free - "
                + margin
                + " >= {0}, true) and coalesce(w.rate_left - "
                + margin
                + " >= {0}, true) then {0} else 0 end"
            : "case when not w.active then {0} when w.paused then 0"
                + " else least({0}, coalesce(w.free, {0}), coalesce(w.rate_left, {0})) end";
    String slow = fast ? "(w.active and not w.paused and not (" + allowedSql + " > 0))" : "false";
    CommonTableExpression<Record> gate =
        DSL.name("gate")
            .asMaterialized(
                DSL.resultQuery(
                    "select w.*, cast("
                        + allowedSql
                        + " as integer) as allowed, "
                        + slow
                        + " as slow from (select v.*, case when"
                        + " v.rate_claims is not null then greatest(0, v.rate_claims - v.slots_used"
                        + " - (select coalesce(sum(u.n), 0) from unnest(v.counts) with ordinality"
                        + " as u(n, i) where "
                        + inWindow
                        + ")) end as rate_left, least(v.slots_first, (select min("
                        + bucket
                        + ") from unnest(v.counts) with ordinality as u(n, i) where u.n > 0 and "
                        + inWindow
                        + ")) as first_bucket from (select (c.paused is not null) as active,"
                        + " coalesce(c.paused, false) as paused, t.g_at, t.g_until, t.now_ms,"
                        + " c.bucket_ms, c.rate_claims, c.rate_slot as stored_slot, c.counts,"
                        + " greatest(t.now_ms / c.bucket_ms, c.rate_slot) as slot, case when"
                        + " c.max_claimed is not null then greatest(0, c.max_claimed - (select"
                        + " count(*) from {1} as k where k.status = '"
                        + Status.CLAIMED.wire()
                        + "' and k.lease_until >= t.g_at)) end as free, coalesce(s.used_n, 0) as slots_used,"
                        + " s.first_b as slots_first"
                        + (fast
                            ? ", m.mine, m.m_stored, m.m_counts, greatest(t.now_ms / c.bucket_ms,"
                                + " m.m_stored) as m_slot"
                            : "")
                        + " from gate_time as t left join gate_row as c on true"
                        + (fast ? " left join gate_mine as m on true" : "")
                        + " cross join gate_slots as s"
                        + " offset 0) as v offset 0) as w",
                    ClaimSql.MAX.field(),
                    TASKS));
    Field<Instant> now = DSL.field("(select gate.g_at from gate)", TASKS.LEASE_UNTIL.getDataType());
    Field<Instant> until =
        DSL.field("(select gate.g_until from gate)", TASKS.LEASE_UNTIL.getDataType());
    Field<Integer> allowed = DSL.field("(select gate.allowed from gate)", SQLDataType.INTEGER);
    Field<JsonNode> payload =
        DSL.field(
            "({0} || (select gate.g_until from gate) || {1})",
            EVENTS.PAYLOAD.getDataType(), PAYLOAD_HEAD.field(), PAYLOAD_TAIL.field());
    ClaimSql.ClaimWindow cw = ClaimSql.claimWindowCtes(now, DSL.noCondition());
    CommonTableExpression<Record1<String>> candidate =
        ClaimSql.claimCandidates(cw.ids(), false, now, allowed);
    CommonTableExpression<TasksRecord> claimed = ClaimSql.claimedCte(candidate, until);
    CommonTableExpression<Record1<Long>> logged = ClaimSql.loggedCte(claimed, now, payload);
    // the rate window after the claim (RateWindow.plus): the stored counts of the buckets still in
    // the window, zeros before them and for the buckets since, what the claim took in the last;
    // array operations only (a set-returning function per bucket made the planner's estimate
    // cross the JIT threshold: hundreds of milliseconds compiling a 1 ms statement). A slice's
    // colon is followed by a space: jOOQ reads ":name" in plain SQL as a named parameter
    int n = b + 1;
    // fast: the claim's take goes to its slot row's window; else to the controls row's
    String slot = fast ? "g.m_slot" : "g.slot";
    String stored = fast ? "g.m_stored" : "g.stored_slot";
    String counts = fast ? "g.m_counts" : "g.counts";
    CommonTableExpression<Record> spent =
        DSL.name("gate_spent")
            .as(
                DSL.resultQuery(
                    "update {0} as q set rate_slot = s.slot, rate_counts = s.counts_text from"
                        + " (select "
                        + slot
                        + " as slot, array_to_string(x.arr[1 : "
                        + b
                        + "] || (x.arr["
                        + n
                        + "] + n.claimed), ',') as counts_text from gate as g cross join"
                        + " (select count(*) as claimed from claimed) as n cross join lateral"
                        + " (select array_fill(cast(0 as bigint), array["
                        + n
                        + " - coalesce(cardinality(k.kept), 0) - k.trail]) || k.kept ||"
                        + " array_fill(cast(0 as bigint), array[k.trail]) as arr from (select"
                        + " cast(least("
                        + n
                        + ", "
                        + slot
                        + " - "
                        + stored
                        + ") as integer) as trail, "
                        + counts
                        + "[cast(least("
                        + "coalesce(cardinality("
                        + counts
                        + "), 0) + 1, greatest(1,"
                        + " coalesce(cardinality("
                        + counts
                        + "), 0) + "
                        + slot
                        + " - "
                        + b
                        + " - "
                        + stored
                        + ")) as integer) : coalesce(cardinality("
                        + counts
                        + "), 0)] as"
                        + " kept) as k) as"
                        + " x where g.active and g.rate_claims is not null and n.claimed > 0) as s"
                        + (fast
                            ? " where q.slot = (select g.mine from gate as g) returning q.slot"
                            : " where q.active returning q.only_row"),
                    fast ? SLOTS_TABLE : QUEUE_CONTROLS));
    Table<?> size =
        DSL.select(
                DSL.count().as(ClaimSql.WINDOW_ROWS.getName()),
                DSL.inline(true).as(ClaimSql.CONTROLS_ON.getName()))
            .from(cw.ids())
            .asTable("n");
    List<Field<?>> out = new java.util.ArrayList<>();
    for (Field<?> f : TASKS.fields()) {
      out.add(claimed.field(f));
    }
    out.add(size.field(ClaimSql.WINDOW_ROWS.getName()));
    out.add(size.field(ClaimSql.CONTROLS_ON.getName()));
    out.add(DSL.field(DSL.name("gate", "active"), SQLDataType.BOOLEAN).as(GATE_ACTIVE.getName()));
    out.add(DSL.field(DSL.name("gate", "paused"), SQLDataType.BOOLEAN).as(GATE_PAUSED.getName()));
    out.add(DSL.field(DSL.name("gate", "free"), SQLDataType.BIGINT).as(GATE_FREE.getName()));
    out.add(
        DSL.field(DSL.name("gate", "rate_left"), SQLDataType.BIGINT).as(GATE_RATE_LEFT.getName()));
    out.add(
        DSL.field(DSL.name("gate", "first_bucket"), SQLDataType.BIGINT)
            .as(GATE_FIRST_BUCKET.getName()));
    out.add(
        DSL.field(DSL.name("gate", "bucket_ms"), SQLDataType.BIGINT).as(GATE_BUCKET_MS.getName()));
    out.add(DSL.field(DSL.name("gate", "now_ms"), SQLDataType.BIGINT).as(GATE_NOW_MS.getName()));
    out.add(DSL.field(DSL.name("gate", "slow"), SQLDataType.BOOLEAN).as(GATE_SLOW.getName()));
    org.jooq.WithStep head = DSL.with(time).with(row).with(slots);
    if (fast) {
      head = head.with(mine);
    }
    return head.with(gate)
        .with(cw.classes())
        .with(cw.ids())
        .with(candidate)
        .with(claimed)
        .with(logged)
        .with(spent)
        .select(out)
        .from(size)
        .crossJoin(DSL.table(DSL.name("gate")))
        .leftJoin(claimed)
        .on(DSL.trueCondition());
  }
}

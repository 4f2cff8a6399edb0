package dev.ledger.claim;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static dev.ledger.codegen.db.ledger_template.Tables.CLAIM_CLASSES;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledger.Label;
import dev.ledger.Status;
import dev.ledger.codegen.db.ledger_template.tables.Tasks;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.control.QueueControls;
import dev.ledger.event.EventKind;
import dev.ledger.kernel.RenderedStatement;
import dev.ledger.kernel.RenderedStatement.Slot;
import java.time.Instant;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import org.jooq.CommonTableExpression;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Record1;
import org.jooq.Record2;
import org.jooq.Record3;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * The SQL of a claim: the candidate CTEs that walk the domain's claim classes ({@link
 * #claimCandidates}), the claiming {@code UPDATE}, the check of a full window, and the claim filter
 * ({@link #claimable}) that a claim by id checks too; the claim of a domain with a queue control
 * set is {@link GatedClaimSql}'s, built from the same parts. Statements are rendered once per
 * domain schema ({@link RenderedStatement}). Stateless.
 */
public final class ClaimSql {

  private static final String COMPLETED = Status.COMPLETED.wire();
  private static final String INVALIDATED = Status.INVALIDATED.wire();

  /**
   * The largest window a claim grows to when concurrent transactions hold the rows of a smaller one
   * (see {@link Claims#claimBatch}): far more locked rows than any pool has connections.
   */
  public static final int MAX_CLAIM_WINDOW = 1 << 20;

  private ClaimSql() {}

  static final Slot<Instant> NOW = Slot.of("now", TASKS.LEASE_UNTIL.getDataType());
  private static final Slot<Instant> UNTIL = Slot.of("until", TASKS.LEASE_UNTIL.getDataType());
  static final Slot<String> HOLDER = Slot.of("holder", TASKS.HOLDER.getDataType());
  static final Slot<String> MANIFEST = Slot.of("manifest", SQLDataType.CLOB);
  static final Slot<Long> RANK = Slot.of("handling rank", TASKS.LABEL_RANK.getDataType());
  static final Slot<Integer> MAX = Slot.of("max", SQLDataType.INTEGER);
  static final Slot<Integer> WINDOW = Slot.of("window", SQLDataType.INTEGER);

  /** 1 for a claim that passed the domain's gate ({@code QueueControls}), 0 otherwise. */
  private static final Slot<Integer> GATED = Slot.of("gated", SQLDataType.INTEGER);

  private static final Slot<JsonNode> PAYLOAD =
      Slot.of("claimed payload", EVENTS.PAYLOAD.getDataType());

  /** The values every claim statement of one claim binds. */
  record ClaimArgs(
      Instant now, Instant until, String holder, String manifest, long rank, JsonNode payload) {}

  /** The column after the claimed row's: how many candidates the claim's window held. */
  static final Field<Integer> WINDOW_ROWS = DSL.field(DSL.name("window_rows"), SQLDataType.INTEGER);

  /** The column after {@link #WINDOW_ROWS}: whether a queue control is set in the domain. */
  static final Field<Boolean> CONTROLS_ON = DSL.field(DSL.name("controls_on"), SQLDataType.BOOLEAN);

  /**
   * What the claim returns: every column of a claimed row, then {@link #WINDOW_ROWS} and {@link
   * #CONTROLS_ON}.
   */
  static final Field<?>[] CLAIMED = claimedFields();

  private static Field<?>[] claimedFields() {
    Field<?>[] task = TASKS.fields();
    Field<?>[] out = java.util.Arrays.copyOf(task, task.length + 2);
    out[task.length] = WINDOW_ROWS;
    out[task.length + 1] = CONTROLS_ON;
    return out;
  }

  /**
   * What one claim statement did: the rows it claimed, as they are after the claim, and how many
   * candidates its window held (when that is the whole window and it claimed fewer than asked,
   * concurrent claimers hold rows of it: {@link Claims} claims again from a larger one), and
   * whether a queue control is set in the domain (an ungated claim then claimed nothing: {@link
   * Claims} passes the gate and claims again).
   */
  record Claimed(List<TasksRecord> rows, int windowRows, boolean controlsOn) {}

  /** Claim order: priority descending, then oldest first, then by id (as the events are). */
  static final Comparator<TasksRecord> CLAIM_ORDER =
      Comparator.comparingLong(TasksRecord::getPriority)
          .reversed()
          .thenComparing(TasksRecord::getCreated)
          .thenComparing(TasksRecord::getId);

  /**
   * The rows a claim takes, as a CTE {@code candidate(id)}: up to {@code max} claimable tasks of
   * the {@code window}, locked {@code FOR UPDATE SKIP LOCKED}, in claim order. Rather than filter
   * every open task in claim order (which costs as many rows as there are tasks the claimer cannot
   * take ahead of the first it can), the claim reads the domain's {@code claim_classes} its
   * handling level and manifest admit, walks {@code tasks_claim_class} once per admitted class
   * (tasks with an open dependency are not in that index), merges the walks in claim order into a
   * window of {@link #claimWindow} rows ({@link #claimWindowCtes}), and locks from the window after
   * checking every condition again on the current row versions. The window only holds rows that
   * were claimable when the statement began, so it comes up short only when more claimers than the
   * window's slack are locking the same rows at once; {@link Claims} then sees the window full
   * ({@link Claimed#windowRows}) and claims again from a larger one, so a claim never comes back
   * empty while a task it may take is free. Bound: {@link #NOW}, {@link #MANIFEST}, {@link #RANK},
   * {@link #MAX}.
   */
  private static CommonTableExpression<Record1<String>> claimCandidates(
      CommonTableExpression<Record1<String>> windowed, boolean citus) {
    return claimCandidates(windowed, citus, NOW.field(), MAX.field());
  }

  static CommonTableExpression<Record1<String>> claimCandidates(
      CommonTableExpression<Record1<String>> windowed,
      boolean citus,
      Field<Instant> now,
      Field<Integer> max) {
    Tasks t = TASKS.as("t");
    return DSL.name("candidate")
        .fields("id")
        .asMaterialized(
            DSL.select(t.ID)
                .from(t)
                .where(t.ID.in(DSL.select(windowed.field("id", String.class)).from(windowed)))
                .and(claimable(t, now, MANIFEST.field(), RANK.field(), citus))
                .orderBy(t.PRIORITY.desc(), t.CREATED.asc())
                .limit(max)
                .forUpdate()
                .of(t)
                .skipLocked());
  }

  /** The claim's walk: the admitted claim classes, and the window of candidate ids. */
  record ClaimWindow(
      CommonTableExpression<Record2<Long, String>> classes,
      CommonTableExpression<Record1<String>> ids) {}

  /**
   * The CTEs {@code classes} and {@code window} of the claim. An ungated claim ({@link #GATED} 0)
   * of a domain with a queue control set admits no class, so it claims nothing and reads no task:
   * the one check the uncontrolled claim pays (an uncorrelated test of a table of at most one row).
   * Bound: {@link #NOW}, {@link #MANIFEST}, {@link #RANK}, {@link #WINDOW}, {@link #GATED}.
   */
  private static ClaimWindow claimWindowCtes() {
    return claimWindowCtes(
        NOW.field(), GATED.field().eq(DSL.inline(1)).or(QueueControls.noneActive()));
  }

  static ClaimWindow claimWindowCtes(Field<Instant> now, Condition admitted) {
    dev.ledger.codegen.db.ledger_template.tables.ClaimClasses k = CLAIM_CLASSES.as("k");
    CommonTableExpression<Record2<Long, String>> classes =
        DSL.name("classes")
            .fields("label_rank", "requirements_md5")
            .asMaterialized(
                DSL.select(k.LABEL_RANK, k.REQUIREMENTS_MD5)
                    .from(k)
                    .where(
                        k.LABEL_RANK
                            .le(RANK.field())
                            .and(
                                k.REQUIREMENTS
                                    .eq(DSL.inline("[]"))
                                    .or(
                                        DSL.condition(
                                            "{0}::jsonb <@ {1}::jsonb",
                                            k.REQUIREMENTS, MANIFEST.field()))))
                    .and(admitted));
    Tasks w = TASKS.as("w");
    Field<String> md5 = DSL.field("md5({0})", String.class, w.REQUIREMENTS);
    Table<Record3<String, Long, Instant>> walk =
        DSL.lateral(
                DSL.select(w.ID, w.PRIORITY, w.CREATED)
                    .from(w)
                    .where(w.LABEL_RANK.eq(classes.field("label_rank", Long.class)))
                    .and(md5.eq(classes.field("requirements_md5", String.class)))
                    .and(
                        w.STATUS.in(
                            DSL.inline(Status.ADMITTED.wire()), DSL.inline(Status.CLAIMED.wire())))
                    .and(DSL.not(w.BLOCKED))
                    .and(w.STATUS.eq(DSL.inline(Status.ADMITTED.wire())).or(w.LEASE_UNTIL.lt(now)))
                    // Only index conditions and the cheap lease test here: with the dependency and
                    // continuation subqueries in this WHERE, PostgreSQL estimated one row per class
                    // and read whole classes through a bitmap scan and a sort (490 ms at 100,000
                    // tasks, bench B3). The candidate step checks both again on the few rows kept.
                    .orderBy(w.PRIORITY.desc(), w.CREATED.asc())
                    .limit(WINDOW.field()))
            .as("x");
    CommonTableExpression<Record1<String>> windowed =
        DSL.name("window")
            .fields("id")
            .asMaterialized(
                DSL.select(walk.field(w.ID))
                    .from(classes)
                    .crossJoin(walk)
                    .orderBy(walk.field(w.PRIORITY).desc(), walk.field(w.CREATED).asc())
                    .limit(WINDOW.field()));
    return new ClaimWindow(classes, windowed);
  }

  /**
   * Claims up to {@code max} tasks from a window of {@code window} candidates in one statement: the
   * {@code UPDATE} of the candidates, the {@code INSERT} of their {@code claimed} events (in claim
   * order) and the read of the claimed rows and the window's size, so a claim is this statement and
   * its commit.
   *
   * <p>With {@code bounds} (a claim that commits itself, {@link dev.ledger.kernel.Tx#commitItself},
   * on a connection in autocommit mode; not on Citus) a lead statement sent in the same execute
   * sets {@code lock_timeout} and {@code statement_timeout} for the implicit transaction both run
   * in, and the server commits the claim before it answers: the claim is this one round trip.
   *
   * @param bounds {@code lock_timeout} and {@code statement_timeout} as {@link
   *     dev.ledger.kernel.Tx#commitItself} gives them, or null inside a transaction
   */
  static Claimed claimIn(
      RenderedStatement.Cache statements,
      DSLContext ctx,
      ClaimArgs a,
      int max,
      int window,
      boolean citus,
      boolean gated,
      String[] bounds) {
    boolean self = bounds != null;
    if (self && citus) {
      throw new IllegalArgumentException("a claim on Citus cannot commit itself");
    }
    RenderedStatement claim =
        statements.get(
            ctx,
            citus ? "claim on citus" : self ? "claim, committing itself" : "claim",
            () -> self ? List.of(boundsLead()) : List.<org.jooq.Query>of(),
            () -> {
              ClaimWindow cw = claimWindowCtes();
              CommonTableExpression<Record1<String>> candidate = claimCandidates(cw.ids(), citus);
              CommonTableExpression<TasksRecord> claimed = claimedCte(candidate, UNTIL.field());
              CommonTableExpression<Record1<Long>> logged =
                  loggedCte(claimed, NOW.field(), PAYLOAD.field());
              Table<?> size =
                  DSL.select(
                          DSL.count().as(WINDOW_ROWS.getName()),
                          QueueControls.anyActive().as(CONTROLS_ON.getName()))
                      .from(cw.ids())
                      .asTable("n");
              List<Field<?>> out = new java.util.ArrayList<>();
              for (Field<?> f : TASKS.fields()) {
                out.add(claimed.field(f));
              }
              out.add(size.field(WINDOW_ROWS.getName()));
              out.add(size.field(CONTROLS_ON.getName()));
              if (citus) {
                // Citus plans the INSERT of the events apart from the rest (an INSERT ... SELECT
                // through intermediate results, which failed here): without it the statement
                // goes whole to the domain's node, and the events follow in their own statements
                return DSL.with(cw.classes())
                    .with(cw.ids())
                    .with(candidate)
                    .with(claimed)
                    .select(out)
                    .from(size)
                    .leftJoin(claimed)
                    .on(DSL.trueCondition());
              }
              return DSL.with(cw.classes())
                  .with(cw.ids())
                  .with(candidate)
                  .with(claimed)
                  .with(logged)
                  .select(out)
                  .from(size)
                  .leftJoin(claimed)
                  .on(DSL.trueCondition());
            },
            citus
                ? List.of(NOW, UNTIL, HOLDER, MANIFEST, RANK, MAX, WINDOW, GATED)
                : self
                    ? List.of(
                        NOW,
                        UNTIL,
                        HOLDER,
                        MANIFEST,
                        RANK,
                        MAX,
                        WINDOW,
                        PAYLOAD,
                        GATED,
                        LOCK_TIMEOUT,
                        STATEMENT_TIMEOUT)
                    : List.of(NOW, UNTIL, HOLDER, MANIFEST, RANK, MAX, WINDOW, PAYLOAD, GATED));
    List<TasksRecord> rows = new java.util.ArrayList<>();
    int windowRows = 0;
    boolean controlsOn = false;
    int gate = gated ? 1 : 0;
    Object[] binds =
        citus
            ? new Object[] {
              a.now(), a.until(), a.holder(), a.manifest(), a.rank(), max, window, gate
            }
            : new Object[] {
              a.now(), a.until(), a.holder(), a.manifest(), a.rank(), max, window, a.payload(), gate
            };
    if (self) {
      // the statement that commits itself binds its two bounds after the claim's values
      binds = java.util.Arrays.copyOf(binds, binds.length + 2);
      binds[binds.length - 2] = bounds[0];
      binds[binds.length - 1] = bounds[1];
    }
    for (Record r : claim.fetch(ctx, CLAIMED, binds)) {
      windowRows = r.get(WINDOW_ROWS);
      controlsOn = Boolean.TRUE.equals(r.get(CONTROLS_ON));
      if (r.get(TASKS.ID) != null) {
        TasksRecord row = r.into(TASKS);
        row.changed(false);
        rows.add(row);
      }
    }
    if (citus) {
      logClaims(ctx, rows, a);
    }
    return new Claimed(rows, windowRows, controlsOn);
  }

  static final Slot<String> LOCK_TIMEOUT = Slot.of("lock_timeout", SQLDataType.VARCHAR);
  static final Slot<String> STATEMENT_TIMEOUT = Slot.of("statement_timeout", SQLDataType.VARCHAR);

  /**
   * The statement sent ahead of a claim that commits itself: {@code select
   * set_config('lock_timeout', ?, true), set_config('statement_timeout', ?, true)}, for the
   * implicit transaction the claim runs in.
   */
  static org.jooq.Query boundsLead() {
    return DSL.select(
        setConfig("lock_timeout", LOCK_TIMEOUT), setConfig("statement_timeout", STATEMENT_TIMEOUT));
  }

  private static Field<String> setConfig(String setting, Slot<String> value) {
    return DSL.function(
        "set_config", String.class, DSL.inline(setting), value.field(), DSL.inline(true));
  }

  /** The claiming {@code UPDATE} of the candidates, as the CTE {@code claimed}. */
  static CommonTableExpression<TasksRecord> claimedCte(
      CommonTableExpression<Record1<String>> candidate, Field<Instant> until) {
    return DSL.name("claimed")
        .as(
            DSL.update(TASKS)
                .set(TASKS.STATUS, DSL.inline(Status.CLAIMED.wire()))
                .set(TASKS.HOLDER, HOLDER.field())
                .set(TASKS.LEASE_UNTIL, until)
                .set(TASKS.ATTEMPTS, TASKS.ATTEMPTS.plus(DSL.inline(1L)))
                .from(candidate)
                .where(TASKS.ID.eq(candidate.field("id", String.class)))
                .returning(TASKS.fields()));
  }

  /**
   * The {@code INSERT} of the claimed rows' {@code claimed} events in claim order: {@code logged}.
   */
  static CommonTableExpression<Record1<Long>> loggedCte(
      CommonTableExpression<TasksRecord> claimed, Field<Instant> now, Field<JsonNode> payload) {
    return DSL.name("logged")
        .as(
            DSL.insertInto(EVENTS, EVENTS.TASK_ID, EVENTS.KIND, EVENTS.AT, EVENTS.PAYLOAD)
                .select(
                    DSL.select(
                            claimed.field(TASKS.ID),
                            DSL.inline(EventKind.CLAIMED.wire()),
                            now,
                            payload)
                        .from(claimed)
                        .orderBy(
                            claimed.field(TASKS.PRIORITY).desc(),
                            claimed.field(TASKS.CREATED).asc(),
                            claimed.field(TASKS.ID).asc()))
                .returningResult(EVENTS.SEQ));
  }

  /**
   * The {@code claimed} events of a claim on Citus, one statement each in claim order (each goes to
   * the domain's node as one router statement), in the claim's transaction.
   */
  private static void logClaims(DSLContext ctx, List<TasksRecord> rows, ClaimArgs a) {
    List<TasksRecord> ordered = new java.util.ArrayList<>(rows);
    ordered.sort(CLAIM_ORDER);
    for (TasksRecord row : ordered) {
      ctx.insertInto(EVENTS)
          .set(EVENTS.TASK_ID, row.getId())
          .set(EVENTS.KIND, EventKind.CLAIMED.wire())
          .set(EVENTS.AT, a.now())
          .set(EVENTS.PAYLOAD, a.payload())
          .execute();
    }
  }

  /**
   * How many candidate rows an uncontended claim of {@code max} reads: {@code max} and {@link
   * ClaimSlack#MIN} more. Every candidate is checked again before one is locked, so the window is a
   * claim's fixed cost; under contention a domain's claims widen it ({@link ClaimSlack}).
   *
   * @param max the most tasks claimed
   * @return the window's size in rows
   */
  public static int claimWindow(int max) {
    return ClaimSlack.window(max, ClaimSlack.MIN);
  }

  /**
   * The claim filter, as SQL over the aliased tasks table {@code t}: claimable now, requirements
   * within the manifest, label within handling, dependencies completed (through {@code
   * ledger_tasks.completed}, whatever their domain), and no open continuation. The statuses are
   * inlined so PostgreSQL can match the partial index {@code tasks_claimable}.
   *
   * @param now the claim's time
   * @param manifestJson the claimer's manifest, a JSON array of strings
   * @param rank the claimer's handling level, as a label rank
   */
  static Condition claimable(
      Tasks t, Field<Instant> now, Field<String> manifestJson, Field<Long> rank, boolean citus) {
    Condition open =
        t.STATUS
            .in(DSL.inline(Status.ADMITTED.wire()), DSL.inline(Status.CLAIMED.wire()))
            .and(t.STATUS.eq(DSL.inline(Status.ADMITTED.wire())).or(t.LEASE_UNTIL.lt(now)));
    Condition requirements =
        t.REQUIREMENTS
            .eq(DSL.inline(List.<String>of(), t.REQUIREMENTS))
            .or(DSL.condition("{0}::jsonb <@ {1}::jsonb", t.REQUIREMENTS, manifestJson));
    return open.and(t.LABEL_RANK.le(rank))
        .and(requirements)
        // on Citus the directory's routes are on the coordinator, a local table a statement on a
        // domain's node cannot join: the flag kept by CitusDirectory stands for them there
        .and(citus ? DSL.not(t.BLOCKED) : dependenciesCompleted(t))
        .and(noOpenContinuation(t));
  }

  /** Every dependency of the task completed, whatever its domain ({@code ledger_tasks}). */
  private static Condition dependenciesCompleted(Tasks t) {
    Table<?> deps = DSL.table("jsonb_array_elements_text({0}::jsonb)", t.DEPENDS_ON).as("d", "dep");
    Field<String> dep = DSL.field(DSL.name("d", "dep"), String.class);
    return t.DEPENDS_ON
        .eq(DSL.inline(List.<String>of(), t.DEPENDS_ON))
        .or(
            DSL.notExists(
                DSL.selectOne()
                    .from(deps)
                    .whereNotExists(
                        DSL.selectOne()
                            .from(LEDGER_TASKS)
                            .where(LEDGER_TASKS.ID.eq(dep))
                            .and(LEDGER_TASKS.COMPLETED.eq(DSL.inline(true))))));
  }

  /** No task filed as {@code continues:<id>} of the task is still open. */
  private static Condition noOpenContinuation(Tasks t) {
    Tasks c = TASKS.as("c");
    return DSL.notExists(
        DSL.selectOne()
            .from(c)
            .where(c.ORIGIN.eq(DSL.inline("continues:").concat(t.ID)))
            .and(c.STATUS.notIn(DSL.inline(COMPLETED), DSL.inline(INVALIDATED))));
  }

  /** Why a task cannot be claimed, for {@link WrongStateException}'s message. */
  static String whyNotClaimable(
      TasksRecord row, Instant now, Collection<String> manifest, Label handling) {
    Status status = Status.parse(row.getStatus());
    if (status == Status.CLAIMED && !row.getLeaseUntil().isBefore(now)) {
      return "it is held by " + row.getHolder() + " until " + row.getLeaseUntil();
    }
    if (status != Status.ADMITTED && status != Status.CLAIMED) {
      return "only an admitted task (or one whose lease expired) can be claimed";
    }
    if (!manifest.containsAll(row.getRequirements())) {
      return "the manifest lacks a requirement of " + row.getRequirements();
    }
    if (!handling.canHandle(Label.ofRank(row.getLabelRank()))) {
      return "its label "
          + Label.ofRank(row.getLabelRank()).wire()
          + " is above the handling level "
          + handling.wire();
    }
    return "a dependency is not completed or a continuation is still open";
  }

  static String jsonArray(List<String> values) {
    return new dev.ledger.codegen.convert.StringListConverter().to(values);
  }
}

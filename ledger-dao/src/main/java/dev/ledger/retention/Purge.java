package dev.ledger.retention;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_DEPENDENCIES;
import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_RETENTION;
import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static dev.ledger.codegen.db.ledger_template.Tables.CLAIM_CLASSES;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.Status;
import dev.ledger.append.Retries;
import dev.ledger.codegen.convert.Rfc3339;
import dev.ledger.codegen.db.ledger_directory.tables.LedgerTasks;
import dev.ledger.codegen.db.ledger_template.tables.Tasks;
import dev.ledger.feed.FeedHorizon;
import dev.ledger.kernel.DomainLock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record3;
import org.jooq.Row2;
import org.jooq.impl.DSL;

/**
 * The statements of one purge batch and of the claim classes' clean-up, on a context mapped to the
 * domain's schema in a transaction {@link Retention} owns. Stateless.
 */
final class Purge {

  /** How long a batch waits for a row lock before it is given up (left for the next run). */
  static final Duration LOCK_TIMEOUT = Duration.ofSeconds(1);

  private static final Field<String> COMPLETED = DSL.inline(Status.COMPLETED.wire());
  private static final Field<String> INVALIDATED = DSL.inline(Status.INVALIDATED.wire());

  /** The id of the transaction that wrote an event (domain V11), as text. */
  private static final Field<String> XID_TEXT =
      DSL.field("{0}::text", String.class, DSL.name("xid"));

  private Purge() {}

  /** A batch's window: the next task ids after the cursor, in id order. */
  record Window(String low, String high, int size) {}

  /** What one batch removed. */
  record Batch(
      int tasksRemoved,
      int eventsRemoved,
      int tasksKept,
      long maxSeq,
      Set<ClassKey> classes,
      List<FeedHorizon.Removed> removed) {}

  /** A claim class: label rank and the MD5 of the requirements' JSON. */
  record ClassKey(long rank, String md5) {}

  /**
   * The next {@code size} task ids after {@code cursor} (every status: the cursor moves over the
   * whole table once per run, so each batch's scan is bounded).
   */
  static Window window(DSLContext ctx, String cursor, int size) {
    List<String> ids =
        ctx.select(TASKS.ID)
            .from(TASKS)
            .where(TASKS.ID.gt(cursor))
            .orderBy(TASKS.ID)
            .limit(size)
            .fetch(TASKS.ID);
    return new Window(cursor, ids.isEmpty() ? cursor : ids.get(ids.size() - 1), ids.size());
  }

  /**
   * Takes the per-domain purge lock ({@code ledger_retention:<domain>}, transaction-scoped, never
   * waited for) and bounds the batch's lock waits.
   *
   * @return false when another purge of the domain holds the lock
   */
  static boolean begin(DSLContext ctx, String domain) {
    ctx.select(
            DSL.function(
                "set_config",
                String.class,
                DSL.inline("lock_timeout"),
                DSL.inline(LOCK_TIMEOUT.toMillis() + "ms"),
                DSL.inline(true)))
        .fetch();
    Field<Integer> key =
        DSL.function(
            "hashtext", Integer.class, DSL.inline("ledger_retention:").concat(DSL.val(domain)));
    return ctx.select(DSL.function("pg_try_advisory_xact_lock", Boolean.class, key))
        .fetchSingle()
        .value1();
  }

  /**
   * Removes the terminal tasks of the window whose terminal event is older than {@code cutoff} and
   * that nothing open needs ({@link #needed}), with their events, routes and dependency edges. Rows
   * another transaction holds are skipped, never waited for.
   */
  static Batch batch(DSLContext ctx, String domain, Window w, Instant cutoff) {
    Tasks t = TASKS.as("t");
    Condition inWindow = t.ID.gt(w.low()).and(t.ID.le(w.high()));
    Condition terminal = t.STATUS.in(COMPLETED, INVALIDATED);
    Field<Instant> terminalAt =
        DSL.field(
            DSL.select(DSL.max(EVENTS.AT))
                .from(EVENTS)
                .where(EVENTS.TASK_ID.eq(t.ID))
                .and(EVENTS.KIND.in(COMPLETED, INVALIDATED)));
    Condition old = terminalAt.lt(DSL.val(cutoff, EVENTS.AT));
    int expired = ctx.fetchCount(ctx.selectOne().from(t).where(inWindow, terminal, old));
    List<Record3<String, Long, String>> rows =
        ctx.select(t.ID, t.LABEL_RANK, DSL.field("md5({0})", String.class, t.REQUIREMENTS))
            .from(t)
            .where(inWindow, terminal, old, DSL.not(needed(t)))
            .orderBy(t.ID)
            .forUpdate()
            .of(t)
            .skipLocked()
            .fetch();
    if (rows.isEmpty()) {
      return new Batch(0, 0, expired, 0, Set.of(), List.of());
    }
    String[] ids = rows.stream().map(Record3::value1).toArray(String[]::new);
    Set<ClassKey> classes = new LinkedHashSet<>();
    rows.forEach(r -> classes.add(new ClassKey(r.value2(), r.value3())));
    // edges first: a route deleted below then finds only its kept dependents (terminal ones, whose
    // blocked flag the route trigger recomputes as a replay would)
    ctx.deleteFrom(LEDGER_DEPENDENCIES)
        .where(LEDGER_DEPENDENCIES.TASK_ID.eq(DSL.any(ids)))
        .execute();
    ctx.deleteFrom(LEDGER_TASKS)
        .where(LEDGER_TASKS.ID.eq(DSL.any(ids)))
        .and(LEDGER_TASKS.DOMAIN.eq(domain))
        .execute();
    List<FeedHorizon.Removed> removed =
        ctx.deleteFrom(EVENTS)
            .where(EVENTS.TASK_ID.eq(DSL.any(ids)))
            .returningResult(EVENTS.SEQ, XID_TEXT)
            .fetch(r -> new FeedHorizon.Removed(r.value1(), Long.parseLong(r.value2())));
    ctx.deleteFrom(TASKS).where(TASKS.ID.eq(DSL.any(ids))).execute();
    long maxSeq = removed.stream().mapToLong(FeedHorizon.Removed::seq).max().orElse(0);
    return new Batch(ids.length, removed.size(), expired - ids.length, maxSeq, classes, removed);
  }

  /**
   * Whether something open still needs the terminal task {@code t}, so it is kept whatever its age:
   * an open task filed from it ({@code task:<id>}, {@code continues:<id>}); any task filed as its
   * retry ({@code retries:<id>}, whatever its status: a scrub of the origin reaches a retry only
   * through the tasks before it, so a chain goes from its end); an open task of its own retry chain
   * (same {@code retries:} origin, or the chain's root); an open task that supersedes it; a task
   * depending on it that is not known to be terminal (a dependent of another domain counts as open
   * unless its route says completed).
   */
  static Condition needed(Tasks t) {
    Tasks o = TASKS.as("o");
    Condition open = o.STATUS.notIn(COMPLETED, INVALIDATED);
    Condition child =
        DSL.exists(
            DSL.selectOne()
                .from(o)
                .where(
                    o.ORIGIN.in(
                        DSL.inline("task:").concat(t.ID), DSL.inline("continues:").concat(t.ID)))
                .and(open));
    Condition retry =
        DSL.exists(
            DSL.selectOne().from(o).where(o.ORIGIN.eq(DSL.inline(Retries.RETRIES).concat(t.ID))));
    Condition chain =
        t.ORIGIN
            .startsWith(DSL.inline(Retries.RETRIES))
            .and(
                DSL.exists(DSL.selectOne().from(o).where(o.ORIGIN.eq(t.ORIGIN)).and(open))
                    .or(
                        DSL.exists(
                            DSL.selectOne()
                                .from(o)
                                .where(
                                    o.ID.eq(
                                        DSL.substring(
                                            t.ORIGIN, DSL.inline(Retries.RETRIES.length() + 1))))
                                .and(open))));
    Condition successor =
        DSL.exists(DSL.selectOne().from(o).where(o.ID.eq(t.SUPERSEDED_BY)).and(open));
    LedgerTasks r = LEDGER_TASKS.as("r");
    Tasks d = TASKS.as("d");
    Condition dependent =
        DSL.exists(
            DSL.selectOne()
                .from(LEDGER_DEPENDENCIES)
                .leftJoin(r)
                .on(r.ID.eq(LEDGER_DEPENDENCIES.TASK_ID))
                .leftJoin(d)
                .on(d.ID.eq(LEDGER_DEPENDENCIES.TASK_ID))
                .where(LEDGER_DEPENDENCIES.DEPENDS_ON.eq(t.ID))
                .and(r.COMPLETED.isDistinctFrom(DSL.inline(true)))
                .and(d.ID.isNull().or(d.STATUS.notIn(COMPLETED, INVALIDATED))));
    return child.or(retry).or(chain).or(successor).or(dependent);
  }

  /**
   * Records a batch in the domain's retention row: totals added, {@code removed_through_seq} moved
   * up (never down).
   */
  static void record(DSLContext directory, String domain, Batch b, Instant now) {
    String at = Rfc3339.format(now);
    directory
        .insertInto(LEDGER_RETENTION)
        .set(LEDGER_RETENTION.DOMAIN, domain)
        .set(LEDGER_RETENTION.REMOVED_THROUGH_SEQ, b.maxSeq())
        .set(LEDGER_RETENTION.TASKS_REMOVED, (long) b.tasksRemoved())
        .set(LEDGER_RETENTION.EVENTS_REMOVED, (long) b.eventsRemoved())
        .set(LEDGER_RETENTION.LAST_PURGE_AT, at)
        .set(LEDGER_RETENTION.UPDATED_AT, at)
        .onConflict(LEDGER_RETENTION.DOMAIN)
        .doUpdate()
        .set(
            LEDGER_RETENTION.REMOVED_THROUGH_SEQ,
            DSL.greatest(LEDGER_RETENTION.REMOVED_THROUGH_SEQ, DSL.val(b.maxSeq())))
        .set(
            LEDGER_RETENTION.TASKS_REMOVED,
            LEDGER_RETENTION.TASKS_REMOVED.plus((long) b.tasksRemoved()))
        .set(
            LEDGER_RETENTION.EVENTS_REMOVED,
            LEDGER_RETENTION.EVENTS_REMOVED.plus((long) b.eventsRemoved()))
        .set(LEDGER_RETENTION.LAST_PURGE_AT, at)
        .execute();
  }

  /**
   * Which of {@code classes} no task of the domain has any more (one scan of the tasks, no lock).
   */
  static List<ClassKey> emptyClasses(DSLContext ctx, Set<ClassKey> classes) {
    if (classes.isEmpty()) {
      return List.of();
    }
    return ctx.select(CLAIM_CLASSES.LABEL_RANK, CLAIM_CLASSES.REQUIREMENTS_MD5)
        .from(CLAIM_CLASSES)
        .where(keyIn(classes))
        .andNotExists(
            DSL.selectOne()
                .from(TASKS)
                .where(TASKS.LABEL_RANK.eq(CLAIM_CLASSES.LABEL_RANK))
                .and(
                    DSL.field("md5({0})", String.class, TASKS.REQUIREMENTS)
                        .eq(CLAIM_CLASSES.REQUIREMENTS_MD5)))
        .fetch(r -> new ClassKey(r.value1(), r.value2()));
  }

  /**
   * Removes the claim classes of {@code classes} that no task has, under the domain's lock (taken
   * without waiting: filing takes it too, and adds a class before its task; a filing between our
   * check and our delete would otherwise leave its task without a class). A replay derives the
   * classes from the tasks, so a class with no task is one a replay would not have.
   *
   * @return how many were removed; -1 when the domain's lock was busy (left for the next run)
   */
  static int removeClasses(DSLContext ctx, String domain, List<ClassKey> classes) {
    if (classes.isEmpty()) {
      return 0;
    }
    if (!DomainLock.tryLock(ctx, domain)) {
      return -1;
    }
    return ctx.deleteFrom(CLAIM_CLASSES)
        .where(keyIn(new LinkedHashSet<>(classes)))
        .andNotExists(
            DSL.selectOne()
                .from(TASKS)
                .where(TASKS.LABEL_RANK.eq(CLAIM_CLASSES.LABEL_RANK))
                .and(
                    DSL.field("md5({0})", String.class, TASKS.REQUIREMENTS)
                        .eq(CLAIM_CLASSES.REQUIREMENTS_MD5)))
        .execute();
  }

  private static Condition keyIn(Set<ClassKey> classes) {
    List<Row2<Long, String>> keys = new ArrayList<>();
    for (ClassKey k : classes) {
      keys.add(DSL.row(DSL.val(k.rank()), DSL.val(k.md5())));
    }
    return DSL.row(CLAIM_CLASSES.LABEL_RANK, CLAIM_CLASSES.REQUIREMENTS_MD5).in(keys);
  }

  /** The cutoff of a retention at {@code now}: terminal events before it are old. */
  static Instant cutoff(Instant now, long retentionSeconds) {
    return now.minusSeconds(retentionSeconds);
  }
}

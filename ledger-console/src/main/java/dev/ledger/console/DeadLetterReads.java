package dev.ledger.console;

import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.FailureRecord;
import dev.ledger.Label;
import dev.ledger.Status;
import dev.ledger.append.Retries;
import dev.ledger.codegen.db.ledger_template.tables.Tasks;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jooq.Condition;
import org.jooq.Field;
import org.jooq.impl.DSL;

/**
 * A domain's dead letters, bounded: the same tasks {@code Ledger.deadLetters} lists (invalidated,
 * reason prefixed {@value FailureRecord#DEAD_LETTER}, no re-filed successor), but read a page at a
 * time in the {@code tasks_queue} index's order (status, priority desc, created; then id) with a
 * keyset and a limit, never all of them. Counts stop at {@link #CAP}; grouping by last error reads
 * at most {@link #CAP} + 1 rows. Thread-safe.
 */
final class DeadLetterReads {

  /** Dead letters counted or grouped per request stop here; more shows {@code >10000}. */
  static final int CAP = 10_000;

  /** Tasks shown under each error group. */
  static final int SAMPLES = 20;

  /** A failed attempt's reason ({@link FailureRecord#reason()}): the error after its preamble. */
  private static final Pattern ATTEMPT =
      Pattern.compile("attempt \\d+ of \\d+ failed at \\S+: (.*)", Pattern.DOTALL);

  private final ReadModel reads;
  private final int cap;

  DeadLetterReads(ReadModel reads) {
    this(reads, CAP);
  }

  /** With another cap than {@link #CAP}: for tests, which cannot afford 10,001 dead letters. */
  DeadLetterReads(ReadModel reads, int cap) {
    this.reads = reads;
    this.cap = cap;
  }

  /**
   * The cap of this reader's counts.
   *
   * @return {@link #CAP} unless a test said otherwise
   */
  int cap() {
    return cap;
  }

  /**
   * A dead letter as read for grouping.
   *
   * @param id the task id
   * @param title its title
   * @param label its label
   * @param reason its reason (the dead-letter record)
   * @param attempts its attempts
   * @param priority its priority
   * @param created when it was filed
   */
  record Dead(
      String id,
      String title,
      Label label,
      String reason,
      long attempts,
      long priority,
      Instant created) {
    ReadModel.Cursor cursor() {
      return new ReadModel.Cursor(priority, created, id);
    }
  }

  /**
   * Whether a row of {@code dead} (an alias of the tasks table, or a derived table with its {@code
   * id}, {@code status}, {@code reason} and {@code origin} columns) is a dead letter not re-filed
   * yet. Constants inlined, no bind value: it may be part of a statement rendered once and cached.
   */
  static Condition isDeadLetter(Tasks dead) {
    Tasks refiled = TASKS.as("refiled");
    // the successor's origin: the dead letter's own when it is a retry already, else retries:<id>
    // (as WorkerReads.deadLetters, which Ledger.deadLetters runs)
    Field<String> successorOrigin =
        DSL.when(
                dead.ORIGIN
                    .startsWith(DSL.inline(Retries.RETRIES))
                    .and(DSL.length(dead.ORIGIN).gt(DSL.inline(Retries.RETRIES.length()))),
                dead.ORIGIN)
            .otherwise(DSL.inline(Retries.RETRIES).concat(dead.ID));
    return dead.STATUS
        .eq(DSL.inline(Status.INVALIDATED.wire()))
        .and(dead.REASON.startsWith(DSL.inline(FailureRecord.DEAD_LETTER + " ")))
        .andNotExists(
            DSL.selectOne()
                .from(refiled)
                .where(refiled.ORIGIN.eq(successorOrigin))
                .and(refiled.UPSTREAM_EVENT.eq(DSL.inline(Retries.REFILED).concat(dead.ID))));
  }

  /**
   * How many dead letters a domain has, counted up to the cap + 1: one bounded scan.
   *
   * @param d the domain
   * @return the count; {@link #cap()} + 1 means more than the cap
   */
  int count(ReadModel.Domain d) {
    return reads.dsl(d.schema()).select(countField()).fetchOne(0, int.class);
  }

  /**
   * The count of {@link #count} as a scalar subquery over the template's tables, for a statement
   * that reads more (the overview's {@link ReadModel#summaries}): rendered in the statement's
   * domain schema.
   *
   * @return the count up to {@link #cap()} + 1
   */
  Field<Integer> countField() {
    Tasks dead = TASKS.as("dead");
    return DSL.field(
        DSL.selectCount()
            .from(
                DSL.selectOne()
                    .from(dead)
                    .where(isDeadLetter(dead))
                    .limit(cap + 1)
                    .asTable("capped")));
  }

  /**
   * A page of a domain's dead letters after a position, in claim order.
   *
   * @param d the domain
   * @param after where the page starts (exclusive), or null for the first
   * @param limit at most this many
   * @return the dead letters
   */
  List<Dead> page(ReadModel.Domain d, ReadModel.Cursor after, int limit) {
    Tasks dead = TASKS.as("dead");
    Condition where = isDeadLetter(dead);
    if (after != null) {
      where =
          where
              .and(dead.PRIORITY.le(after.priority()))
              .and(
                  dead.PRIORITY
                      .lt(after.priority())
                      .or(dead.CREATED.gt(after.created()))
                      .or(dead.CREATED.eq(after.created()).and(dead.ID.gt(after.id()))));
    }
    return reads
        .dsl(d.schema())
        .select(
            dead.ID,
            dead.TITLE,
            dead.LABEL_RANK,
            dead.REASON,
            dead.ATTEMPTS,
            dead.PRIORITY,
            dead.CREATED)
        .from(dead)
        .where(where)
        .orderBy(dead.PRIORITY.desc(), dead.CREATED.asc(), dead.ID.asc())
        .limit(limit)
        .fetch(
            r ->
                new Dead(
                    r.value1(),
                    r.value2(),
                    Label.ofRank(r.value3()),
                    r.value4(),
                    r.value5(),
                    r.value6(),
                    r.value7()));
  }

  /**
   * A group of dead letters sharing their last error.
   *
   * @param error the error, or the hidden note
   * @param count how many of the rows read have it
   * @param samples the first {@link #SAMPLES} of them, in claim order
   */
  record Group(String error, int count, List<Dead> samples) {}

  /**
   * Dead letters grouped by their last error, largest group first, from at most {@link #CAP} + 1
   * rows.
   *
   * @param groups the groups
   * @param capped true when there were more than {@link #CAP} dead letters: the counts are then of
   *     the first {@link #CAP} in claim order
   */
  record Groups(List<Group> groups, boolean capped) {}

  Groups groups(ReadModel.Domain d, Label handling) {
    List<Dead> read = page(d, null, cap + 1);
    boolean capped = read.size() > cap;
    if (capped) {
      read = read.subList(0, cap);
    }
    Map<String, List<Dead>> byError = new LinkedHashMap<>();
    for (Dead x : read) {
      byError
          .computeIfAbsent(error(x.label(), x.reason(), handling), k -> new ArrayList<>())
          .add(x);
    }
    List<Group> out = new ArrayList<>();
    byError.forEach(
        (e, rows) ->
            out.add(
                new Group(
                    e, rows.size(), List.copyOf(rows.subList(0, Math.min(SAMPLES, rows.size()))))));
    out.sort(
        (a, b) ->
            a.count() != b.count()
                ? Integer.compare(b.count(), a.count())
                : a.error().compareTo(b.error()));
    return new Groups(out, capped);
  }

  /**
   * A dead letter's last error as grouped: its reason without the {@value
   * FailureRecord#DEAD_LETTER} prefix and the attempt's preamble; for a task labelled above the
   * handling label, a note naming the label instead (its error is task text).
   *
   * @param label the task's label
   * @param reason its reason, or null
   * @param handling the console's handling label
   * @return the group's key
   */
  static String error(Label label, String reason, Label handling) {
    if (!handling.canHandle(label)) {
      return "(hidden: labelled " + label.wire() + ", above handling " + handling.wire() + ")";
    }
    String r = reason == null ? "" : reason;
    if (r.startsWith(FailureRecord.DEAD_LETTER)) {
      r = r.substring(FailureRecord.DEAD_LETTER.length()).strip();
    }
    Matcher m = ATTEMPT.matcher(r);
    return m.matches() ? m.group(1) : r;
  }
}

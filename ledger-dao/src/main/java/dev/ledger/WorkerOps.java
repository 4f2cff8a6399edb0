package dev.ledger;

import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.internal.Event;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * The ledger operations worker pools need beyond claims and leases: recording a failed attempt (a
 * retry filed from the root, or a dead letter), admitting delayed tasks at their time, and listing
 * and re-filing dead letters. Every write appends the reference's own event kinds ({@code created},
 * {@code invalidated}, {@code admitted}), so a database shared with the reference stack stays
 * readable by it. Reached through {@link Ledger}'s facade methods; thread-safe.
 */
final class WorkerOps {

  private static final String RETRIES = "retries:";
  private static final String ATTEMPT = "attempt:";
  private static final String REFILED = "refiled:";

  private final Ledger ledger;

  WorkerOps(Ledger ledger) {
    this.ledger = ledger;
  }

  /** See {@link Ledger#fail}. */
  FailureRecord fail(Lease lease, String error, int defaultMaxAttempts, Duration retryDelay) {
    Validation.required("error", error, Validation.MAX_BODY);
    if (defaultMaxAttempts < 1 || defaultMaxAttempts > Validation.MAX_ATTEMPTS) {
      throw new InvalidInputException(
          "max_attempts",
          "must be 1 to " + Validation.MAX_ATTEMPTS + ", was " + defaultMaxAttempts);
    }
    if (retryDelay == null || retryDelay.isNegative()) {
      throw new InvalidInputException("retry_delay", "must be zero or more");
    }
    FailureRecord[] out = new FailureRecord[1];
    ledger.fenced(
        lease,
        "fail",
        row -> {
          DSLContext tx = DSL.using(row.configuration());
          Instant now = ledger.now();
          int attempt = attemptOf(row);
          int max =
              row.getMaxAttempts() > 0 ? Math.toIntExact(row.getMaxAttempts()) : defaultMaxAttempts;
          String text = "attempt " + attempt + " of " + max + " failed at " + now + ": " + error;
          if (attempt >= max) {
            String reason = cut(Ledger.DEAD_LETTER + " " + text);
            out[0] = new FailureRecord(row.getId(), attempt, max, reason, now, null, null);
            return new Event.Invalidated(reason, null);
          }
          String root = rootOf(row);
          String upstream = ATTEMPT + (attempt + 1);
          Instant retryAt = now.plus(retryDelay);
          String retryId =
              tx.select(TASKS.ID)
                  .from(TASKS)
                  .where(TASKS.ORIGIN.eq(RETRIES + root))
                  .and(TASKS.UPSTREAM_EVENT.eq(upstream))
                  .fetchOptional(TASKS.ID)
                  .orElse(null);
          if (retryId == null) {
            retryId = ledger.newId();
            TaskSpec retry =
                dev.ledger.internal.Rows.task(row)
                    .spec()
                    .refiled(RETRIES + root, upstream, retryAt, max);
            ledger.fileIn(tx, retryId, now, retry);
          }
          String reason = cut(text);
          out[0] = new FailureRecord(row.getId(), attempt, max, reason, now, retryId, retryAt);
          return new Event.Invalidated(reason, retryId);
        });
    return out[0];
  }

  /** See {@link Ledger#admitDue}. */
  List<String> admitDue(String domain, int max) {
    Validation.domain(domain);
    if (max < 1 || max > 1000) {
      throw new InvalidInputException("max", "must be 1 to 1000, was " + max);
    }
    return ledger.run(
        "admit due",
        () -> {
          Optional<String> schema = ledger.directory.schemaOf(domain);
          if (schema.isEmpty()) {
            return List.<String>of();
          }
          return ledger
              .dsl
              .forSchema(schema.get())
              .transactionResult(
                  cfg -> {
                    DSLContext tx = cfg.dsl();
                    Instant now = ledger.now();
                    List<String> ids =
                        tx.select(TASKS.ID)
                            .from(TASKS)
                            .where(TASKS.STATUS.eq(DSL.inline(Status.PROPOSED.wire())))
                            .and(TASKS.NOT_BEFORE.isNotNull())
                            .and(TASKS.NOT_BEFORE.le(now))
                            .orderBy(TASKS.NOT_BEFORE)
                            .limit(max)
                            .forUpdate()
                            .skipLocked()
                            .fetch(TASKS.ID);
                    if (ids.isEmpty()) {
                      return ids;
                    }
                    ledger.appendToEach(tx, ids.toArray(String[]::new), now, new Event.Admitted());
                    int n =
                        tx.update(TASKS)
                            .set(TASKS.STATUS, Status.ADMITTED.wire())
                            .where(TASKS.ID.in(ids))
                            .execute();
                    if (n != ids.size()) {
                      throw new IllegalStateException(
                          "admitting " + ids.size() + " due tasks updated " + n + " rows");
                    }
                    return ids;
                  });
        });
  }

  /** See {@link Ledger#nextDue}. */
  Optional<Instant> nextDue(String domain) {
    Validation.domain(domain);
    return ledger.run(
        "next due",
        () ->
            ledger
                .directory
                .schemaOf(domain)
                .flatMap(
                    s ->
                        ledger
                            .dsl
                            .forSchema(s)
                            .select(TASKS.NOT_BEFORE)
                            .from(TASKS)
                            .where(TASKS.STATUS.eq(DSL.inline(Status.PROPOSED.wire())))
                            .and(TASKS.NOT_BEFORE.isNotNull())
                            .orderBy(TASKS.NOT_BEFORE)
                            .limit(1)
                            .fetchOptional(TASKS.NOT_BEFORE)));
  }

  /** See {@link Ledger#deadLetters}. */
  List<Task> deadLetters(String domain) {
    Validation.domain(domain);
    return ledger.run(
        "dead letters",
        () ->
            ledger
                .directory
                .schemaOf(domain)
                .map(
                    s ->
                        ledger
                            .dsl
                            .forSchema(s)
                            .selectFrom(TASKS)
                            .where(TASKS.STATUS.eq(DSL.inline(Status.INVALIDATED.wire())))
                            .and(TASKS.REASON.startsWith(Ledger.DEAD_LETTER + " "))
                            .orderBy(TASKS.CREATED.asc())
                            .fetch(dev.ledger.internal.Rows::task))
                .orElse(List.of()));
  }

  /** See {@link Ledger#countByStatus}. */
  java.util.Map<Status, Long> countByStatus(String domain) {
    Validation.domain(domain);
    return ledger.run(
        "count by status",
        () -> {
          java.util.EnumMap<Status, Long> counts = new java.util.EnumMap<>(Status.class);
          for (Status st : Status.values()) {
            counts.put(st, 0L);
          }
          ledger
              .directory
              .schemaOf(domain)
              .ifPresent(
                  s ->
                      ledger
                          .dsl
                          .forSchema(s)
                          .select(TASKS.STATUS, DSL.count())
                          .from(TASKS)
                          .groupBy(TASKS.STATUS)
                          .fetch()
                          .forEach(
                              r -> counts.put(Status.parse(r.value1()), r.value2().longValue())));
          return java.util.Collections.unmodifiableMap(counts);
        });
  }

  /** See {@link Ledger#refile}. */
  String refile(String deadLetterId) {
    Task dead = ledger.get(deadLetterId);
    if (dead.status() != Status.INVALIDATED
        || dead.reason() == null
        || !dead.reason().startsWith(Ledger.DEAD_LETTER + " ")) {
      throw new WrongStateException(
          deadLetterId, dead.status(), "refile", "only a dead letter can be re-filed");
    }
    String root = rootOf(dead.spec().origin(), dead.id());
    TaskSpec again =
        dead.spec()
            .refiled(RETRIES + root, REFILED + deadLetterId, null, dead.spec().maxAttempts());
    String id = ledger.file(again);
    if (ledger.get(id).status() == Status.PROPOSED) {
      ledger.admit(id);
    }
    return id;
  }

  /**
   * Which attempt of its retry chain a task is: {@code n} for a retry filed as {@code attempt:<n>},
   * 1 for a root or a re-filed dead letter.
   */
  static int attemptOf(TasksRecord row) {
    String origin = row.getOrigin();
    String upstream = row.getUpstreamEvent();
    if (origin != null
        && origin.startsWith(RETRIES)
        && upstream != null
        && upstream.startsWith(ATTEMPT)) {
      try {
        return Math.max(1, Integer.parseInt(upstream.substring(ATTEMPT.length())));
      } catch (NumberFormatException e) {
        return 1;
      }
    }
    return 1;
  }

  /** The root of a task's retry chain: {@code <root>} of {@code retries:<root>}, else the task. */
  private static String rootOf(TasksRecord row) {
    return rootOf(row.getOrigin(), row.getId());
  }

  private static String rootOf(String origin, String id) {
    return origin != null && origin.startsWith(RETRIES) && origin.length() > RETRIES.length()
        ? origin.substring(RETRIES.length())
        : id;
  }

  private static String cut(String reason) {
    return reason.length() <= Validation.MAX_BODY
        ? reason
        : reason.substring(0, Validation.MAX_BODY);
  }

  static List<String> copy(List<String> in) {
    return new ArrayList<>(in);
  }
}

package dev.ledger.append;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_DEPENDENCIES;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.FailureRecord;
import dev.ledger.InvalidInputException;
import dev.ledger.Lease;
import dev.ledger.LeaseLostException;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.TaskSpec;
import dev.ledger.Validation;
import dev.ledger.WrongStateException;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.event.Event;
import dev.ledger.event.EventLog;
import dev.ledger.kernel.Engine;
import dev.ledger.kernel.Rows;
import dev.ledger.kernel.Tx;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * What worker pools write beyond claims and leases: a failed attempt (a retry filed from the
 * chain's root, {@code retries:<root>}, or a dead letter), the admission of delayed tasks at their
 * time, and the re-filing of a dead letter. Only the reference's event kinds ({@code created},
 * {@code invalidated}, {@code admitted}), so a database shared with the reference stack stays
 * readable by it. Thread-safe.
 */
public final class Retries {

  /**
   * The origin prefix of a retry chain's tasks: a retry, and a re-filed dead letter, are filed with
   * origin {@code retries:<root>}.
   */
  public static final String RETRIES = "retries:";

  /** The upstream event prefix of a retry: {@code attempt:<n>}, its place in the chain. */
  public static final String ATTEMPT = "attempt:";

  /** The upstream event prefix of a re-filed dead letter's successor: {@code refiled:<id>}. */
  public static final String REFILED = "refiled:";

  private final Engine engine;
  private final EventLog log;
  private final Filing filing;
  private final Transitions transitions;

  /**
   * Creates the operations.
   *
   * @param engine the ledger's shared state
   * @param log the event log writer
   * @param filing the filing operation (for retries)
   * @param transitions the transitions (for the fenced invalidation and the re-filed admission)
   */
  public Retries(Engine engine, EventLog log, Filing filing, Transitions transitions) {
    this.engine = engine;
    this.log = log;
    this.filing = filing;
    this.transitions = transitions;
  }

  /**
   * Records a failed attempt under its lease (see {@code Ledger.fail}).
   *
   * @param tx the operation's transaction context
   * @param lease the current lease
   * @param error what went wrong
   * @param defaultMaxAttempts the chain's attempts when its spec sets none
   * @param retryDelay the retry's wait
   * @return what was recorded
   * @throws LeaseLostException when the lease is not the task's current one
   * @throws InvalidInputException naming {@code error}, {@code max_attempts} or {@code retry_delay}
   */
  public FailureRecord fail(
      Tx tx, Lease lease, String error, int defaultMaxAttempts, Duration retryDelay) {
    if (lease == null) {
      throw new InvalidInputException("lease", "must not be null");
    }
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
    DSLContext ctx = engine.taskDomain(tx, lease.taskId());
    transitions.underLease(
        tx,
        lease,
        "fail",
        row -> {
          Instant now = engine.now();
          int attempt = attemptOf(row.getOrigin(), row.getUpstreamEvent());
          int max =
              row.getMaxAttempts() > 0 ? Math.toIntExact(row.getMaxAttempts()) : defaultMaxAttempts;
          String text = "attempt " + attempt + " of " + max + " failed at " + now + ": " + error;
          if (attempt >= max) {
            String reason = cut(FailureRecord.DEAD_LETTER + " " + text);
            out[0] = new FailureRecord(row.getId(), attempt, max, reason, now, null, null);
            return new Event.Invalidated(reason, null);
          }
          String root = chainRootOf(row.getOrigin(), row.getUpstreamEvent(), row.getId());
          String upstream = ATTEMPT + (attempt + 1);
          Instant retryAt = now.plus(retryDelay);
          Optional<String> filed = Filing.findOrigin(ctx, RETRIES + root, upstream);
          String retryId;
          if (filed.isPresent()) {
            retryId = filed.get();
          } else {
            retryId = engine.newId();
            TaskSpec retry = Rows.task(row).spec().refiled(RETRIES + root, upstream, retryAt, max);
            filing.insert(ctx, retryId, now, retry);
          }
          String reason = cut(text);
          out[0] = new FailureRecord(row.getId(), attempt, max, reason, now, retryId, retryAt);
          return new Event.Invalidated(reason, retryId);
        });
    if (out[0].deadLetter()) {
      deadDependents(tx, lease.taskId());
    }
    return out[0];
  }

  /**
   * The open tasks that wait on a dead letter, directly or through one another, in whatever domain
   * (the directory's dependency edges): none of them can ever run (a dependency must be completed,
   * and a dead letter never is), so each becomes a dead letter too, its reason naming the
   * dependency, in the dead letter's transaction. Re-filing them ({@link #refile}) after the dead
   * letter makes them depend on its re-filed successor.
   */
  private void deadDependents(Tx tx, String dead) {
    java.util.ArrayDeque<String> todo = new java.util.ArrayDeque<>(List.of(dead));
    java.util.Set<String> seen = new java.util.HashSet<>(todo);
    while (!todo.isEmpty()) {
      String dependency = todo.poll();
      List<String> dependents =
          tx.directory()
              .select(LEDGER_DEPENDENCIES.TASK_ID)
              .from(LEDGER_DEPENDENCIES)
              .where(LEDGER_DEPENDENCIES.DEPENDS_ON.eq(dependency))
              .orderBy(LEDGER_DEPENDENCIES.TASK_ID)
              .fetch(LEDGER_DEPENDENCIES.TASK_ID);
      String reason =
          FailureRecord.DEAD_LETTER
              + " dependency "
              + dependency
              + " is a dead letter, so this task cannot run; re-file "
              + dependency
              + " first, then this task";
      for (String id : dependents) {
        if (!seen.add(id) || engine.findSchemaOfTask(tx, id).isEmpty()) {
          continue;
        }
        boolean[] ended = {false};
        transitions.apply(
            tx,
            id,
            row -> {
              if (Status.parse(row.getStatus()).terminal()) {
                return null;
              }
              ended[0] = true;
              return new Event.Invalidated(reason, null);
            });
        if (ended[0]) {
          todo.add(id);
        }
      }
    }
  }

  /**
   * Admits the delayed tasks of a domain whose time has come (see {@code Ledger.admitDue}).
   *
   * @param tx the operation's transaction context
   * @param domain the domain
   * @param max the most tasks, 1 to 1000
   * @return the ids admitted
   */
  public List<String> admitDue(Tx tx, String domain, int max) {
    Validation.domain(domain);
    if (max < 1 || max > 1000) {
      throw new InvalidInputException("max", "must be 1 to 1000, was " + max);
    }
    Optional<DSLContext> mapped = engine.domain(tx, domain);
    if (mapped.isEmpty()) {
      return List.of();
    }
    DSLContext ctx = mapped.get();
    Instant now = engine.now();
    List<String> ids =
        ctx.select(TASKS.ID)
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
    log.appendToEach(ctx, ids.toArray(String[]::new), now, new Event.Admitted());
    int n =
        ctx.update(TASKS)
            .set(TASKS.STATUS, Status.ADMITTED.wire())
            .where(TASKS.ID.in(ids))
            .execute();
    if (n != ids.size()) {
      throw new IllegalStateException(
          "admitting " + ids.size() + " due tasks updated " + n + " rows");
    }
    if (engine.citus()) {
      dev.ledger.kernel.CitusDirectory.wake(ctx, domain, Status.ADMITTED, false);
    }
    return ids;
  }

  /**
   * Files a dead letter again, admitted (see {@code Ledger.refile}).
   *
   * @param tx the operation's transaction context
   * @param dead the dead letter, as read in {@code tx}
   * @return the new task's id
   * @throws WrongStateException when the task is not a dead letter
   */
  public String refile(Tx tx, Task dead) {
    if (dead.status() != Status.INVALIDATED
        || dead.reason() == null
        || !dead.reason().startsWith(FailureRecord.DEAD_LETTER + " ")) {
      throw new WrongStateException(
          dead.id(), dead.status(), "refile", "only a dead letter can be re-filed");
    }
    String root = rootOf(dead.spec().origin(), dead.id());
    TaskSpec again =
        dead.spec()
            .refiled(RETRIES + root, REFILED + dead.id(), null, dead.spec().maxAttempts())
            .dependingOn(successors(tx, dead));
    String id = filing.file(tx, again);
    transitions.admitIfProposed(tx, id);
    return id;
  }

  /**
   * A re-filed task's dependencies: each of the dead letter's, but a dependency that is a dead
   * letter itself replaced by its re-filed successor (the task it depends on can never complete,
   * the successor can).
   *
   * @throws WrongStateException when a dependency is a dead letter not re-filed yet
   */
  private List<String> successors(Tx tx, Task dead) {
    List<String> out = new java.util.ArrayList<>();
    for (String dep : dead.spec().dependsOn()) {
      String current = dep;
      for (int hops = 0; hops < Validation.MAX_ATTEMPTS; hops++) {
        Optional<DSLContext> mapped = engine.findTaskDomain(tx, current);
        if (mapped.isEmpty()) {
          break;
        }
        DSLContext ctx = mapped.get();
        TasksRecord row = ctx.selectFrom(TASKS).where(TASKS.ID.eq(current)).fetchOne();
        if (row == null
            || !Status.INVALIDATED.wire().equals(row.getStatus())
            || row.getReason() == null
            || !row.getReason().startsWith(FailureRecord.DEAD_LETTER + " ")) {
          break;
        }
        Optional<String> successor =
            Filing.findOrigin(ctx, RETRIES + rootOf(row.getOrigin(), current), REFILED + current);
        if (successor.isEmpty()) {
          throw new WrongStateException(
              dead.id(),
              dead.status(),
              "refile",
              "its dependency "
                  + current
                  + " is a dead letter that was not re-filed: re-file "
                  + current
                  + " first");
        }
        current = successor.get();
      }
      out.add(current);
    }
    return out;
  }

  /**
   * Which attempt of its retry chain a task is: {@code n} for a retry filed as {@code
   * retries:<root>} with upstream event {@code attempt:<n>}, else 1 (a root, a re-filed dead
   * letter).
   *
   * @param origin the task's origin, or null
   * @param upstreamEvent its upstream event, or null
   * @return the attempt, from 1
   */
  public static int attemptOf(String origin, String upstreamEvent) {
    if (origin != null
        && origin.startsWith(RETRIES)
        && upstreamEvent != null
        && upstreamEvent.startsWith(ATTEMPT)) {
      try {
        return Math.max(1, Integer.parseInt(upstreamEvent.substring(ATTEMPT.length())));
      } catch (NumberFormatException e) {
        return 1;
      }
    }
    return 1;
  }

  /**
   * The root of the retry chain a failing task belongs to, under which its retry is filed ({@code
   * retries:<root>}, upstream event {@code attempt:<n+1>}): the root named by a retry's origin, but
   * a re-filed dead letter ({@code refiled:<id>}) is the root of a chain of its own, attempt 1 of a
   * fresh budget. Under the old chain's root its retries would name the old chain's attempts again,
   * and the idempotent filing would return the old chain's long-ended retries instead of filing new
   * ones.
   */
  private static String chainRootOf(String origin, String upstreamEvent, String id) {
    return upstreamEvent != null && upstreamEvent.startsWith(REFILED) ? id : rootOf(origin, id);
  }

  /**
   * The root named by a task's origin ({@code retries:<root>}), else the task itself: the origin a
   * re-filed successor of a dead letter is filed under ({@code retries:<root>}, upstream event
   * {@code refiled:<id>}), as {@code WorkerReads.deadLetters} finds it.
   */
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
}

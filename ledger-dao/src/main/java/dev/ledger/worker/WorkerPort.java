package dev.ledger.worker;

import dev.ledger.ClaimedTask;
import dev.ledger.Claimer;
import dev.ledger.CompletedBatch;
import dev.ledger.Completion;
import dev.ledger.FailureRecord;
import dev.ledger.InvalidInputException;
import dev.ledger.Lease;
import dev.ledger.LeaseLostException;
import dev.ledger.Ledger;
import dev.ledger.LedgerStorageException;
import dev.ledger.Pickup;
import dev.ledger.Validation;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The ledger's operations that only a worker runtime needs: batch claims that return the rows,
 * batch completions, failed attempts with their retries, the admission of delayed tasks and the
 * reads that time a pickup. {@link WorkerPool} and {@link TenantWorkerPool} run on it; a service
 * that files, claims and completes tasks itself needs only {@link Ledger} (as db-scheduler's users
 * need only its {@code SchedulerClient}, never its {@code TaskRepository}). Get it from {@link
 * Ledger#worker()}, or from {@code ledger.in(connection).worker()} to run it in a caller's
 * transaction.
 *
 * <pre>{@code
 * WorkerPort port = ledger.worker();
 * Claimer me = Claimer.of("worker-1").lease(Duration.ofSeconds(30)).manifest(List.of("sql"));
 * List<ClaimedTask> batch = port.claimTasks("payments", me, 16);
 * List<Completion> done = new ArrayList<>();
 * for (ClaimedTask c : batch) {
 *   try {
 *     run(c.task());
 *     done.add(new Completion(c.lease(), "ok"));
 *   } catch (RuntimeException e) {
 *     port.fail(c.lease(), e.toString(), 5, Duration.ofSeconds(10)); // a retry, or a dead letter
 *   }
 * }
 * CompletedBatch result = port.completeAvailable("payments", done); // busy ones: try again
 * }</pre>
 *
 * <p>Each call is one transaction: the ledger's own, or the caller's for a port of a {@code
 * LedgerTransaction}. Errors as the ledger's: {@link InvalidInputException} (nothing written),
 * {@link LeaseLostException}, {@link LedgerStorageException}. The ledger's port is thread-safe; a
 * transaction's is not, as the caller's connection is not. Implemented by the ledger; implement it
 * elsewhere only as a test double (methods may be added).
 */
public interface WorkerPort {

  /**
   * Claims up to {@code max} claimable tasks of a domain in one statement and returns each with its
   * row as the claim left it: one statement claims the rows, appends their {@code claimed} events
   * and returns them, so a worker needs no second read for the tasks it runs. Which tasks, and in
   * what order, as {@link Ledger#claimBatch(String, Claimer, int)}.
   *
   * @param domain the domain
   * @param claimer who claims, and on what terms; not null
   * @param max the most tasks, 1 to 1000
   * @return the leases and tasks, in claim order (priority descending, then created); empty when
   *     none (or the domain is unknown)
   * @throws InvalidInputException naming {@code domain}, {@code claimer} or {@code max}
   */
  List<ClaimedTask> claimTasks(String domain, Claimer claimer, int max);

  /**
   * Whether the last claim of {@code domain} through this port's ledger was held back by the
   * domain's queue controls (paused, its concurrency limit reached, its rate limit's window full;
   * {@link Ledger#pause}, {@link Ledger#setLimits}), and how soon to claim again when nothing wakes
   * the claimer sooner: a pool waits that long (or for a wake-up: a resume or a changed limit
   * notifies) instead of claiming in a loop. Read from memory, no database call.
   *
   * @param domain the domain
   * @return the control that held it back ({@code paused}, {@code concurrency} or {@code rate}) and
   *     when to claim again; empty when the last claim was not held back. This default: empty
   */
  default Optional<Map.Entry<String, Duration>> heldBack(String domain) {
    return Optional.empty();
  }

  /**
   * Completes several claimed tasks of one domain in one transaction, each under its lease as
   * {@link Ledger#complete} does (same events, same rows), appended set-wise: what a worker pool
   * does with the finished tasks of a batch. A lease that is not its task's current one (or names a
   * task of another domain) is refused without failing the others: it is returned, nothing written
   * for it.
   *
   * @param domain the tasks' domain
   * @param completions the leases and handoffs, in the order their events are appended
   * @return the refused leases, empty when every task was completed
   * @throws InvalidInputException naming {@code lease} or {@code handoff} (nothing written)
   */
  List<Lease> completeAll(String domain, List<Completion> completions);

  /**
   * Completes what it can of a batch of claimed tasks of one domain, in one transaction, without
   * waiting for a row another transaction holds: as {@link #completeAll} (same fence, same events
   * and rows, in the order given), except that a task whose row or route is locked by another
   * transaction is skipped and returned as busy (nothing written for it; try it again while its
   * lease lasts), and a task already completed under this very lease counts as completed, so a
   * completion whose commit's outcome was unknown ({@link LedgerStorageException#outcomeUnknown()})
   * can simply be tried again. What a worker pool does with its finished tasks: one locked row
   * never holds up the others.
   *
   * @param domain the tasks' domain
   * @param completions the leases and handoffs, in the order their events are appended
   * @return what was completed, refused and left busy
   * @throws InvalidInputException naming {@code lease}, {@code handoff} or {@code completions}
   *     (nothing written)
   */
  CompletedBatch completeAvailable(String domain, List<Completion> completions);

  /**
   * Records a failed attempt under its lease, in one transaction: the task is invalidated with the
   * reason {@code attempt <n> of <max> failed at <time>: <error>} and, unless that was its last
   * attempt, a retry is filed from the chain's root (origin {@code retries:<root>}, upstream event
   * {@code attempt:<n+1>}, the same spec otherwise) that may run from {@code now + retryDelay} (it
   * stays proposed until then; {@link #admitDue} admits it) and is named as the failed task's
   * {@code superseded_by}. After the last attempt the task is a dead letter: invalidated with the
   * reason prefixed {@value FailureRecord#DEAD_LETTER} and no successor; {@link Ledger#deadLetters}
   * lists them and {@link Ledger#refile} files one again. Writes only the reference's event kinds
   * ({@code created}, {@code invalidated}). The attempt number is the task's place in its retry
   * chain; a claim after an expired lease is not an attempt.
   *
   * @param lease the current lease of the task
   * @param error what went wrong, 1 to {@value Validation#MAX_BODY} characters
   * @param defaultMaxAttempts the chain's attempts when its spec sets none ({@code max_attempts}
   *     0), 1 to {@value Validation#MAX_ATTEMPTS}
   * @param retryDelay how long after now the retry may run, zero or more
   * @return what was recorded
   * @throws LeaseLostException when the lease is no longer the task's current one (nothing written)
   * @throws InvalidInputException naming {@code error}, {@code max_attempts} or {@code retry_delay}
   */
  FailureRecord fail(Lease lease, String error, int defaultMaxAttempts, Duration retryDelay);

  /**
   * Admits up to {@code max} delayed tasks of a domain whose time has come ({@code not_before} at
   * or before now, still proposed), oldest time first, in one transaction; rows another admitter
   * holds are skipped. Each gets the reference's {@code admitted} event, which wakes the domain's
   * workers.
   *
   * @param domain the domain
   * @param max the most tasks, 1 to 1000
   * @return the ids admitted; empty when none is due or the domain is unknown
   */
  List<String> admitDue(String domain, int max);

  /**
   * The earliest start time among a domain's delayed tasks not yet admitted: when to call {@link
   * #admitDue} next.
   *
   * @param domain the domain
   * @return the time, or empty when none waits (or the domain is unknown)
   */
  Optional<Instant> nextDue(String domain);

  /**
   * How each of several claimed tasks of one domain came to be claimable, from its events in one
   * query: when it became claimable for its current claim (its admission or release, or the end of
   * an expired lease), and whether the current claim took it from an expired lease, the previous
   * holder having stopped heartbeating. Worker pools read it to measure pickup latency and to count
   * an expired lease as a failed attempt.
   *
   * @param domain the domain
   * @param ids ids of claimed tasks
   * @return by task id; tasks not found, or never claimed, are left out
   */
  Map<String, Pickup> pickups(String domain, Collection<String> ids);
}

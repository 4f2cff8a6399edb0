package dev.ledger;

import dev.ledger.append.BatchFiling;
import dev.ledger.append.Filing;
import dev.ledger.append.PromotionRecording;
import dev.ledger.append.Retries;
import dev.ledger.append.Transitions;
import dev.ledger.claim.BatchCompletion;
import dev.ledger.claim.Claims;
import dev.ledger.claim.Leases;
import dev.ledger.event.EventLog;
import dev.ledger.kernel.Engine;
import dev.ledger.kernel.Tx;
import dev.ledger.read.Reads;
import dev.ledger.read.WorkerReads;
import dev.ledger.replay.Rebuild;
import dev.ledger.scrub.Scrubs;
import dev.ledger.worker.WorkerPort;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The ledger's operations, one method each, every one delegating to its operation class ({@code
 * dev.ledger.append}, {@code claim}, {@code scrub}, {@code replay}, {@code read}) with a
 * transaction context. {@link Ledger} runs them in the ledger's own transactions (or joins the
 * transaction the data source's connection is already in); a {@link LedgerTransaction} ({@link
 * Ledger#in(java.sql.Connection)}) runs them in a caller's. Only this package extends it. The
 * operations only a worker runtime needs are on {@link #worker()}, not here (their methods here are
 * deprecated).
 *
 * <p>Errors: {@link InvalidInputException} (nothing written), {@link TaskNotFoundException}, {@link
 * WrongStateException}, {@link LeaseLostException}, {@link SchemaVersionException}, and {@link
 * LedgerStorageException} for database failures. Thread-safe.
 */
// Longer than 600 lines on purpose: the user's whole API, one short delegating method per
// operation with its contract, plus the deprecated forms (positional claims, the worker
// runtime's operations, rebuild) kept for source compatibility; the logic is in the operation
// classes.
public abstract class LedgerOperations {

  /** The operation classes of one ledger, shared by it and its transaction views. */
  static final class Ops {
    final Engine engine;
    final Filing filing;
    final Transitions transitions;
    final PromotionRecording promotions;
    final Claims claims;
    final Leases leases;
    final Scrubs scrubs;
    final Rebuild rebuild;
    final Reads reads;
    final Retries retries;
    final BatchFiling batchFiling;
    final BatchCompletion batchCompletion;
    final WorkerReads workerReads;

    Ops(Engine engine) {
      this.engine = engine;
      EventLog log = new EventLog(engine);
      this.transitions = new Transitions(engine, log);
      this.filing = new Filing(engine, log, transitions);
      this.promotions = new PromotionRecording(engine, log);
      this.claims = new Claims(engine, transitions);
      this.leases = new Leases(engine, transitions);
      this.scrubs = new Scrubs(engine, log);
      this.rebuild = new Rebuild(engine);
      this.reads = new Reads(engine);
      this.retries = new Retries(engine, log, filing, transitions);
      this.batchFiling = new BatchFiling(engine);
      this.batchCompletion = new BatchCompletion(engine);
      this.workerReads = new WorkerReads(engine);
    }
  }

  final Ops ops;

  private final WorkerPort worker;

  LedgerOperations(Ops ops) {
    this.ops = ops;
    this.worker = new OperationsWorkerPort(this);
  }

  /**
   * The operations only a worker runtime needs (batch claims with rows, batch completions, failed
   * attempts, delayed admissions, pickup reads), run in this view's transaction context: the
   * ledger's own transactions, or the caller's for a {@link LedgerTransaction}. {@link
   * dev.ledger.worker.WorkerPool} and {@link dev.ledger.worker.TenantWorkerPool} use it; a service
   * that files, claims and completes tasks itself does not need it.
   *
   * <pre>{@code
   * WorkerPort port = ledger.worker();
   * List<ClaimedTask> batch = port.claimTasks("payments", Claimer.of("worker-1"), 16);
   * }</pre>
   *
   * @return the port; the same one at each call, thread-safe when this view is
   */
  public final WorkerPort worker() {
    return worker;
  }

  /**
   * Runs a write in a transaction context: the ledger's own transaction, or the caller's.
   *
   * @param operation the operation's name, for messages
   * @param body the operation
   * @param <T> its result
   * @return the body's result
   */
  abstract <T> T write(String operation, Function<Tx, T> body);

  /**
   * Runs a write as {@link #write} does, letting the body send statements that commit themselves in
   * a transaction the ledger owns ({@link dev.ledger.kernel.Engine#writeInOneRoundTrip}: a
   * controlled claim); in a caller's transaction, the same as {@link #write}.
   *
   * @param operation the operation's name, for messages
   * @param body the work
   * @param <T> its result
   * @return the body's result
   */
  <T> T writeInOneRoundTrip(String operation, Function<Tx, T> body) {
    return write(operation, body);
  }

  /**
   * Runs a write as {@link #write} does, letting the body send one statement that commits itself in
   * a transaction the ledger owns ({@link dev.ledger.kernel.Engine#writeInOneStatement}: a filing);
   * in a caller's transaction, the same as {@link #write}.
   *
   * @param operation the operation's name, for messages
   * @param body the work
   * @param <T> its result
   * @return the body's result
   */
  <T> T writeInOneStatement(String operation, Function<Tx, T> body) {
    return write(operation, body);
  }

  /**
   * Runs a read in a connection context: a pooled connection, or the caller's transaction.
   *
   * @param operation the operation's name, for messages
   * @param body the read
   * @param <T> its result
   * @return the body's result
   */
  abstract <T> T read(String operation, Function<Tx, T> body);

  /**
   * Runs a write that has no result, as {@link #write} does.
   *
   * @param operation the operation's name, for messages
   * @param body the operation
   */
  final void execute(String operation, Consumer<Tx> body) {
    write(
        operation,
        tx -> {
          body.accept(tx);
          return null;
        });
  }

  // ---------------------------------------------------------------------------------------------
  // filing and transitions (dev.ledger.append)

  /**
   * Files a task, born {@code proposed}; makes the domain's schema first if this is its first task
   * (and runtime DDL is allowed). Filing again from the same origin and upstream event returns the
   * first task's id and writes nothing. Takes the domain's lock shared until the transaction ends
   * (and, with an upstream event, that event's own lock exclusive): other filings into the domain
   * go on, while a replay or scrub of the domain in progress finishes first, and one started later
   * waits for this transaction (issue 26).
   *
   * <p>Outside a caller's transaction, a filing without dependencies into a domain the ledger has
   * seen is one statement that commits itself (one round trip, no separate commit): a connection
   * lost during it is an unknown outcome ({@link LedgerStorageException#outcomeUnknown()}), and a
   * retry is safe when the spec has an upstream event (it finds the task filed, if it was).
   *
   * @param spec what to file, not null
   * @return the task's id, e.g. {@code t0006467c2d6a1f0-3fa85f64}
   * @throws InvalidInputException naming the field: see {@link Validation#spec(TaskSpec)}; also
   *     {@code depends_on} when a dependency does not exist
   * @throws SchemaVersionException when the domain has no schema and runtime DDL is off
   * @throws LedgerConflictException in a caller's transaction that deadlocked with another (for
   *     example each filing two upstream events in opposite orders): roll back and run it again
   * @throws LedgerStorageException when the database fails; {@link
   *     LedgerStorageException#outcomeUnknown()} when the connection was lost during the commit or
   *     the statement that commits itself
   */
  public final String file(TaskSpec spec) {
    return writeInOneStatement("file", tx -> ops.filing.file(tx, spec));
  }

  /**
   * Files a task and admits it in one transaction: its {@code created} and {@code admitted} events
   * are both committed or neither is, so no crash leaves a {@code proposed} task that no worker
   * claims. Filing again from the same origin and upstream event returns the first task's id, and
   * admits that task if it is still proposed (so a retry after {@link
   * LedgerStorageException#outcomeUnknown()} is safe). A spec whose {@code notBefore} is in the
   * future is filed and stays proposed: a worker pool of its domain admits it at its time.
   *
   * @param spec what to file, not null
   * @return the task's id
   * @throws InvalidInputException naming the field, as {@link #file}
   * @throws SchemaVersionException when the domain has no schema and runtime DDL is off
   * @throws LedgerConflictException as {@link #file}
   */
  public final String fileAndAdmit(TaskSpec spec) {
    return writeInOneStatement("file and admit", tx -> ops.filing.fileAndAdmit(tx, spec));
  }

  /**
   * Admits a proposed task to the queue.
   *
   * @param id the task id
   * @throws TaskNotFoundException when no task has the id
   * @throws WrongStateException when the task is not {@code proposed}
   */
  public final void admit(String id) {
    execute("admit", tx -> ops.transitions.admit(tx, id));
  }

  /**
   * Invalidates an open task (proposed, admitted or claimed).
   *
   * @param id the task id
   * @param reason why, 1 to {@value Validation#MAX_BODY} characters
   * @param supersededBy the task replacing it, or null; must exist when given, and not be {@code
   *     id}
   * @throws TaskNotFoundException when no task has the id
   * @throws InvalidInputException naming {@code reason} when it is empty or too long, or {@code
   *     superseded_by} when it names no task or the task itself
   * @throws WrongStateException when the task is already completed or invalidated
   */
  public final void invalidate(String id, String reason, String supersededBy) {
    execute("invalidate", tx -> ops.transitions.invalidate(tx, id, reason, supersededBy));
  }

  /**
   * Records where a completed task's result was posted.
   *
   * @param id the task id
   * @param to where, e.g. {@code tracker:ops} or {@code task:<parent>}
   * @throws TaskNotFoundException when no task has the id
   * @throws WrongStateException when the task is not completed
   */
  public final void post(String id, String to) {
    execute("post", tx -> ops.transitions.post(tx, id, to));
  }

  /**
   * Changes an open task's priority.
   *
   * @param id the task id
   * @param priority the new priority
   * @param why why, 1 to {@value Validation#MAX_BODY} characters
   * @throws TaskNotFoundException when no task has the id
   * @throws WrongStateException when the task is completed or invalidated
   */
  public final void rescore(String id, long priority, String why) {
    execute("rescore", tx -> ops.transitions.rescore(tx, id, priority, why));
  }

  // ---------------------------------------------------------------------------------------------
  // claims and leases (dev.ledger.claim)

  /**
   * Claims the next claimable task of a domain: admitted (or claimed with an expired lease), every
   * requirement in the claimer's manifest, label within its handling, every dependency completed
   * (in whatever domain), no open continuation; highest priority first, then oldest. One SQL
   * statement picks and updates the row ({@code FOR UPDATE SKIP LOCKED} in a materialized CTE,
   * walking the {@code tasks_claimable} index), so its cost does not grow with the queue's depth
   * and two claimers never take the same task.
   *
   * <pre>{@code
   * Optional<Lease> lease = ledger.claimNext("payments",
   *     Claimer.of("worker-1").lease(Duration.ofMinutes(5)).manifest(List.of("sql")));
   * }</pre>
   *
   * @param domain the domain
   * @param claimer who claims, and on what terms (holder, lease, manifest, handling); not null
   * @return the lease, or empty when nothing is claimable (or the domain is unknown)
   * @throws InvalidInputException naming {@code domain} or {@code claimer}
   */
  public final Optional<Lease> claimNext(String domain, Claimer claimer) {
    List<Lease> one = claimBatch(domain, claimer, 1);
    if (one.size() > 1) {
      throw new IllegalStateException("a claim of one returned " + one.size() + " tasks");
    }
    return one.stream().findFirst();
  }

  /**
   * Claims the next claimable task of a domain, as {@link #claimNext(String, Claimer)} does.
   *
   * @param domain the domain
   * @param holder who claims, 1 to {@value Validation#MAX_NAME} characters
   * @param lease how long the lease lasts; more than zero, at most {@link Validation#MAX_LEASE}
   * @param manifest what the claimer can do (requirements it meets), not null
   * @param handling the highest label it may handle, not null
   * @return the lease, or empty when nothing is claimable (or the domain is unknown)
   * @throws InvalidInputException naming {@code domain}, {@code holder}, {@code lease}, {@code
   *     manifest} or {@code handling}
   * @deprecated use {@link #claimNext(String, Claimer)}: {@code claimNext(domain,
   *     Claimer.of(holder).lease(lease).manifest(manifest).handling(handling))}
   */
  @Deprecated
  public final Optional<Lease> claimNext(
      String domain, String holder, Duration lease, Collection<String> manifest, Label handling) {
    Validation.domain(domain);
    return claimNext(domain, claimer(holder, lease, manifest, handling));
  }

  /**
   * Claims up to {@code max} claimable tasks in one statement, as {@link #claimNext(String,
   * Claimer)} does for one.
   *
   * @param domain the domain
   * @param claimer who claims, and on what terms; not null
   * @param max the most tasks, 1 to 1000
   * @return the leases, in claim order (priority descending, then created); empty when none
   * @throws InvalidInputException naming {@code domain}, {@code claimer} or {@code max}
   */
  public final List<Lease> claimBatch(String domain, Claimer claimer, int max) {
    return writeInOneRoundTrip("claim", tx -> ops.claims.claimBatch(tx, domain, claimer, max));
  }

  /**
   * Claims up to {@code max} claimable tasks in one statement, as {@link #claimBatch(String,
   * Claimer, int)} does.
   *
   * @param domain the domain
   * @param holder who claims
   * @param lease how long each lease lasts
   * @param manifest what the claimer can do
   * @param handling the highest label it may handle
   * @param max the most tasks, 1 to 1000
   * @return the leases, in claim order (priority descending, then created); empty when none
   * @throws InvalidInputException naming the invalid argument
   * @deprecated use {@link #claimBatch(String, Claimer, int)}: {@code claimBatch(domain,
   *     Claimer.of(holder).lease(lease).manifest(manifest).handling(handling), max)}
   */
  @Deprecated
  public final List<Lease> claimBatch(
      String domain,
      String holder,
      Duration lease,
      Collection<String> manifest,
      Label handling,
      int max) {
    Validation.domain(domain);
    return claimBatch(domain, claimer(holder, lease, manifest, handling), max);
  }

  /**
   * Claims up to {@code max} claimable tasks and returns each with its row, as {@link
   * WorkerPort#claimTasks} does.
   *
   * @param domain the domain
   * @param holder who claims
   * @param lease how long each lease lasts
   * @param manifest what the claimer can do
   * @param handling the highest label it may handle
   * @param max the most tasks, 1 to 1000
   * @return the leases and tasks, in claim order (priority descending, then created); empty when
   *     none
   * @throws InvalidInputException naming the invalid argument
   * @deprecated for worker runtimes only; use {@code ledger.worker().claimTasks(domain,
   *     Claimer.of(holder).lease(lease).manifest(manifest).handling(handling), max)} ({@link
   *     WorkerPort#claimTasks})
   */
  @Deprecated
  public final List<ClaimedTask> claimTasks(
      String domain,
      String holder,
      Duration lease,
      Collection<String> manifest,
      Label handling,
      int max) {
    Validation.domain(domain);
    return worker.claimTasks(domain, claimer(holder, lease, manifest, handling), max);
  }

  /**
   * Claims one given task, when it is claimable by this claimer.
   *
   * @param id the task id
   * @param claimer who claims, and on what terms; not null
   * @return the lease
   * @throws InvalidInputException naming {@code claimer} when it is null
   * @throws TaskNotFoundException when no task has the id
   * @throws WrongStateException when the task is not claimable by this claimer, saying why
   */
  public final Lease claim(String id, Claimer claimer) {
    return write("claim", tx -> ops.claims.claim(tx, id, claimer));
  }

  /**
   * Claims one given task, as {@link #claim(String, Claimer)} does.
   *
   * @param id the task id
   * @param holder who claims
   * @param lease how long the lease lasts
   * @param manifest what the claimer can do
   * @param handling the highest label it may handle
   * @return the lease
   * @throws InvalidInputException naming {@code holder}, {@code lease}, {@code manifest} or {@code
   *     handling}
   * @throws TaskNotFoundException when no task has the id
   * @throws WrongStateException when the task is not claimable by this claimer, saying why
   * @deprecated use {@link #claim(String, Claimer)}: {@code claim(id,
   *     Claimer.of(holder).lease(lease).manifest(manifest).handling(handling))}
   */
  @Deprecated
  public final Lease claim(
      String id, String holder, Duration lease, Collection<String> manifest, Label handling) {
    return claim(id, claimer(holder, lease, manifest, handling));
  }

  /** The claimer of the positional signatures, checked in their order. */
  private static Claimer claimer(
      String holder, Duration lease, Collection<String> manifest, Label handling) {
    return Claimer.of(holder).lease(lease).manifest(manifest).handling(handling);
  }

  /**
   * Extends a lease.
   *
   * @param lease the current lease
   * @param extend the new lease runs this long from now; more than zero
   * @return the extended lease
   * @throws LeaseLostException when the lease is no longer the task's current one
   */
  public final Lease heartbeat(Lease lease, Duration extend) {
    return write("heartbeat", tx -> ops.leases.heartbeat(tx, lease, extend));
  }

  /**
   * Gives a claimed task back to the queue.
   *
   * @param lease the current lease
   * @throws LeaseLostException when the lease is no longer the task's current one
   */
  public final void release(Lease lease) {
    execute("release", tx -> ops.leases.release(tx, lease));
  }

  /**
   * Leaves a handoff note on a claimed task.
   *
   * @param lease the current lease
   * @param handoff the note, 1 to {@value Validation#MAX_BODY} characters
   * @throws LeaseLostException when the lease is no longer the task's current one
   */
  public final void leaveHandoff(Lease lease, String handoff) {
    execute("leave handoff", tx -> ops.leases.leaveHandoff(tx, lease, handoff));
  }

  /**
   * Completes a claimed task.
   *
   * @param lease the current lease
   * @param handoff the result note, or null
   * @throws LeaseLostException when the lease is no longer the task's current one (it expired and
   *     another worker claimed the task, or it was released or invalidated)
   */
  public final void complete(Lease lease, String handoff) {
    execute("complete", tx -> ops.leases.complete(tx, lease, handoff));
  }

  // ---------------------------------------------------------------------------------------------
  // promotions (dev.ledger.append)

  /**
   * Records a promotion unless this promoter promoted this version of the entry to this tier
   * already; the domain's lock is held from the check to the commit, so two processes recording the
   * same promotion record it once. Makes the domain's schema when needed.
   *
   * @param spec the promotion
   * @return true when recorded, false when it was there already
   * @throws InvalidInputException naming the field, see {@link Validation#promotion}
   */
  public final boolean recordPromotion(PromotionSpec spec) {
    return recordPromotion(spec, false);
  }

  /**
   * Records a promotion as {@link #recordPromotion(PromotionSpec)} does, with its why marked erased
   * or not: {@code why_erased} of its {@code promoted} event and of its row, as the reference's
   * {@code record_promotion(at, spec, why_erased)} takes it (e.g. copying a promotion whose why was
   * erased elsewhere). The why is stored as given.
   *
   * @param spec the promotion
   * @param whyErased true to record it with its why erased
   * @return true when recorded, false when it was there already
   * @throws InvalidInputException naming the field, see {@link Validation#promotion}
   */
  public final boolean recordPromotion(PromotionSpec spec, boolean whyErased) {
    return write("record promotion", tx -> ops.promotions.record(tx, spec, whyErased));
  }

  // ---------------------------------------------------------------------------------------------
  // scrubs (dev.ledger.scrub)

  /**
   * Removes the why from an entry's promotion events and rows, in one transaction under the
   * domain's lock. Ports the reference's {@code scrub_promotions}.
   *
   * @param domain the domain
   * @param entry the entry
   * @return how many records of the entry hold no why now
   */
  public final int scrubPromotions(String domain, String entry) {
    return write("scrub promotions", tx -> ops.scrubs.scrubPromotions(tx, domain, entry));
  }

  /**
   * Rewrites every task filed from {@code origin} to the redaction, in its events and its row, and
   * invalidates the open ones, in one transaction under the domain's lock. Ports {@code
   * scrub_tasks}, and reaches more than it does.
   *
   * <p>Reached: the domain's tasks filed from {@code origin}, and at any depth every task filed as
   * {@code retries:<id>} of a task reached (the retries and re-filed dead letters the ledger files
   * with the text of the task they repeat). Rewritten on each: the title and body, the invalidation
   * reason (a failed attempt keeps its header {@code [dead letter: ]attempt n of max failed at
   * <time>: }, the error text replaced, so a dead letter stays one), the handoffs, the post
   * destinations ({@code posted_to}) and the whys of priority changes. Kept: ids, origin, upstream
   * event, creator, holder, requirements, numbers and times. Not reached: a task filed under any
   * other origin, such as a child filed as {@code task:<id>} or {@code continues:<id>} of a task
   * reached (scrub its origin too), and other domains. A replay of the scrubbed log rebuilds the
   * scrubbed rows exactly; a second scrub changes nothing.
   *
   * @param domain the domain
   * @param origin the origin
   * @param redaction what to write instead
   * @return how many tasks the scrub reached; 0 when the domain is unknown
   * @throws InvalidInputException naming {@code domain}, {@code origin} or the redaction's field
   */
  public final int scrubTasks(String domain, String origin, Redaction redaction) {
    return write("scrub tasks", tx -> ops.scrubs.scrubTasks(tx, domain, origin, redaction));
  }

  /**
   * Both scrubs of an erasure in one transaction under the domain's lock: {@link #scrubPromotions}
   * of {@code entry} and {@link #scrubTasks} of {@code origin} (which says what it reaches). Ports
   * {@code scrub_entry}.
   *
   * @param domain the domain
   * @param entry the entry whose promotions lose their why
   * @param origin the origin whose tasks are redacted
   * @param redaction what to write instead
   * @return the counts of both scrubs
   */
  public final ScrubResult scrubEntry(
      String domain, String entry, String origin, Redaction redaction) {
    return write("scrub entry", tx -> ops.scrubs.scrubEntry(tx, domain, entry, origin, redaction));
  }

  // ---------------------------------------------------------------------------------------------
  // replay (dev.ledger.replay)

  /**
   * Replays every domain's events into a fresh projection ({@code tasks}, {@code promotions}, the
   * domain's routes in {@code ledger_tasks}, and the derived claim classes, dependency edges and
   * {@code blocked} flags), all domains in one transaction: a failure anywhere leaves every old
   * projection as it was. Per domain, the old rows are deleted, the events are streamed in sequence
   * order ({@code COPY TO STDOUT}, payloads read by a streaming JSON parser) and folded in memory
   * with the same {@link dev.ledger.event.Projection} the live operations use, and the rows are
   * written with {@code COPY ... FROM STDIN}. Until it commits, readers see the old projection.
   * Holds one domain's task rows in memory at a time. Ports {@code rebuild}.
   *
   * <p>Locks: every domain's lock (the reference's {@code pg_advisory_xact_lock(hashtext(
   * 'ledger_domain:' || domain))}) is taken first, in domain order, and held until the replay's
   * transaction ends, as the reference's {@code rebuild} holds each: a scrub, a filing or a
   * promotion of any domain, by this ledger or the reference stack, waits for the replay and then
   * works on the rebuilt projection. Claims and transitions by id take no domain lock; they wait on
   * the rows the replay rewrote.
   *
   * @return how many events were replayed
   * @throws LedgerStorageException when the database fails or refuses a replayed row (the SQLState
   *     is kept)
   * @throws LedgerException when a stored event is not format v1, a task has two {@code created}
   *     events, or a replayed value cannot be stored (a U+0000 in a text); the message names the
   *     task or the column, never the value; nothing is changed
   */
  public final long replay() {
    return replay("replay");
  }

  /**
   * Replays every domain's events into a fresh projection, as {@link #replay()} does.
   *
   * @return how many events were replayed
   * @throws LedgerStorageException when the database fails or refuses a replayed row
   * @throws LedgerException when a stored event cannot be replayed; nothing is changed
   * @deprecated use {@link #replay()}, the one name of this operation (the CLI's {@code ledger-app
   *     replay}, the docs' "replay"); its error messages begin {@code replay: } where this one's
   *     begin {@code rebuild: }
   */
  @Deprecated
  public final long rebuild() {
    return replay("rebuild"); // its messages keep their prefix "rebuild: "
  }

  private long replay(String operation) {
    long n = write(operation, ops.rebuild::rebuild);
    ops.engine.directory().forget();
    return n;
  }

  // ---------------------------------------------------------------------------------------------
  // reads (dev.ledger.read)

  /**
   * One task.
   *
   * @param id the task id
   * @return the task
   * @throws TaskNotFoundException when no task has the id
   */
  public final Task get(String id) {
    return read("get", tx -> ops.reads.get(tx, id));
  }

  /**
   * A domain's tasks in a status, in claim order (priority descending, then created).
   *
   * @param domain the domain
   * @param status the status, not null
   * @return the tasks; empty when none or the domain is unknown
   * @throws InvalidInputException naming {@code status} when it is null
   */
  public final List<Task> list(String domain, Status status) {
    if (status == null) {
      throw new InvalidInputException(
          "status", "must not be null (list one status at a time; countByStatus counts them all)");
    }
    return read("list", tx -> ops.reads.list(tx, domain, status));
  }

  /**
   * A domain's completed tasks from some origin whose result is not yet posted, oldest first.
   *
   * @param domain the domain
   * @return the tasks
   */
  public final List<Task> unposted(String domain) {
    return read("list", tx -> ops.reads.unposted(tx, domain));
  }

  /**
   * The tasks of a task's domain that depend on it, oldest first.
   *
   * @param id the task id
   * @return the dependents; empty when none or the task is unknown
   */
  public final List<Task> dependents(String id) {
    return read("dependents", tx -> ops.reads.dependents(tx, id));
  }

  /**
   * What was filed from a task: its children ({@code task:<id>}), its continuation ({@code
   * continues:<id>}) and its retries ({@code retries:<id>}), in its domain, oldest first.
   *
   * @param parent the task id
   * @return the tasks; empty when none or the task is unknown
   */
  public final List<Task> filedFrom(String parent) {
    return read("filed from", tx -> ops.reads.filedFrom(tx, parent));
  }

  /**
   * A domain's tasks filed from an origin, oldest first.
   *
   * @param domain the domain
   * @param origin the origin
   * @return the tasks
   */
  public final List<Task> withOrigin(String domain, String origin) {
    return read("list", tx -> ops.reads.withOrigin(tx, domain, origin));
  }

  /**
   * The task filed from an origin's upstream event, if any.
   *
   * @param domain the domain
   * @param origin the origin
   * @param upstreamEvent the upstream event
   * @return its id, or empty
   */
  public final Optional<String> findOrigin(String domain, String origin, String upstreamEvent) {
    return read("find origin", tx -> ops.reads.findOrigin(tx, domain, origin, upstreamEvent));
  }

  /**
   * The payload of a task's {@code created} event, as stored (format v1 JSON).
   *
   * @param id the task id
   * @return the JSON text
   * @throws TaskNotFoundException when no task has the id
   */
  public final String createdPayload(String id) {
    return read("created payload", tx -> ops.reads.createdPayload(tx, id));
  }

  /**
   * A task's events, in order.
   *
   * @param id the task id
   * @return its events, oldest first
   * @throws TaskNotFoundException when no task has the id
   */
  public final List<LoggedEvent> history(String id) {
    return read("history", tx -> ops.reads.history(tx, id));
  }

  /**
   * An entry's promotions, in the order recorded.
   *
   * @param domain the domain
   * @param entry the entry
   * @return the promotions; empty when none or the domain is unknown
   */
  public final List<Promotion> promotions(String domain, String entry) {
    return read("promotions", tx -> ops.reads.promotions(tx, domain, entry));
  }

  /**
   * Every domain with a schema, sorted.
   *
   * @return the domain names
   */
  public final List<String> domains() {
    return read("domains", Reads::domains);
  }

  /**
   * Every domain with its schema, version and task counts by status, sorted by domain. Costs one
   * query per domain.
   *
   * @return the domains
   */
  public final List<DomainInfo> describeDomains() {
    return read("describe domains", ops.reads::describeDomains);
  }

  /**
   * How many events every domain holds.
   *
   * @return the count
   */
  public final long eventCount() {
    return read("event count", ops.reads::eventCount);
  }

  // ---------------------------------------------------------------------------------------------
  // batches, dead letters, counts (dev.ledger.append.Retries, BatchFiling;
  // dev.ledger.read.WorkerReads); the worker runtime's own operations are on worker()
  // (OperationsWorkerPort), and their methods here are deprecated

  /**
   * Files and admits several tasks of one domain in one call and one transaction: for each spec the
   * {@code created} and (unless it names a future {@code notBefore}; then it stays proposed until a
   * worker pool admits it) {@code admitted} events and the row {@link #file} and {@link #admit}
   * write, appended set-wise. Makes the domain's schema first when needed. Idempotent on origin as
   * {@code file}: a spec whose origin and upstream event were filed before, or earlier in the
   * batch, returns that task's id and writes nothing. All or nothing: a refused spec writes none.
   *
   * @param specs 1 to 5,000 specs of one domain
   * @return the task ids, in the order of {@code specs}
   * @throws InvalidInputException naming the field of the first invalid spec, {@code specs}, {@code
   *     domain} (two domains in one batch) or {@code depends_on} (a dependency that does not exist)
   * @throws SchemaVersionException when the domain has no schema and runtime DDL is off
   */
  public final List<String> fileAll(List<TaskSpec> specs) {
    return writeInOneStatement("file all", tx -> ops.batchFiling.fileAll(tx, specs));
  }

  /**
   * Completes several claimed tasks of one domain in one transaction, as {@link
   * WorkerPort#completeAll} does.
   *
   * @param domain the tasks' domain
   * @param completions the leases and handoffs, in the order their events are appended
   * @return the refused leases, empty when every task was completed
   * @throws InvalidInputException naming {@code lease} or {@code handoff} (nothing written)
   * @deprecated for worker runtimes only; use {@code ledger.worker().completeAll(domain,
   *     completions)} ({@link WorkerPort#completeAll})
   */
  @Deprecated
  public final List<Lease> completeAll(String domain, List<Completion> completions) {
    return worker.completeAll(domain, completions);
  }

  /**
   * Completes what it can of a batch of claimed tasks of one domain, as {@link
   * WorkerPort#completeAvailable} does.
   *
   * @param domain the tasks' domain
   * @param completions the leases and handoffs, in the order their events are appended
   * @return what was completed, refused and left busy
   * @throws InvalidInputException naming {@code lease}, {@code handoff} or {@code completions}
   *     (nothing written)
   * @deprecated for worker runtimes only; use {@code ledger.worker().completeAvailable(domain,
   *     completions)} ({@link WorkerPort#completeAvailable})
   */
  @Deprecated
  public final CompletedBatch completeAvailable(String domain, List<Completion> completions) {
    return worker.completeAvailable(domain, completions);
  }

  /**
   * Records a failed attempt under its lease, and files its retry or makes it a dead letter, as
   * {@link WorkerPort#fail} does.
   *
   * @param lease the current lease of the task
   * @param error what went wrong, 1 to {@value Validation#MAX_BODY} characters
   * @param defaultMaxAttempts the chain's attempts when its spec sets none, 1 to {@value
   *     Validation#MAX_ATTEMPTS}
   * @param retryDelay how long after now the retry may run, zero or more
   * @return what was recorded
   * @throws LeaseLostException when the lease is no longer the task's current one (nothing written)
   * @throws InvalidInputException naming {@code error}, {@code max_attempts} or {@code retry_delay}
   * @deprecated for worker runtimes only; use {@code ledger.worker().fail(lease, error,
   *     defaultMaxAttempts, retryDelay)} ({@link WorkerPort#fail})
   */
  @Deprecated
  public final FailureRecord fail(
      Lease lease, String error, int defaultMaxAttempts, Duration retryDelay) {
    return worker.fail(lease, error, defaultMaxAttempts, retryDelay);
  }

  /**
   * Admits up to {@code max} delayed tasks of a domain whose time has come, as {@link
   * WorkerPort#admitDue} does.
   *
   * @param domain the domain
   * @param max the most tasks, 1 to 1000
   * @return the ids admitted; empty when none is due or the domain is unknown
   * @deprecated for worker runtimes only; use {@code ledger.worker().admitDue(domain, max)} ({@link
   *     WorkerPort#admitDue})
   */
  @Deprecated
  public final List<String> admitDue(String domain, int max) {
    return worker.admitDue(domain, max);
  }

  /**
   * Files a dead letter again, admitted, with a fresh budget of attempts: origin {@code
   * retries:<root>}, upstream event {@code refiled:<id>}, so re-filing it twice files it once.
   *
   * @param deadLetterId the dead letter's id
   * @return the new task's id
   * @throws TaskNotFoundException when no task has the id
   * @throws WrongStateException when the task is not a dead letter
   */
  public final String refile(String deadLetterId) {
    return write("refile", tx -> ops.retries.refile(tx, ops.reads.get(tx, deadLetterId)));
  }

  /**
   * The earliest start time among a domain's delayed tasks not yet admitted, as {@link
   * WorkerPort#nextDue} reads it.
   *
   * @param domain the domain
   * @return the time, or empty when none waits (or the domain is unknown)
   * @deprecated for worker runtimes only; use {@code ledger.worker().nextDue(domain)} ({@link
   *     WorkerPort#nextDue})
   */
  @Deprecated
  public final Optional<java.time.Instant> nextDue(String domain) {
    return worker.nextDue(domain);
  }

  /**
   * A domain's dead letters (tasks invalidated after their last attempt) that are not re-filed yet,
   * oldest first; each keeps its last error in {@link Task#reason()}. Once {@link #refile} files a
   * dead letter again it leaves this list (its successor may come back as a dead letter of its
   * own); {@code get} still reads it, and its successor is found by origin {@code retries:<root>}
   * and upstream event {@code refiled:<id>}.
   *
   * @param domain the domain
   * @return the tasks; empty when none or the domain is unknown
   */
  public final List<Task> deadLetters(String domain) {
    return read("dead letters", tx -> ops.workerReads.deadLetters(tx, domain));
  }

  /**
   * Several tasks of one domain in one query, in the order of {@code ids}; ids without a task in
   * the domain are left out.
   *
   * @param domain the domain
   * @param ids the task ids
   * @return the tasks found
   */
  public final List<Task> tasks(String domain, java.util.Collection<String> ids) {
    return read("tasks", tx -> ops.workerReads.tasks(tx, domain, ids));
  }

  /**
   * How each of several claimed tasks of one domain came to be claimable, as {@link
   * WorkerPort#pickups} reads it.
   *
   * @param domain the domain
   * @param ids ids of claimed tasks
   * @return by task id; tasks not found, or never claimed, are left out
   * @deprecated for worker runtimes only; use {@code ledger.worker().pickups(domain, ids)} ({@link
   *     WorkerPort#pickups})
   */
  @Deprecated
  public final java.util.Map<String, Pickup> pickups(
      String domain, java.util.Collection<String> ids) {
    return worker.pickups(domain, ids);
  }

  /**
   * A domain's task counts by status (every status present, 0 where none): one grouped count over
   * the domain's tasks, for gauges sampled now and then.
   *
   * @param domain the domain
   * @return the counts; all 0 when the domain is unknown
   */
  public final java.util.Map<Status, Long> countByStatus(String domain) {
    return read("count by status", tx -> ops.workerReads.countByStatus(tx, domain));
  }
}

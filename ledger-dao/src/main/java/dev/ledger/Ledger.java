package dev.ledger;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_DOMAINS;
import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static dev.ledger.codegen.db.ledger_template.Tables.CLAIM_CLASSES;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.PROMOTIONS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledger.codegen.db.ledger_template.tables.Tasks;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.internal.ClaimIndex;
import dev.ledger.internal.Directory;
import dev.ledger.internal.Event;
import dev.ledger.internal.Projection;
import dev.ledger.internal.RenderedStatement;
import dev.ledger.internal.RenderedStatement.Slot;
import dev.ledger.internal.Replay;
import dev.ledger.internal.Rows;
import dev.ledger.internal.Scrub;
import dev.ledger.schema.RenderMappedDsl;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jooq.CommonTableExpression;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record1;
import org.jooq.Record2;
import org.jooq.Record3;
import org.jooq.Table;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * The ledger: an event-sourced task queue on PostgreSQL, one schema per domain. Every operation
 * appends its event and updates the projection in one transaction; {@link #rebuild()} replays the
 * events into the projection again. Ports the reference backend's {@code Db} ({@code
 * crates/ledger/src/postgres.rs}). Thread-safe; share one instance per data source.
 *
 * <pre>{@code
 * Ledger ledger = Ledger.open(dataSource, LedgerConfig.defaults());
 * String id = ledger.file(TaskSpec.builder("payments", "Reconcile batch 42").build());
 * ledger.admit(id);
 * Optional<Lease> lease = ledger.claimNext("payments", "worker-1", Duration.ofMinutes(5),
 *     List.of(), Label.PUBLIC);
 * lease.ifPresent(l -> ledger.complete(l, "done"));
 * }</pre>
 *
 * <p>Errors: {@link InvalidInputException} (nothing written), {@link TaskNotFoundException}, {@link
 * WrongStateException}, {@link LeaseLostException}, {@link SchemaVersionException}, and {@link
 * LedgerStorageException} for database failures. The data source should allow at least three
 * connections: provisioning a new domain holds one while Flyway uses others.
 */
public final class Ledger {

  private static final String COMPLETED = Status.COMPLETED.wire();
  private static final String INVALIDATED = Status.INVALIDATED.wire();

  /**
   * The largest window a claim grows to when concurrent transactions hold the rows of a smaller one
   * (see {@link #claimBatch}): far more locked rows than any pool has connections.
   */
  static final int MAX_CLAIM_WINDOW = 1 << 20;

  final RenderMappedDsl dsl;
  final RenderedStatement.Cache statements = new RenderedStatement.Cache();
  final Directory directory;
  private final Clock clock;
  private final WorkerOps workerOps = new WorkerOps(this);
  private final BatchCompletion batches = new BatchCompletion(this);
  private final BatchFiling filing = new BatchFiling(this);

  /** The prefix of a dead letter's reason: {@code dead letter: attempt 3 of 3 failed at ...}. */
  public static final String DEAD_LETTER = "dead letter:";

  private Ledger(DataSource dataSource, LedgerConfig config) {
    this.dsl = new RenderMappedDsl(dataSource, config.directorySchema(), config.executeListeners());
    this.directory = new Directory(dataSource, dsl, statements, config.runtimeDdl());
    this.clock = config.clock();
  }

  /**
   * Opens the ledger on a data source: checks the directory schema's version and, when runtime DDL
   * is allowed, migrates it.
   *
   * @param dataSource the database, not null; a pool of at least 3 connections
   * @param config the configuration, not null
   * @return the ledger
   * @throws SchemaVersionException when the directory is behind (and runtime DDL is off) or ahead,
   *     or holds a reference-stack ledger that the migration job must adopt first
   * @throws LedgerStorageException when the database cannot be used
   */
  public static Ledger open(DataSource dataSource, LedgerConfig config) {
    Ledger ledger = new Ledger(dataSource, config);
    ledger.run(
        "open",
        () -> {
          ledger.directory.checkDirectory();
          return null;
        });
    return ledger;
  }

  /**
   * Opens the ledger with {@link LedgerConfig#defaults()}.
   *
   * @param dataSource the database, not null
   * @return the ledger
   * @throws SchemaVersionException see {@link #open(DataSource, LedgerConfig)}
   */
  public static Ledger open(DataSource dataSource) {
    return open(dataSource, LedgerConfig.defaults());
  }

  // ---------------------------------------------------------------------------------------------
  // filing and transitions

  /**
   * Files a task, born {@code proposed}; makes the domain's schema first if this is its first task
   * (and runtime DDL is allowed). Filing again from the same origin and upstream event returns the
   * first task's id and writes nothing.
   *
   * @param spec what to file, not null
   * @return the task's id, e.g. {@code t0006467c2d6a1f0-3fa85f64}
   * @throws InvalidInputException naming the field: see {@link Validation#spec(TaskSpec)}; also
   *     {@code depends_on} when a dependency does not exist
   * @throws SchemaVersionException when the domain has no schema and runtime DDL is off
   */
  public String file(TaskSpec spec) {
    Validation.spec(spec);
    return run(
        "file",
        () -> {
          // before the domain's schema is made: a refused filing writes nothing at all. Tasks are
          // never deleted, so a dependency seen here still exists at commit.
          checkDependencies(dsl.directory(), spec.dependsOn());
          String schema = directory.ensure(spec.domain());
          if (spec.upstreamEvent() != null) {
            Optional<String> first = findOrigin(spec.domain(), spec.origin(), spec.upstreamEvent());
            if (first.isPresent()) {
              return first.get();
            }
          }
          String id = newId();
          try {
            dsl.forSchema(schema).transaction(cfg -> fileIn(cfg.dsl(), id, now(), spec));
            return id;
          } catch (DataAccessException e) {
            // a concurrent filing of the same upstream event won the unique key tasks_origin
            if ("23505".equals(e.sqlState()) && spec.upstreamEvent() != null) {
              Optional<String> first =
                  findOrigin(spec.domain(), spec.origin(), spec.upstreamEvent());
              if (first.isPresent()) {
                return first.get();
              }
            }
            throw e;
          }
        });
  }

  /**
   * Admits a proposed task to the queue.
   *
   * @param id the task id
   * @throws TaskNotFoundException when no task has the id
   * @throws WrongStateException when the task is not {@code proposed}
   */
  public void admit(String id) {
    transition(
        id,
        "admit",
        row -> {
          if (!Status.PROPOSED.wire().equals(row.getStatus())) {
            throw wrong(row, "admit", "only a proposed task can be admitted");
          }
          if (row.getNotBefore() != null && row.getNotBefore().isAfter(now())) {
            throw wrong(
                row,
                "admit",
                "it may not run before "
                    + row.getNotBefore()
                    + "; a worker pool of its domain admits it then");
          }
          return new Event.Admitted();
        });
  }

  /**
   * Invalidates an open task (proposed, admitted or claimed).
   *
   * @param id the task id
   * @param reason why, 1 to {@value Validation#MAX_BODY} characters
   * @param supersededBy the task replacing it, or null; must exist when given
   * @throws TaskNotFoundException when no task has the id (or {@code supersededBy} names none)
   * @throws WrongStateException when the task is already completed or invalidated
   */
  public void invalidate(String id, String reason, String supersededBy) {
    Validation.required("reason", reason, Validation.MAX_BODY);
    Validation.text("superseded_by", supersededBy, Validation.MAX_NAME);
    if (supersededBy != null && directory.schemaOfTask(supersededBy).isEmpty()) {
      throw new InvalidInputException("superseded_by", "no task with id '" + supersededBy + "'");
    }
    transition(
        id,
        "invalidate",
        row -> {
          if (Status.parse(row.getStatus()).terminal()) {
            throw wrong(row, "invalidate", "only an open task can be invalidated");
          }
          return new Event.Invalidated(reason, supersededBy);
        });
  }

  /**
   * Records where a completed task's result was posted.
   *
   * @param id the task id
   * @param to where, e.g. {@code tracker:ops} or {@code task:<parent>}
   * @throws TaskNotFoundException when no task has the id
   * @throws WrongStateException when the task is not completed
   */
  public void post(String id, String to) {
    Validation.required("to", to, Validation.MAX_NAME);
    transition(
        id,
        "post",
        row -> {
          if (!COMPLETED.equals(row.getStatus())) {
            throw wrong(row, "post", "only a completed task's result can be posted");
          }
          return new Event.Posted(to);
        });
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
  public void rescore(String id, long priority, String why) {
    Validation.required("why", why, Validation.MAX_BODY);
    transition(
        id,
        "rescore",
        row -> {
          if (Status.parse(row.getStatus()).terminal()) {
            throw wrong(row, "rescore", "only an open task can be rescored");
          }
          return new Event.Rescored(priority, why);
        });
  }

  // ---------------------------------------------------------------------------------------------
  // claims and leases

  /**
   * Claims the next claimable task of a domain: admitted (or claimed with an expired lease), every
   * requirement in {@code manifest}, label within {@code handling}, every dependency completed (in
   * whatever domain), no open continuation; highest priority first, then oldest. One SQL statement
   * picks and updates the row ({@code FOR UPDATE SKIP LOCKED} in a materialized CTE, walking the
   * {@code tasks_claimable} index), so its cost does not grow with the queue's depth and two
   * claimers never take the same task.
   *
   * @param domain the domain
   * @param holder who claims, 1 to {@value Validation#MAX_NAME} characters
   * @param lease how long the lease lasts; more than zero, at most {@link Validation#MAX_LEASE}
   * @param manifest what the claimer can do (requirements it meets), not null
   * @param handling the highest label it may handle, not null
   * @return the lease, or empty when nothing is claimable (or the domain is unknown)
   * @throws InvalidInputException naming {@code holder}, {@code lease}, {@code manifest} or {@code
   *     handling}
   */
  public Optional<Lease> claimNext(
      String domain, String holder, Duration lease, Collection<String> manifest, Label handling) {
    List<Lease> one = claimBatch(domain, holder, lease, manifest, handling, 1);
    if (one.size() > 1) {
      throw new IllegalStateException("a claim of one returned " + one.size() + " tasks");
    }
    return one.stream().findFirst();
  }

  /**
   * Claims up to {@code max} claimable tasks in one statement, as {@link #claimNext} does for one.
   *
   * @param domain the domain
   * @param holder who claims
   * @param lease how long each lease lasts
   * @param manifest what the claimer can do
   * @param handling the highest label it may handle
   * @param max the most tasks, 1 to 1000
   * @return the leases, in claim order (priority descending, then created); empty when none
   * @throws InvalidInputException naming the invalid argument
   */
  public List<Lease> claimBatch(
      String domain,
      String holder,
      Duration lease,
      Collection<String> manifest,
      Label handling,
      int max) {
    Validation.domain(domain);
    Validation.required("holder", holder, Validation.MAX_NAME);
    Validation.leaseDuration("lease", lease);
    checkManifest(manifest, handling);
    if (max < 1 || max > 1000) {
      throw new InvalidInputException("max", "must be 1 to 1000, was " + max);
    }
    return run(
        "claim",
        () -> {
          Optional<String> schema = directory.schemaOf(domain);
          if (schema.isEmpty()) {
            return List.of();
          }
          return dsl.forSchema(schema.get())
              .transactionResult(
                  cfg -> {
                    DSLContext tx = cfg.dsl();
                    Instant now = now();
                    Instant until = now.plus(lease);
                    ClaimArgs args =
                        new ClaimArgs(
                            now, until, holder, jsonArray(List.copyOf(manifest)), handling.rank());
                    int window = claimWindow(max);
                    List<Claimed> rows = new ArrayList<>(claimIn(tx, args, max, window));
                    // short of max with a full window: concurrent transactions hold (or just
                    // changed) rows of the window; look behind them in a window 8 times larger
                    while (rows.size() < max
                        && window <= MAX_CLAIM_WINDOW / 8
                        && windowFull(tx, args, window)) {
                      window *= 8;
                      rows.addAll(claimIn(tx, args, max - rows.size(), window));
                    }
                    rows.sort(CLAIM_ORDER);
                    List<Lease> leases = new ArrayList<>(rows.size());
                    for (Claimed row : rows) {
                      leases.add(new Lease(row.id(), holder, row.attempts(), until));
                    }
                    if (!rows.isEmpty()) {
                      appendToEach(
                          tx,
                          rows.stream().map(Claimed::id).toArray(String[]::new),
                          now,
                          new Event.Claimed(holder, until));
                    }
                    return leases;
                  });
        });
  }

  /**
   * Claims one given task, when it is claimable by this claimer.
   *
   * @param id the task id
   * @param holder who claims
   * @param lease how long the lease lasts
   * @param manifest what the claimer can do
   * @param handling the highest label it may handle
   * @return the lease
   * @throws TaskNotFoundException when no task has the id
   * @throws WrongStateException when the task is not claimable by this claimer, saying why
   */
  public Lease claim(
      String id, String holder, Duration lease, Collection<String> manifest, Label handling) {
    Validation.required("holder", holder, Validation.MAX_NAME);
    Validation.leaseDuration("lease", lease);
    checkManifest(manifest, handling);
    Instant[] until = new Instant[1];
    TasksRecord after =
        transition(
            id,
            "claim",
            row -> {
              Instant now = now();
              Tasks t = TASKS.as("t");
              boolean ok =
                  DSL.using(row.configuration())
                      .fetchExists(
                          DSL.selectOne()
                              .from(t)
                              .where(t.ID.eq(id))
                              .and(
                                  claimable(
                                      t,
                                      DSL.val(now, t.LEASE_UNTIL),
                                      DSL.val(jsonArray(List.copyOf(manifest))),
                                      DSL.val(handling.rank(), t.LABEL_RANK))));
              if (!ok) {
                throw wrong(row, "claim", whyNotClaimable(row, now, manifest, handling));
              }
              until[0] = now.plus(lease);
              return new Event.Claimed(holder, until[0]);
            });
    return new Lease(id, holder, after.getAttempts(), until[0]);
  }

  /**
   * Extends a lease.
   *
   * @param lease the current lease
   * @param extend the new lease runs this long from now; more than zero
   * @return the extended lease
   * @throws LeaseLostException when the lease is no longer the task's current one
   */
  public Lease heartbeat(Lease lease, Duration extend) {
    Validation.leaseDuration("extend", extend);
    Instant[] until = new Instant[1];
    fenced(
        lease,
        "heartbeat",
        row -> {
          until[0] = now().plus(extend);
          return new Event.Heartbeat(until[0]);
        });
    return new Lease(lease.taskId(), lease.holder(), lease.attempt(), until[0]);
  }

  /**
   * Gives a claimed task back to the queue.
   *
   * @param lease the current lease
   * @throws LeaseLostException when the lease is no longer the task's current one
   */
  public void release(Lease lease) {
    fenced(lease, "release", row -> new Event.Released());
  }

  /**
   * Leaves a handoff note on a claimed task.
   *
   * @param lease the current lease
   * @param handoff the note, 1 to {@value Validation#MAX_BODY} characters
   * @throws LeaseLostException when the lease is no longer the task's current one
   */
  public void leaveHandoff(Lease lease, String handoff) {
    Validation.required("handoff", handoff, Validation.MAX_BODY);
    fenced(lease, "leave a handoff on", row -> new Event.HandoffLeft(handoff));
  }

  /**
   * Completes a claimed task.
   *
   * @param lease the current lease
   * @param handoff the result note, or null
   * @throws LeaseLostException when the lease is no longer the task's current one (it expired and
   *     another worker claimed the task, or it was released or invalidated)
   */
  public void complete(Lease lease, String handoff) {
    Validation.text("handoff", handoff, Validation.MAX_BODY);
    fenced(lease, "complete", row -> new Event.Completed(handoff));
  }

  // ---------------------------------------------------------------------------------------------
  // promotions and scrubs

  /**
   * Records a promotion unless this promoter promoted this version of the entry to this tier
   * already; the domain's lock is held from the check to the commit, so two processes recording the
   * same promotion record it once. Makes the domain's schema when needed.
   *
   * @param spec the promotion
   * @return true when recorded, false when it was there already
   * @throws InvalidInputException naming the field, see {@link Validation#promotion}
   */
  public boolean recordPromotion(PromotionSpec spec) {
    Validation.promotion(spec);
    return run(
        "record promotion",
        () -> {
          String schema = directory.ensure(spec.domain());
          return dsl.forSchema(schema)
              .transactionResult(
                  cfg -> {
                    DSLContext tx = cfg.dsl();
                    Directory.lockDomain(tx, spec.domain());
                    boolean seen =
                        tx.fetchExists(
                            DSL.selectOne()
                                .from(PROMOTIONS)
                                .where(PROMOTIONS.ENTRY.eq(spec.entry()))
                                .and(PROMOTIONS.TIER.eq(spec.tier()))
                                .and(PROMOTIONS.DIGEST.eq(spec.digest()))
                                .and(PROMOTIONS.PROMOTER.eq(spec.by())));
                    if (seen) {
                      return false;
                    }
                    Instant now = now();
                    appendOnly(
                        tx, promotionKey(spec.entry()), now, new Event.Promoted(spec, false));
                    tx.insertInto(PROMOTIONS).set(Projection.promoted(now, spec, false)).execute();
                    return true;
                  });
        });
  }

  /**
   * An entry's promotions, in the order recorded.
   *
   * @param domain the domain
   * @param entry the entry
   * @return the promotions; empty when none or the domain is unknown
   */
  public List<Promotion> promotions(String domain, String entry) {
    Validation.domain(domain);
    return run(
        "promotions",
        () ->
            directory
                .schemaOf(domain)
                .map(
                    s ->
                        dsl.forSchema(s)
                            .selectFrom(PROMOTIONS)
                            .where(PROMOTIONS.DOMAIN.eq(domain))
                            .and(PROMOTIONS.ENTRY.eq(entry))
                            .orderBy(PROMOTIONS.SEQ)
                            .fetch(Rows::promotion))
                .orElse(List.of()));
  }

  /**
   * Removes the why from an entry's promotion events and rows, in one transaction under the
   * domain's lock. Ports the reference's {@code scrub_promotions}.
   *
   * @param domain the domain
   * @param entry the entry
   * @return how many records of the entry hold no why now
   */
  public int scrubPromotions(String domain, String entry) {
    Validation.domain(domain);
    Validation.required("entry", entry, Validation.MAX_NAME);
    return underDomainLock(
        "scrub promotions", domain, 0, tx -> Scrub.promotions(tx, domain, entry));
  }

  /**
   * Rewrites every task filed from {@code origin} to the redaction, in its events and its row, and
   * invalidates the open ones, in one transaction under the domain's lock. Ports {@code
   * scrub_tasks}.
   *
   * @param domain the domain
   * @param origin the origin
   * @param redaction what to write instead
   * @return how many tasks were filed from the origin
   */
  public int scrubTasks(String domain, String origin, Redaction redaction) {
    Validation.domain(domain);
    Validation.required("origin", origin, Validation.MAX_NAME);
    checkRedaction(redaction);
    return underDomainLock("scrub tasks", domain, 0, tx -> scrubTasksIn(tx, origin, redaction));
  }

  /**
   * Both scrubs of an erasure in one transaction under the domain's lock. Ports {@code
   * scrub_entry}.
   *
   * @param domain the domain
   * @param entry the entry whose promotions lose their why
   * @param origin the origin whose tasks are redacted
   * @param redaction what to write instead
   * @return the counts of both scrubs
   */
  public ScrubResult scrubEntry(String domain, String entry, String origin, Redaction redaction) {
    Validation.domain(domain);
    Validation.required("entry", entry, Validation.MAX_NAME);
    Validation.required("origin", origin, Validation.MAX_NAME);
    checkRedaction(redaction);
    return underDomainLock(
        "scrub entry",
        domain,
        new ScrubResult(0, 0),
        tx ->
            new ScrubResult(
                Scrub.promotions(tx, domain, entry), scrubTasksIn(tx, origin, redaction)));
  }

  // ---------------------------------------------------------------------------------------------
  // replay

  /**
   * Replays every domain's events into a fresh projection ({@code tasks}, {@code promotions}, the
   * domain's routes in {@code ledger_tasks}, and the derived claim classes, dependency edges and
   * {@code blocked} flags), all domains in one transaction: a failure anywhere leaves every old
   * projection as it was. Per domain, the old rows are deleted, the events are streamed in sequence
   * order ({@code COPY TO STDOUT}, payloads read by a streaming JSON parser) and folded in memory
   * with the same {@link Projection} the live operations use, and the rows are written with {@code
   * COPY ... FROM STDIN}. Until it commits, readers see the old projection. Holds one domain's task
   * rows in memory at a time. Ports {@code rebuild}.
   *
   * @return how many events were replayed
   * @throws LedgerStorageException when the database fails or refuses a replayed row (e.g. a
   *     duplicate key from a hand-edited log; the SQLState is kept)
   * @throws LedgerException when a stored event is not format v1, or a replayed value cannot be
   *     stored (a U+0000 in a text); the message names the task or the column, never the value
   */
  public long rebuild() {
    return run(
        "rebuild",
        () -> {
          List<String> domains = domains();
          long n =
              dsl.directory()
                  .transactionResult(
                      cfg -> {
                        long count = 0;
                        DSLContext any = cfg.dsl();
                        for (String domain : domains) {
                          String schema = directory.schemaOf(domain).orElseThrow();
                          count += Replay.domain(onSameTransaction(any, domain), domain, schema);
                        }
                        for (String domain : domains) {
                          ClaimIndex.recomputeBlocked(onSameTransaction(any, domain));
                        }
                        return count;
                      });
          directory.forget();
          return n;
        });
  }

  /**
   * How many events every domain holds.
   *
   * @return the count
   */
  public long eventCount() {
    return run(
        "event count",
        () -> {
          long n = 0;
          for (String domain : domains()) {
            String schema = directory.schemaOf(domain).orElseThrow();
            n += dsl.forSchema(schema).fetchCount(EVENTS);
          }
          return n;
        });
  }

  // ---------------------------------------------------------------------------------------------
  // reads

  /**
   * One task.
   *
   * @param id the task id
   * @return the task
   * @throws TaskNotFoundException when no task has the id
   */
  public Task get(String id) {
    return run(
        "get",
        () -> {
          String schema = schemaOfTask(id);
          TasksRecord row =
              dsl.forSchema(schema).selectFrom(TASKS).where(TASKS.ID.eq(id)).fetchOne();
          if (row == null) {
            throw new TaskNotFoundException(id);
          }
          return Rows.task(row);
        });
  }

  /**
   * A domain's tasks in a status, in claim order (priority descending, then created).
   *
   * @param domain the domain
   * @param status the status
   * @return the tasks; empty when none or the domain is unknown
   */
  public List<Task> list(String domain, Status status) {
    return select(
        domain,
        TASKS.STATUS.eq(status.wire()),
        List.of(TASKS.PRIORITY.desc(), TASKS.CREATED.asc()));
  }

  /**
   * A domain's completed tasks from some origin whose result is not yet posted, oldest first.
   *
   * @param domain the domain
   * @return the tasks
   */
  public List<Task> unposted(String domain) {
    return select(
        domain,
        TASKS.STATUS.eq(COMPLETED).and(TASKS.ORIGIN.isNotNull()).and(TASKS.POSTED_TO.isNull()),
        List.of(TASKS.CREATED.asc()));
  }

  /**
   * The tasks of a task's domain that depend on it, oldest first.
   *
   * @param id the task id
   * @return the dependents; empty when none or the task is unknown
   */
  public List<Task> dependents(String id) {
    return run(
        "dependents",
        () ->
            directory
                .schemaOfTask(id)
                .map(
                    s ->
                        dsl.forSchema(s)
                            .selectFrom(TASKS)
                            .where(
                                DSL.condition(
                                    "{0}::jsonb @> {1}::jsonb",
                                    TASKS.DEPENDS_ON, DSL.val(jsonArray(List.of(id)))))
                            .orderBy(TASKS.CREATED.asc())
                            .fetch(Rows::task))
                .orElse(List.of()));
  }

  /**
   * What was filed from a task: its children ({@code task:<id>}), its continuation ({@code
   * continues:<id>}) and its retries ({@code retries:<id>}), in its domain, oldest first.
   *
   * @param parent the task id
   * @return the tasks; empty when none or the task is unknown
   */
  public List<Task> filedFrom(String parent) {
    return run(
        "filed from",
        () ->
            directory
                .schemaOfTask(parent)
                .map(
                    s ->
                        dsl.forSchema(s)
                            .selectFrom(TASKS)
                            .where(
                                TASKS.ORIGIN.in(
                                    "task:" + parent, "continues:" + parent, "retries:" + parent))
                            .orderBy(TASKS.CREATED.asc())
                            .fetch(Rows::task))
                .orElse(List.of()));
  }

  /**
   * A domain's tasks filed from an origin, oldest first.
   *
   * @param domain the domain
   * @param origin the origin
   * @return the tasks
   */
  public List<Task> withOrigin(String domain, String origin) {
    return select(domain, TASKS.ORIGIN.eq(origin), List.of(TASKS.CREATED.asc()));
  }

  /**
   * The task filed from an origin's upstream event, if any.
   *
   * @param domain the domain
   * @param origin the origin
   * @param upstreamEvent the upstream event
   * @return its id, or empty
   */
  public Optional<String> findOrigin(String domain, String origin, String upstreamEvent) {
    Validation.domain(domain);
    return run(
        "find origin",
        () ->
            directory
                .schemaOf(domain)
                .flatMap(
                    s ->
                        dsl.forSchema(s)
                            .select(TASKS.ID)
                            .from(TASKS)
                            .where(TASKS.ORIGIN.eq(origin))
                            .and(TASKS.UPSTREAM_EVENT.eq(upstreamEvent))
                            .fetchOptional(TASKS.ID)));
  }

  /**
   * The payload of a task's {@code created} event, as stored (format v1 JSON).
   *
   * @param id the task id
   * @return the JSON text
   * @throws TaskNotFoundException when no task has the id
   */
  public String createdPayload(String id) {
    return run(
        "created payload",
        () ->
            dsl.forSchema(schemaOfTask(id))
                .select(EVENTS.PAYLOAD)
                .from(EVENTS)
                .where(EVENTS.TASK_ID.eq(id))
                .and(EVENTS.KIND.eq("created"))
                .orderBy(EVENTS.SEQ)
                .limit(1)
                .fetchOptional(EVENTS.PAYLOAD)
                .map(Object::toString)
                .orElseThrow(() -> new TaskNotFoundException(id)));
  }

  /**
   * A task's events, in order.
   *
   * @param id the task id
   * @return its events, oldest first
   * @throws TaskNotFoundException when no task has the id
   */
  public List<LoggedEvent> history(String id) {
    return run(
        "history",
        () ->
            dsl.forSchema(schemaOfTask(id))
                .selectFrom(EVENTS)
                .where(EVENTS.TASK_ID.eq(id))
                .orderBy(EVENTS.SEQ)
                .fetch(
                    r ->
                        new LoggedEvent(
                            r.getSeq(),
                            r.getTaskId(),
                            r.getKind(),
                            r.getAt(),
                            r.getPayload().toString())));
  }

  /**
   * Every domain with a schema, sorted.
   *
   * @return the domain names
   */
  public List<String> domains() {
    return run(
        "domains",
        () ->
            dsl.directory()
                .select(LEDGER_DOMAINS.DOMAIN)
                .from(LEDGER_DOMAINS)
                .orderBy(LEDGER_DOMAINS.DOMAIN)
                .fetch(LEDGER_DOMAINS.DOMAIN));
  }

  /**
   * Every domain with its schema, version and task counts by status, sorted by domain. Costs one
   * query per domain.
   *
   * @return the domains
   */
  public List<DomainInfo> describeDomains() {
    return run(
        "describe domains",
        () -> {
          List<DomainInfo> out = new ArrayList<>();
          for (String domain : domains()) {
            String schema = directory.schemaOf(domain).orElseThrow();
            DSLContext ctx = dsl.forSchema(schema);
            java.util.EnumMap<Status, Long> counts = new java.util.EnumMap<>(Status.class);
            for (Status st : Status.values()) {
              counts.put(st, 0L);
            }
            ctx.select(TASKS.STATUS, DSL.count())
                .from(TASKS)
                .groupBy(TASKS.STATUS)
                .fetch()
                .forEach(r -> counts.put(Status.parse(r.value1()), r.value2().longValue()));
            String version =
                Directory.latestVersion(
                        ctx, schema, dev.ledger.schema.LedgerMigrations.DOMAIN_HISTORY)
                    .map(v -> v.getVersion())
                    .orElse(null);
            out.add(
                new DomainInfo(
                    domain, schema, version, java.util.Collections.unmodifiableMap(counts)));
          }
          return out;
        });
  }

  /**
   * Makes a domain's schema ahead of its first task, for deployments whose runtime role may not run
   * DDL (call it from the migration job). Does nothing when the schema exists and is current.
   *
   * @param domain the domain
   * @return the schema name, unquoted
   * @throws SchemaVersionException when runtime DDL is off in this ledger's configuration
   */
  public String provision(String domain) {
    Validation.domain(domain);
    return run("provision", () -> directory.ensure(domain));
  }

  // ---------------------------------------------------------------------------------------------
  // batches (worker pools; see BatchCompletion)

  /**
   * Files and admits several tasks of one domain in one call and one transaction: for each spec the
   * {@code created} and (unless it names a future {@code notBefore}, then it stays proposed until a
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
  public List<String> fileAll(List<TaskSpec> specs) {
    return filing.fileAll(specs);
  }

  /**
   * Completes several claimed tasks of one domain in one transaction, each under its lease as
   * {@link #complete} does (same events, same rows), appended set-wise: what a worker pool does
   * with the finished tasks of a batch. A lease that is not its task's current one (or names a task
   * of another domain) is refused without failing the others: it is returned, nothing written for
   * it.
   *
   * @param domain the tasks' domain
   * @param completions the leases and handoffs, in the order their events are appended
   * @return the refused leases, empty when every task was completed
   * @throws InvalidInputException naming {@code lease} or {@code handoff} (nothing written)
   */
  public List<Lease> completeAll(String domain, List<Completion> completions) {
    return batches.completeAll(domain, completions);
  }

  /**
   * Several tasks of one domain in one query, in the order of {@code ids}; ids without a task in
   * the domain are left out.
   *
   * @param domain the domain
   * @param ids the task ids
   * @return the tasks found
   */
  public List<Task> tasks(String domain, Collection<String> ids) {
    return batches.tasks(domain, ids);
  }

  // ---------------------------------------------------------------------------------------------
  // failures, retries and delays (worker pools; see WorkerOps)

  /**
   * Records a failed attempt under its lease, in one transaction: the task is invalidated with the
   * reason {@code attempt <n> of <max> failed at <time>: <error>} and, unless that was its last
   * attempt, a retry is filed from the chain's root (origin {@code retries:<root>}, upstream event
   * {@code attempt:<n+1>}, the same spec otherwise) that may run from {@code now + retryDelay} (it
   * stays proposed until then; {@link #admitDue} admits it) and is named as the failed task's
   * {@code superseded_by}. After the last attempt the task is a dead letter: invalidated with the
   * reason prefixed {@value #DEAD_LETTER} and no successor; {@link #deadLetters} lists them and
   * {@link #refile} files one again. Writes only the reference's event kinds ({@code created},
   * {@code invalidated}). The attempt number is the task's place in its retry chain; a claim after
   * an expired lease is not an attempt.
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
  public FailureRecord fail(
      Lease lease, String error, int defaultMaxAttempts, Duration retryDelay) {
    return workerOps.fail(lease, error, defaultMaxAttempts, retryDelay);
  }

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
  public List<String> admitDue(String domain, int max) {
    return workerOps.admitDue(domain, max);
  }

  /**
   * The earliest start time among a domain's delayed tasks not yet admitted.
   *
   * @param domain the domain
   * @return the time, or empty when none waits (or the domain is unknown)
   */
  public Optional<Instant> nextDue(String domain) {
    return workerOps.nextDue(domain);
  }

  /**
   * A domain's dead letters (tasks invalidated after their last attempt), oldest first; each keeps
   * its last error in {@link Task#reason()}.
   *
   * @param domain the domain
   * @return the tasks; empty when none or the domain is unknown
   */
  public List<Task> deadLetters(String domain) {
    return workerOps.deadLetters(domain);
  }

  /**
   * A domain's task counts by status (every status present, 0 where none): one grouped count over
   * the domain's tasks, for gauges sampled now and then.
   *
   * @param domain the domain
   * @return the counts; all 0 when the domain is unknown
   */
  public Map<Status, Long> countByStatus(String domain) {
    return workerOps.countByStatus(domain);
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
  public String refile(String deadLetterId) {
    return workerOps.refile(deadLetterId);
  }

  // ---------------------------------------------------------------------------------------------
  // internals

  /** The event key of an entry's promotions: {@code promotion:<entry>}. */
  static String promotionKey(String entry) {
    return "promotion:" + entry;
  }

  Instant now() {
    return Instant.now(clock).truncatedTo(ChronoUnit.MICROS);
  }

  /** Time-ordered, unique across processes: {@code t} + 14 hex of epoch µs + 8 random hex. */
  String newId() {
    Instant now = Instant.now(clock);
    long micros = ChronoUnit.MICROS.between(Instant.EPOCH, now);
    return String.format(
        "t%014x-%08x", micros, ThreadLocalRandom.current().nextInt() & 0xffffffffL);
  }

  String schemaOfTask(String id) {
    if (id == null || id.isEmpty()) {
      throw new InvalidInputException("id", "must not be empty");
    }
    return directory.schemaOfTask(id).orElseThrow(() -> new TaskNotFoundException(id));
  }

  void appendOnly(DSLContext tx, String taskId, Instant at, Event event) {
    statements
        .get(
            tx,
            "append event",
            () ->
                DSL.insertInto(EVENTS)
                    .set(EVENTS.TASK_ID, EVENT_TASK.field())
                    .set(EVENTS.KIND, EVENT_KIND.field())
                    .set(EVENTS.AT, EVENT_AT.field())
                    .set(EVENTS.PAYLOAD, EVENT_PAYLOAD.field()),
            List.of(EVENT_TASK, EVENT_KIND, EVENT_AT, EVENT_PAYLOAD))
        .execute(tx, taskId, event.kind(), at, event.payload());
  }

  /**
   * Appends the same event to several tasks in one statement, in the order given: a batch claim
   * logs its claims with one round trip instead of one per task ({@code INSERT ... SELECT} over
   * {@code unnest(ids) WITH ORDINALITY}, so {@code seq} follows the claim order).
   */
  void appendToEach(DSLContext tx, String[] taskIds, Instant at, Event event) {
    int n =
        statements
            .get(
                tx,
                "append event to each",
                () -> {
                  Table<?> ids =
                      DSL.unnest(EVENT_TASKS.field()).withOrdinality().as("c", "task_id", "n");
                  return DSL.insertInto(
                          EVENTS, EVENTS.TASK_ID, EVENTS.KIND, EVENTS.AT, EVENTS.PAYLOAD)
                      .select(
                          DSL.select(
                                  ids.field("task_id", String.class),
                                  EVENT_KIND.field(),
                                  EVENT_AT.field(),
                                  EVENT_PAYLOAD.field())
                              .from(ids)
                              .orderBy(ids.field("n")));
                },
                List.of(EVENT_TASKS, EVENT_KIND, EVENT_AT, EVENT_PAYLOAD))
            .execute(tx, taskIds, event.kind(), at, event.payload());
    if (n != taskIds.length) {
      throw new IllegalStateException(
          "appending " + event.kind() + " to " + taskIds.length + " tasks wrote " + n + " events");
    }
  }

  /**
   * Inserts a new task row, or updates a locked one, writing its changed columns: one rendered
   * statement per set of changed columns (an event changes the same columns every time).
   */
  void writeRow(DSLContext tx, TasksRecord row, boolean insert) {
    Field<?>[] fields = TASKS.fields();
    List<Slot<?>> slots = new ArrayList<>(fields.length + 1);
    List<Object> values = new ArrayList<>(fields.length + 1);
    StringBuilder name = new StringBuilder(insert ? "insert task" : "update task");
    List<Field<?>> changed = new ArrayList<>(fields.length);
    for (int i = 0; i < fields.length; i++) {
      if (row.changed(fields[i])) {
        slots.add(TASK_COLUMNS.get(i));
        values.add(row.get(fields[i]));
        changed.add(fields[i]);
        name.append(' ').append(fields[i].getName());
      }
    }
    if (changed.isEmpty()) {
      return;
    }
    // the SET clause is built only when the statement is first rendered
    Supplier<Map<Field<?>, Field<?>>> set =
        () -> {
          Map<Field<?>, Field<?>> columns = new LinkedHashMap<>();
          for (int i = 0; i < changed.size(); i++) {
            columns.put(changed.get(i), slots.get(i).field());
          }
          return columns;
        };
    int n;
    if (insert) {
      n =
          statements
              .get(tx, name.toString(), () -> DSL.insertInto(TASKS).set(set.get()), slots)
              .execute(tx, values.toArray());
    } else {
      slots.add(TASK_ID);
      values.add(row.getId());
      n =
          statements
              .get(
                  tx,
                  name.toString(),
                  () -> DSL.update(TASKS).set(set.get()).where(TASKS.ID.eq(TASK_ID.field())),
                  slots)
              .execute(tx, values.toArray());
    }
    if (n != 1) {
      throw new IllegalStateException(
          (insert ? "inserting" : "updating") + " task " + row.getId() + " wrote " + n + " rows");
    }
    row.changed(false);
  }

  /**
   * Files a task in a transaction on its domain's schema: the {@code created} event, the row, its
   * claim class and dependency edges, and its route.
   */
  void fileIn(DSLContext tx, String id, Instant now, TaskSpec spec) {
    appendOnly(tx, id, now, new Event.Created(id, spec));
    TasksRecord row = Projection.created(id, now, spec);
    ClaimIndex.filed(tx, statements, row);
    writeRow(tx, row, true);
    statements
        .get(
            tx,
            "insert route",
            () ->
                DSL.insertInto(LEDGER_TASKS)
                    .set(LEDGER_TASKS.ID, ROUTE_ID.field())
                    .set(LEDGER_TASKS.DOMAIN, ROUTE_DOMAIN.field())
                    .set(LEDGER_TASKS.COMPLETED, ROUTE_COMPLETED.field()),
            List.of(ROUTE_ID, ROUTE_DOMAIN, ROUTE_COMPLETED))
        .execute(tx, id, spec.domain(), false);
  }

  /** An operation on one task by id: lock its row, decide the event, append and project it. */
  TasksRecord transition(String id, String operation, EventDecider decide) {
    return run(
        operation,
        () ->
            dsl.forSchema(schemaOfTask(id))
                .transactionResult(
                    cfg -> {
                      DSLContext tx = cfg.dsl();
                      TasksRecord row =
                          statements
                              .get(
                                  tx,
                                  "lock task",
                                  () ->
                                      DSL.selectFrom(TASKS)
                                          .where(TASKS.ID.eq(TASK_ID.field()))
                                          .forUpdate(),
                                  List.of(TASK_ID))
                              .fetchInto(tx, TASKS, id)
                              .stream()
                              .findFirst()
                              .orElse(null);
                      if (row == null) {
                        throw new TaskNotFoundException(id);
                      }
                      Event event = decide.decide(row);
                      applyToRow(tx, row, now(), event);
                      return row;
                    }));
  }

  /** An operation under a lease: refused unless the lease is the task's current one. */
  void fenced(Lease lease, String operation, EventDecider decide) {
    if (lease == null) {
      throw new InvalidInputException("lease", "must not be null");
    }
    transition(
        lease.taskId(),
        operation,
        row -> {
          boolean current =
              Status.CLAIMED.wire().equals(row.getStatus())
                  && lease.holder().equals(row.getHolder())
                  && row.getAttempts() == lease.attempt();
          if (!current) {
            throw new LeaseLostException(lease, operation, describe(row));
          }
          return decide.decide(row);
        });
  }

  void applyToRow(DSLContext tx, TasksRecord row, Instant at, Event event) {
    appendOnly(tx, row.getId(), at, event);
    Projection.apply(row, event);
    writeRow(tx, row, false);
    if (event instanceof Event.Completed) {
      statements
          .get(
              tx,
              "complete route",
              () ->
                  DSL.update(LEDGER_TASKS)
                      .set(LEDGER_TASKS.COMPLETED, ROUTE_COMPLETED.field())
                      .where(LEDGER_TASKS.ID.eq(ROUTE_ID.field())),
              List.of(ROUTE_COMPLETED, ROUTE_ID))
          .execute(tx, true, row.getId());
      ClaimIndex.completed(tx, statements, row.getId(), domain -> onSameTransaction(tx, domain));
    }
  }

  /** A context on {@code tx}'s transaction, render-mapped to a domain's schema. */
  DSLContext onSameTransaction(DSLContext tx, String domain) {
    String schema = directory.schemaOf(domain).orElseThrow(() -> new TaskNotFoundException(domain));
    return DSL.using(tx.configuration().derive(dsl.forSchema(schema).configuration().settings()));
  }

  /**
   * Runs {@code body} in one transaction on a domain's schema holding the domain's lock; returns
   * {@code unknown} when the domain has no schema.
   */
  private <T> T underDomainLock(
      String operation, String domain, T unknown, java.util.function.Function<DSLContext, T> body) {
    return run(
        operation,
        () ->
            directory
                .schemaOf(domain)
                .map(
                    s ->
                        dsl.forSchema(s)
                            .transactionResult(
                                cfg -> {
                                  Directory.lockDomain(cfg.dsl(), domain);
                                  return body.apply(cfg.dsl());
                                }))
                .orElse(unknown));
  }

  private int scrubTasksIn(DSLContext tx, String origin, Redaction redaction) {
    List<TasksRecord> rows =
        tx.selectFrom(TASKS)
            .where(TASKS.ORIGIN.eq(origin))
            .orderBy(TASKS.CREATED)
            .forUpdate()
            .fetch();
    Instant now = now();
    for (TasksRecord row : rows) {
      if (!Status.parse(row.getStatus()).terminal()) {
        applyToRow(tx, row, now, new Event.Invalidated(redaction.reason(), null));
      }
      Scrub.redactTask(tx, row, redaction);
    }
    return rows.size();
  }

  private List<Task> select(
      String domain, Condition where, List<? extends org.jooq.OrderField<?>> order) {
    Validation.domain(domain);
    return run(
        "list",
        () ->
            directory
                .schemaOf(domain)
                .map(
                    s ->
                        dsl.forSchema(s)
                            .selectFrom(TASKS)
                            .where(where)
                            .orderBy(order)
                            .fetch(Rows::task))
                .orElse(List.of()));
  }

  private static void checkDependencies(DSLContext ctx, List<String> dependsOn) {
    if (dependsOn.isEmpty()) {
      return;
    }
    List<String> known =
        ctx.select(LEDGER_TASKS.ID)
            .from(LEDGER_TASKS)
            .where(LEDGER_TASKS.ID.in(dependsOn))
            .fetch(LEDGER_TASKS.ID);
    for (String d : dependsOn) {
      if (!known.contains(d)) {
        throw new InvalidInputException("depends_on", "no task with id '" + d + "'");
      }
    }
  }

  private static void checkManifest(Collection<String> manifest, Label handling) {
    if (manifest == null) {
      throw new InvalidInputException("manifest", "must not be null (use an empty list)");
    }
    for (String m : manifest) {
      Validation.required("manifest", m, Validation.MAX_NAME);
    }
    if (handling == null) {
      throw new InvalidInputException("handling", "must not be null");
    }
  }

  private static void checkRedaction(Redaction redaction) {
    if (redaction == null) {
      throw new InvalidInputException("redaction", "must not be null");
    }
    Validation.required("redaction.title", redaction.title(), Validation.MAX_TITLE);
    Validation.text("redaction.body", redaction.body(), Validation.MAX_BODY);
    Validation.required("redaction.reason", redaction.reason(), Validation.MAX_BODY);
  }

  // Slots of the statements rendered once per domain schema (RenderedStatement): the hot paths'.
  private static final Slot<String> TASK_ID = Slot.of("id", TASKS.ID.getDataType());
  private static final Slot<String> EVENT_TASK = Slot.of("task_id", EVENTS.TASK_ID.getDataType());
  private static final Slot<String[]> EVENT_TASKS =
      Slot.of("task ids", EVENTS.TASK_ID.getDataType().getArrayDataType());
  private static final Slot<String> EVENT_KIND = Slot.of("kind", EVENTS.KIND.getDataType());
  private static final Slot<Instant> EVENT_AT = Slot.of("at", EVENTS.AT.getDataType());
  private static final Slot<JsonNode> EVENT_PAYLOAD =
      Slot.of("payload", EVENTS.PAYLOAD.getDataType());
  private static final Slot<String> ROUTE_ID = Slot.of("id", LEDGER_TASKS.ID.getDataType());
  private static final Slot<String> ROUTE_DOMAIN =
      Slot.of("domain", LEDGER_TASKS.DOMAIN.getDataType());
  private static final Slot<Boolean> ROUTE_COMPLETED =
      Slot.of("completed", LEDGER_TASKS.COMPLETED.getDataType());

  /** A slot per column of {@code tasks}, in the table's column order. */
  private static final List<Slot<?>> TASK_COLUMNS =
      Arrays.stream(TASKS.fields()).<Slot<?>>map(Ledger::columnSlot).toList();

  private static <T> Slot<T> columnSlot(Field<T> column) {
    return Slot.of(column.getName(), column.getDataType());
  }

  private static final Slot<Instant> NOW = Slot.of("now", TASKS.LEASE_UNTIL.getDataType());
  private static final Slot<Instant> UNTIL = Slot.of("until", TASKS.LEASE_UNTIL.getDataType());
  private static final Slot<String> HOLDER = Slot.of("holder", TASKS.HOLDER.getDataType());
  private static final Slot<String> MANIFEST = Slot.of("manifest", SQLDataType.CLOB);
  private static final Slot<Long> RANK = Slot.of("handling rank", TASKS.LABEL_RANK.getDataType());
  private static final Slot<Integer> MAX = Slot.of("max", SQLDataType.INTEGER);
  private static final Slot<Integer> WINDOW = Slot.of("window", SQLDataType.INTEGER);

  /** The values every claim statement of one claim binds. */
  private record ClaimArgs(Instant now, Instant until, String holder, String manifest, long rank) {}

  /** What the claim returns of each row it claims. */
  private static final Field<?>[] CLAIMED = {
    TASKS.ID, TASKS.ATTEMPTS, TASKS.PRIORITY, TASKS.CREATED
  };

  /** What the check of a claim's window returns. */
  private static final Field<?>[] COUNT = {DSL.field(DSL.name("count"), Integer.class)};

  /** A claimed row, as the claim's {@code RETURNING} gives it. */
  private record Claimed(String id, long attempts, long priority, Instant created) {}

  /** Claim order: priority descending, then oldest first. */
  private static final Comparator<Claimed> CLAIM_ORDER =
      Comparator.comparingLong(Claimed::priority).reversed().thenComparing(Claimed::created);

  /**
   * The rows a claim takes, as a CTE {@code candidate(id)}: up to {@code max} claimable tasks,
   * locked {@code FOR UPDATE SKIP LOCKED}, in claim order. Rather than filter every open task in
   * claim order (which costs as many rows as there are tasks the claimer cannot take ahead of the
   * first it can), it reads the domain's {@code claim_classes} its handling level and manifest
   * admit, walks {@code tasks_claim_class} once per admitted class (tasks with an open dependency
   * are not in that index), merges the walks in claim order into a window of {@link #claimWindow}
   * rows, and locks from the window after checking every condition again on the current row
   * versions. The window only holds rows that were claimable when the statement began, so it comes
   * up short only when more claimers than the window's slack are locking the same rows at once;
   * {@link #claimBatch} then sees the window full ({@link #windowFull}) and claims again from a
   * larger one, so a claim never comes back empty while a task it may take is free. Bound: {@link
   * #NOW}, {@link #MANIFEST}, {@link #RANK}, {@link #MAX}, {@link #WINDOW}.
   */
  private static CommonTableExpression<Record1<String>> claimCandidates() {
    ClaimWindow cw = claimWindowCtes();
    CommonTableExpression<Record2<Long, String>> classes = cw.classes();
    CommonTableExpression<Record1<String>> windowed = cw.ids();
    Tasks t = TASKS.as("t");
    return DSL.name("candidate")
        .fields("id")
        .asMaterialized(
            DSL.with(classes)
                .with(windowed)
                .select(t.ID)
                .from(t)
                .where(t.ID.in(DSL.select(windowed.field("id", String.class)).from(windowed)))
                .and(claimable(t, NOW.field(), MANIFEST.field(), RANK.field()))
                .orderBy(t.PRIORITY.desc(), t.CREATED.asc())
                .limit(MAX.field())
                .forUpdate()
                .of(t)
                .skipLocked());
  }

  /** The claim's walk: the admitted claim classes, and the window of candidate ids. */
  private record ClaimWindow(
      CommonTableExpression<Record2<Long, String>> classes,
      CommonTableExpression<Record1<String>> ids) {}

  /**
   * The CTEs {@code classes} and {@code window} of {@link #claimCandidates}. Bound: {@link #NOW},
   * {@link #MANIFEST}, {@link #RANK}, {@link #WINDOW}.
   */
  private static ClaimWindow claimWindowCtes() {
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
                                            k.REQUIREMENTS, MANIFEST.field())))));
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
                    .and(
                        w.STATUS
                            .eq(DSL.inline(Status.ADMITTED.wire()))
                            .or(w.LEASE_UNTIL.lt(NOW.field())))
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

  /** Claims up to {@code max} tasks from a window of {@code window} candidates, in one UPDATE. */
  private List<Claimed> claimIn(DSLContext tx, ClaimArgs a, int max, int window) {
    RenderedStatement claim =
        statements.get(
            tx,
            "claim",
            () -> {
              CommonTableExpression<Record1<String>> candidate = claimCandidates();
              return DSL.with(candidate)
                  .update(TASKS)
                  .set(TASKS.STATUS, DSL.inline(Status.CLAIMED.wire()))
                  .set(TASKS.HOLDER, HOLDER.field())
                  .set(TASKS.LEASE_UNTIL, UNTIL.field())
                  .set(TASKS.ATTEMPTS, TASKS.ATTEMPTS.plus(DSL.inline(1L)))
                  .from(candidate)
                  .where(TASKS.ID.eq(candidate.field("id", String.class)))
                  .returning(CLAIMED);
            },
            List.of(NOW, UNTIL, HOLDER, MANIFEST, RANK, MAX, WINDOW));
    return claim
        .fetch(tx, CLAIMED, a.now(), a.until(), a.holder(), a.manifest(), a.rank(), max, window)
        .stream()
        .map(
            r ->
                new Claimed(
                    r.get(TASKS.ID),
                    r.get(TASKS.ATTEMPTS),
                    r.get(TASKS.PRIORITY),
                    r.get(TASKS.CREATED)))
        .toList();
  }

  /**
   * Whether the walk of a claim still finds a whole window of candidates: then a claim from it that
   * came up short lost rows to concurrent transactions, not to an empty queue. Reads at most {@code
   * window} rows per claim class, as the claim does.
   */
  private boolean windowFull(DSLContext tx, ClaimArgs a, int window) {
    RenderedStatement full =
        statements.get(
            tx,
            "claim window",
            () -> {
              ClaimWindow cw = claimWindowCtes();
              return DSL.with(cw.classes()).with(cw.ids()).selectCount().from(cw.ids());
            },
            List.of(NOW, MANIFEST, RANK, WINDOW));
    return full.fetch(tx, COUNT, a.now(), a.manifest(), a.rank(), window).get(0).get(0, int.class)
        >= window;
  }

  /**
   * How many candidate rows a claim of {@code max} reads: twice {@code max}, and at least 64 more,
   * the slack for concurrent claimers locking the same rows.
   */
  static int claimWindow(int max) {
    return Math.max(2 * max, max + 64);
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
  private static Condition claimable(
      Tasks t, Field<Instant> now, Field<String> manifestJson, Field<Long> rank) {
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
        .and(dependenciesCompleted(t))
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
  private static String whyNotClaimable(
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

  static String describe(TasksRecord row) {
    Status s = Status.parse(row.getStatus());
    return s == Status.CLAIMED
        ? "claimed by " + row.getHolder() + " (attempt " + row.getAttempts() + ")"
        : s.wire();
  }

  static WrongStateException wrong(TasksRecord row, String operation, String why) {
    return new WrongStateException(row.getId(), Status.parse(row.getStatus()), operation, why);
  }

  private static String jsonArray(List<String> values) {
    return new dev.ledger.codegen.convert.StringListConverter().to(values);
  }

  /** Runs an operation, turning jOOQ's database failures into {@link LedgerStorageException}. */
  <T> T run(String operation, Supplier<T> body) {
    try {
      return body.get();
    } catch (DataAccessException e) {
      throw new LedgerStorageException(operation, e.sqlState(), e);
    } catch (org.flywaydb.core.api.FlywayException e) {
      // provisioning a new domain's schema failed (connection lost, migration refused)
      throw new LedgerStorageException(operation, null, e);
    } catch (IllegalArgumentException e) {
      // a stored value a converter could not read
      throw new LedgerException(operation + ": " + e.getMessage(), e);
    }
  }

  @FunctionalInterface
  interface EventDecider {
    Event decide(TasksRecord row);
  }
}

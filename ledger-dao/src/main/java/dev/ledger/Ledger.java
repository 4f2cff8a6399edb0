package dev.ledger;

import dev.ledger.claim.ClaimSql;
import dev.ledger.control.QueueControls;
import dev.ledger.kernel.Engine;
import dev.ledger.kernel.Tx;
import dev.ledger.schedule.Schedules;
import java.sql.Connection;
import java.util.function.Function;
import javax.sql.DataSource;
import org.jooq.Configuration;
import org.jooq.DSLContext;

/**
 * The ledger: an event-sourced task queue on PostgreSQL, one schema per domain. Every operation
 * appends its event and updates the projection in one transaction; {@link #replay()} replays the
 * events into the projection again. Ports the reference backend's {@code Db} ({@code
 * crates/ledger/src/postgres.rs}). Thread-safe; share one instance per data source.
 *
 * <p>A thin facade: each operation is a class of its own, taking a transaction context ({@code
 * dev.ledger.kernel.Tx}): filing and transitions in {@code dev.ledger.append}, claims and leases in
 * {@code dev.ledger.claim}, erasure in {@code dev.ledger.scrub}, replay in {@code
 * dev.ledger.replay}, reads in {@code dev.ledger.read}. The methods are those of {@link
 * LedgerOperations}.
 *
 * <p>Transactions: each call runs in a transaction of the ledger's own, committed before it
 * returns, unless the data source hands out a connection that is already in a transaction
 * (autocommit off, as Spring's {@code TransactionAwareDataSourceProxy} does inside
 * {@code @Transactional}): then the call joins that transaction and never commits, rolls back or
 * closes it. {@link #in(Connection)}, {@link #in(DSLContext)} and {@link #in(Configuration)} run
 * the same operations in a caller's JDBC or jOOQ transaction ({@link LedgerTransaction}). When the
 * connection is lost while the ledger commits, the {@link LedgerStorageException} says the outcome
 * is unknown ({@link LedgerStorageException#outcomeUnknown()}).
 *
 * <pre>{@code
 * Ledger ledger = Ledger.open(dataSource, LedgerConfig.defaults());
 * String id = ledger.file(TaskSpec.builder("payments", "Reconcile batch 42").build());
 * ledger.admit(id);
 * Optional<Lease> lease = ledger.claimNext("payments",
 *     Claimer.of("worker-1").lease(Duration.ofMinutes(5)).handling(Label.PUBLIC));
 * lease.ifPresent(l -> ledger.complete(l, "done"));
 * }</pre>
 *
 * <p>Worker runtimes ({@code dev.ledger.worker.WorkerPool}, or a loop of your own) use the
 * operations only they need through {@link #worker()}: batch claims that return the rows, batch
 * completions, failed attempts and their retries, delayed admissions.
 *
 * <p>Errors: {@link InvalidInputException} (nothing written), {@link TaskNotFoundException}, {@link
 * WrongStateException}, {@link LeaseLostException}, {@link SchemaVersionException}, and {@link
 * LedgerStorageException} for database failures. The data source should allow at least three
 * connections: provisioning a new domain holds one while Flyway uses others.
 */
public final class Ledger extends LedgerOperations {

  /**
   * The largest window a claim grows to when concurrent transactions hold the rows of a smaller one
   * (see {@link #claimBatch(String, Claimer, int)}): far more locked rows than any pool has
   * connections.
   */
  static final int MAX_CLAIM_WINDOW = ClaimSql.MAX_CLAIM_WINDOW;

  private final Schedules schedules;

  /** The domains' queue controls (pause, limits); see docs/controls.md. */
  private final QueueControls controls;

  private Ledger(DataSource dataSource, LedgerConfig config) {
    super(new Ops(new Engine(dataSource, config)));
    this.schedules = new Schedules(ops.engine, ops.filing);
    this.controls = new QueueControls(ops.engine);
  }

  /**
   * The ledger's schedules: recurring tasks kept in the database, each tick filed exactly once
   * however many processes run ({@link Schedules}). Worker pools of a domain file its due ticks.
   *
   * @return the schedules; the same object at each call, thread-safe
   */
  public Schedules schedules() {
    return schedules;
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
   * @throws InvalidInputException naming {@code dataSource} when it hands out connections with
   *     autocommit off outside any transaction (every call would join a transaction nobody commits)
   * @throws LedgerStorageException when the database cannot be used
   */
  public static Ledger open(DataSource dataSource, LedgerConfig config) {
    if (dataSource == null) {
      throw new InvalidInputException("dataSource", "must not be null");
    }
    if (config == null) {
      throw new InvalidInputException("config", "must not be null");
    }
    Ledger ledger = new Ledger(dataSource, config);
    Engine engine = ledger.ops.engine;
    engine.checkAutoCommitOnOpen();
    engine.run(
        "open",
        () -> {
          engine.directory().checkDirectory();
          engine.citus();
          // resolved now, outside any transaction: a first filing in a caller's transaction must
          // not run Flyway on the caller's connection
          engine.directory().prepareProvisioning();
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

  /**
   * Makes a domain's schema ahead of its first task, for deployments whose runtime role may not run
   * DDL (call it from the migration job). Does nothing when the schema exists and is current. Run
   * inside a transaction the data source's connection is in, it provisions in that transaction, as
   * {@link LedgerTransaction#provision} does.
   *
   * @param domain the domain
   * @return the schema name, unquoted
   * @throws InvalidInputException naming {@code domain}
   * @throws SchemaVersionException when the schema is missing (or behind) and runtime DDL is off in
   *     this ledger's configuration: such a ledger runs no DDL, its {@code provision} included
   *     (provision with {@code ledger-app migrate --provision}, or from a ledger opened with
   *     runtime DDL on, the default)
   */
  public String provision(String domain) {
    Validation.domain(domain);
    // through write: a provisioning inside a transaction the data source's connection is in (a
    // Spring transaction) happens in that transaction instead of committing it
    return write("provision", tx -> ops.engine.schemaForWrite(tx, domain));
  }

  /**
   * The ledger's operations inside a caller's JDBC transaction: on {@code connection}, which the
   * ledger never commits, rolls back or closes. See {@link LedgerTransaction}.
   *
   * @param connection the caller's connection, with autocommit off (checked at each call)
   * @return the view; cheap, one per transaction
   * @throws InvalidInputException naming {@code connection} when it is null
   */
  public LedgerTransaction in(Connection connection) {
    if (connection == null) {
      throw new InvalidInputException("connection", "must not be null");
    }
    return new LedgerTransaction(ops, connection);
  }

  /**
   * The ledger's operations inside a caller's jOOQ transaction: on the connection of {@code
   * configuration}'s connection provider (acquired and released around each call), e.g. the {@code
   * Configuration} of {@code dsl.transaction(cfg -> ...)}, or a Spring-managed jOOQ configuration
   * inside {@code @Transactional}. The ledger keeps its own render mapping and settings; it never
   * commits, rolls back or closes the connection. See {@link LedgerTransaction}.
   *
   * @param configuration the transaction's configuration, not null
   * @return the view; cheap, one per transaction
   * @throws InvalidInputException naming {@code configuration} when it is null; at each call,
   *     naming {@code connection} when its connection is in autocommit mode
   */
  public LedgerTransaction in(Configuration configuration) {
    if (configuration == null) {
      throw new InvalidInputException("configuration", "must not be null");
    }
    return new LedgerTransaction(ops, configuration.connectionProvider());
  }

  /**
   * The ledger's operations inside a caller's jOOQ transaction, as {@link #in(Configuration)} with
   * {@code dsl.configuration()}.
   *
   * @param dsl the transaction's context, e.g. {@code cfg.dsl()} inside {@code dsl.transaction(cfg
   *     -> ...)}; not null
   * @return the view
   * @throws InvalidInputException naming {@code dsl} when it is null
   */
  public LedgerTransaction in(DSLContext dsl) {
    if (dsl == null) {
      throw new InvalidInputException("dsl", "must not be null");
    }
    return in(dsl.configuration());
  }

  // ---------------------------------------------------------------------------------------------
  // queue controls (dev.ledger.control): kept in the domain's schema, read by every claim

  /**
   * Pauses a domain's claims, cluster-wide: once this commits, every claim of the domain (by every
   * process: {@link #claimNext}, {@link #claimBatch}, worker pools) returns nothing, and a claim by
   * id is refused with a {@link WrongStateException} saying so; a claim already running when it
   * commits may still take its tasks. Running tasks finish (complete, fail, heartbeat as before);
   * filing and admitting still work. Provisions the domain's schema when it has none yet.
   *
   * @param domain the domain
   * @return the domain's controls after the change
   * @throws InvalidInputException naming {@code domain}
   * @throws LedgerStorageException when the database fails
   */
  public DomainControls pause(String domain) {
    return write("pause", tx -> controls.pause(tx, domain, true));
  }

  /**
   * Resumes a paused domain's claims, and wakes the worker pools listening on the domain (a
   * notification at commit), so they claim within moments rather than at their next poll. Resuming
   * a domain that is not paused changes nothing but wakes them too.
   *
   * @param domain the domain
   * @return the domain's controls after the change
   * @throws InvalidInputException naming {@code domain}
   * @throws LedgerStorageException when the database fails
   */
  public DomainControls resume(String domain) {
    return write("resume", tx -> controls.pause(tx, domain, false));
  }

  /**
   * Sets a domain's limits, cluster-wide, leaving a limit given as null as it is. The concurrency
   * limit: at most {@code maxClaimed} tasks of the domain claimed at once (their lease not expired)
   * across every claimer; a claim (a pool's batch too) takes no more than the room left. The rate
   * limit: at most {@code rateClaims} claims in any window of {@code ratePeriod} (counted in
   * twentieths of the period, so the rate achieved is between 20/21 of the limit and the limit).
   * Both are enforced where the claim happens, in its transaction, so they hold whatever the number
   * of processes; they apply to the claims that begin after this commits. Changing the rate limit
   * starts its window afresh. Wakes the domain's pools.
   *
   * @param domain the domain
   * @param maxClaimed the concurrency limit, 1 to 1,000,000, or null to leave it
   * @param rateClaims the rate limit's claims, 1 to 1,000,000, or null (with {@code ratePeriod}) to
   *     leave it
   * @param ratePeriod the rate limit's period, 100 ms to 1 day, or null (with {@code rateClaims})
   * @return the domain's controls after the change
   * @throws InvalidInputException naming {@code domain}, {@code maxClaimed}, {@code rateClaims} or
   *     {@code ratePeriod} (nothing written), or {@code maxClaimed} when all three are null
   * @throws LedgerStorageException when the database fails
   */
  public DomainControls setLimits(
      String domain, Integer maxClaimed, Integer rateClaims, java.time.Duration ratePeriod) {
    return write(
        "limit", tx -> controls.limit(tx, domain, maxClaimed, rateClaims, ratePeriod, false));
  }

  /**
   * Removes a domain's concurrency and rate limits (a pause stays), and wakes its pools.
   *
   * @param domain the domain
   * @return the domain's controls after the change
   * @throws InvalidInputException naming {@code domain}
   * @throws LedgerStorageException when the database fails
   */
  public DomainControls clearLimits(String domain) {
    return write("clear limits", tx -> controls.limit(tx, domain, null, null, null, true));
  }

  /**
   * Whether the most recent claim of a domain through this {@code Ledger} (any thread: {@link
   * #claimNext}, {@link #claimBatch}, a worker pool's) was held back by the domain's queue
   * controls, and by which: a caller whose claim came back empty tells "paused", "at its
   * concurrency limit" and "rate limited" apart from "nothing claimable". Read from memory, no
   * database access; claims by other {@code Ledger} instances or processes are not seen, and a
   * claim by id ({@link #claim(String, Claimer)}) says why in its {@link WrongStateException}
   * instead.
   *
   * @param domain the domain
   * @return the hold, or empty when the last claim was not held back (or none was made)
   * @throws InvalidInputException naming {@code domain}
   */
  public java.util.Optional<ClaimHold> claimHold(String domain) {
    Validation.domain(domain);
    return ops.claims.heldBack(domain).map(h -> new ClaimHold(reason(h.why()), h.recheck()));
  }

  private static ClaimHold.Reason reason(dev.ledger.control.QueueControls.Hold why) {
    return switch (why) {
      case PAUSED -> ClaimHold.Reason.PAUSED;
      case CONCURRENCY -> ClaimHold.Reason.CONCURRENCY_LIMIT;
      case RATE -> ClaimHold.Reason.RATE_LIMIT;
    };
  }

  /**
   * Reads a domain's controls and how many of its tasks are claimed now (one read of the controls'
   * row and one count of the claimed tasks).
   *
   * @param domain the domain
   * @return the controls; none set (and 0 claimed) for a domain that has no schema
   * @throws InvalidInputException naming {@code domain}
   * @throws LedgerStorageException when the database fails
   */
  public DomainControls controls(String domain) {
    return read("controls", tx -> controls.read(tx, domain));
  }

  /**
   * A reader of a named consumer's events in one or several domains (docs/feed.md): it takes the
   * consumer's lease of each domain, reads the events after the consumer's checkpoint in an order
   * that never skips an event that committed late, and commits the checkpoint (in a transaction of
   * its own, or in the caller's for exactly-once effects). For a follower that calls a handler, see
   * {@link dev.ledger.feed.FeedRunner}.
   *
   * @param spec the consumer, its domains and settings, not null
   * @return the reader, holding no lease yet; one per thread, closed after use
   * @throws InvalidInputException naming {@code spec} when it is null
   * @throws CitusUnsupportedException when the database is a Citus coordinator (the feed orders by
   *     transaction id, which a cluster does not share across nodes)
   */
  public dev.ledger.feed.Feed feed(dev.ledger.feed.FeedSpec spec) {
    return dev.ledger.feed.Feed.open(ops.engine, spec);
  }

  /**
   * How many candidate rows a claim of {@code max} reads ({@link ClaimSql#claimWindow}).
   *
   * @param max the most tasks claimed
   * @return the window's size in rows
   */
  /**
   * Retention of completed and invalidated tasks: set or clear a domain's retention, and purge the
   * tasks older than it, in batches of their own transactions (docs/retention.md). Not available in
   * a caller's transaction ({@link #in}): a purge commits batch by batch.
   *
   * @return the retention operations over this ledger; thread-safe
   */
  public dev.ledger.retention.Retention retention() {
    return new dev.ledger.retention.Retention(ops.engine);
  }

  static int claimWindow(int max) {
    return ClaimSql.claimWindow(max);
  }

  @Override
  <T> T write(String operation, Function<Tx, T> body) {
    return ops.engine.write(operation, body);
  }

  @Override
  <T> T writeInOneRoundTrip(String operation, Function<Tx, T> body) {
    return ops.engine.writeInOneRoundTrip(operation, body);
  }

  @Override
  <T> T writeInOneStatement(String operation, Function<Tx, T> body) {
    return ops.engine.writeInOneStatement(operation, body);
  }

  @Override
  <T> T read(String operation, Function<Tx, T> body) {
    return ops.engine.read(operation, body);
  }
}

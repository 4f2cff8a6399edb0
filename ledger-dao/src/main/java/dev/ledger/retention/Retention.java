package dev.ledger.retention;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_RETENTION;

import dev.ledger.InvalidInputException;
import dev.ledger.LedgerTimeoutException;
import dev.ledger.Validation;
import dev.ledger.codegen.convert.Rfc3339;
import dev.ledger.codegen.db.ledger_directory.tables.records.LedgerRetentionRecord;
import dev.ledger.feed.FeedHorizon;
import dev.ledger.kernel.Engine;
import dev.ledger.retention.PurgeReport.DomainPurge;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.jooq.DSLContext;

/**
 * Retention of completed and invalidated tasks, per domain: {@link #set} and {@link #clear} a
 * domain's retention (kept in the directory's {@code ledger_retention}, a table the reference stack
 * ignores), and {@link #purge} the terminal tasks older than it.
 *
 * <p>A purge walks the domain's tasks in id order, one window of {@code batch} ids per transaction
 * of its own (never the caller's): it locks the window's terminal tasks whose terminal event
 * ({@code completed} or {@code invalidated}) is older than the retention and that nothing open
 * needs, skipping rows another transaction holds ({@code SKIP LOCKED}), and removes them with their
 * events, routes ({@code ledger_tasks}) and dependency edges; the claim classes no task has any
 * more go at the end. Each transaction waits at most {@link #BATCH_LOCK_TIMEOUT} for a lock; a
 * batch that times out is left for the next run. Workers' claims never wait on a purge: they lock
 * open tasks only, which a purge never touches.
 *
 * <pre>{@code
 * ledger.retention().set("payments", Duration.ofDays(7));
 * PurgeReport r = ledger.retention().purge(null, 1000, p -> log.info("{}", p));
 * }</pre>
 *
 * <p>Thread-safe; purges of one domain in several processes at once are safe (all but one find the
 * domain {@linkplain DomainPurge#busy() busy} and leave it).
 */
public final class Retention {

  /** The batch size of {@link #purge()}: tasks per transaction. */
  public static final int DEFAULT_BATCH = 1000;

  /** The largest batch: tasks per transaction. */
  public static final int MAX_BATCH = 10_000;

  /** The longest retention: 100 years of 365 days. */
  public static final Duration MAX_RETENTION = Duration.ofDays(36_500);

  /**
   * How long a purge's transaction waits for a row or advisory lock before it gives the batch up.
   */
  public static final Duration BATCH_LOCK_TIMEOUT = Purge.LOCK_TIMEOUT;

  private final Engine engine;

  /**
   * Creates the operations over a ledger's engine; {@link dev.ledger.Ledger#retention()} is the way
   * in.
   *
   * @param engine the ledger's shared state, not null
   */
  public Retention(Engine engine) {
    this.engine = engine;
  }

  /**
   * Sets a domain's retention: its completed and invalidated tasks are purged once their terminal
   * event is older than this. The domain need not have a task yet.
   *
   * @param domain the domain
   * @param retention a whole number of seconds, at least 1 second, at most {@link #MAX_RETENTION}
   * @throws InvalidInputException naming {@code domain} or {@code retention}; nothing is written
   */
  public void set(String domain, Duration retention) {
    Validation.domain(domain);
    if (retention == null) {
      throw new InvalidInputException("retention", "must not be null");
    }
    if (retention.getNano() != 0) {
      throw new InvalidInputException("retention", "must be a whole number of seconds");
    }
    if (retention.getSeconds() < 1) {
      throw new InvalidInputException("retention", "must be at least 1 second");
    }
    if (retention.compareTo(MAX_RETENTION) > 0) {
      throw new InvalidInputException("retention", "must be at most 36500 days");
    }
    String at = Rfc3339.format(engine.now());
    engine.write(
        "set retention",
        tx ->
            tx.directory()
                .insertInto(LEDGER_RETENTION)
                .set(LEDGER_RETENTION.DOMAIN, domain)
                .set(LEDGER_RETENTION.RETENTION_SECONDS, retention.getSeconds())
                .set(LEDGER_RETENTION.UPDATED_AT, at)
                .onConflict(LEDGER_RETENTION.DOMAIN)
                .doUpdate()
                .set(LEDGER_RETENTION.RETENTION_SECONDS, retention.getSeconds())
                .set(LEDGER_RETENTION.UPDATED_AT, at)
                .execute());
  }

  /**
   * Clears a domain's retention: nothing of it is purged any more. What purges removed so far (and
   * {@code removed_through_seq}) stays recorded.
   *
   * @param domain the domain
   * @return true when the domain had a retention
   * @throws InvalidInputException naming {@code domain}
   */
  public boolean clear(String domain) {
    Validation.domain(domain);
    String at = Rfc3339.format(engine.now());
    return engine.write(
            "clear retention",
            tx ->
                tx.directory()
                    .update(LEDGER_RETENTION)
                    .setNull(LEDGER_RETENTION.RETENTION_SECONDS)
                    .set(LEDGER_RETENTION.UPDATED_AT, at)
                    .where(LEDGER_RETENTION.DOMAIN.eq(domain))
                    .and(LEDGER_RETENTION.RETENTION_SECONDS.isNotNull())
                    .execute())
        > 0;
  }

  /**
   * A domain's retention row.
   *
   * @param domain the domain
   * @return its row; empty when no retention was ever set and nothing was purged
   * @throws InvalidInputException naming {@code domain}
   */
  public Optional<RetentionSetting> get(String domain) {
    Validation.domain(domain);
    return engine.read(
        "get retention",
        tx ->
            tx.directory()
                .selectFrom(LEDGER_RETENTION)
                .where(LEDGER_RETENTION.DOMAIN.eq(domain))
                .fetchOptional()
                .map(Retention::setting));
  }

  /**
   * Every domain's retention row, in domain order.
   *
   * @return the rows; empty when none
   */
  public List<RetentionSetting> list() {
    return engine.read(
        "list retention",
        tx ->
            tx.directory()
                .selectFrom(LEDGER_RETENTION)
                .orderBy(LEDGER_RETENTION.DOMAIN)
                .fetch(Retention::setting));
  }

  /**
   * Purges every domain that has a retention, {@link #DEFAULT_BATCH} tasks per transaction.
   *
   * @return what was removed
   */
  public PurgeReport purge() {
    return purge(null, DEFAULT_BATCH, p -> {});
  }

  /**
   * Purges one domain, or every domain that has a retention, in batches of its own transactions
   * (see the class comment). A domain without a retention is left alone.
   *
   * @param domain the domain; null for every domain with a retention
   * @param batch tasks per transaction, 1 to {@link #MAX_BATCH}
   * @param progress told each domain's totals so far after each batch, on the calling thread; not
   *     null
   * @return what was removed, per domain
   * @throws InvalidInputException naming {@code domain} (invalid, or without a retention), {@code
   *     batch} or {@code progress}; nothing is written
   * @throws dev.ledger.LedgerStorageException when the database fails; batches committed before
   *     stay committed (each leaves the ledger consistent)
   */
  public PurgeReport purge(String domain, int batch, Consumer<DomainPurge> progress) {
    if (domain != null) {
      Validation.domain(domain);
    }
    if (batch < 1 || batch > MAX_BATCH) {
      throw new InvalidInputException("batch", "must be 1 to " + MAX_BATCH + ", not " + batch);
    }
    if (progress == null) {
      throw new InvalidInputException("progress", "must not be null");
    }
    long start = System.nanoTime();
    List<RetentionSetting> targets = new ArrayList<>();
    for (RetentionSetting s : list()) {
      if (s.retention().isPresent() && (domain == null || s.domain().equals(domain))) {
        targets.add(s);
      }
    }
    if (domain != null && targets.isEmpty()) {
      throw new InvalidInputException(
          "domain", "'" + domain + "' has no retention: set one first (ledger-app retention set)");
    }
    List<DomainPurge> done = new ArrayList<>();
    for (RetentionSetting s : targets) {
      done.add(purgeDomain(s.domain(), s.retention().orElseThrow(), batch, progress));
    }
    return new PurgeReport(done, Duration.ofNanos(System.nanoTime() - start));
  }

  private DomainPurge purgeDomain(
      String domain, Duration retention, int batch, Consumer<DomainPurge> progress) {
    Instant cutoff = Purge.cutoff(engine.now(), retention.getSeconds());
    Totals t = new Totals(domain);
    String cursor = "";
    while (true) {
      String from = cursor;
      Purge.Window w =
          engine
              .read(
                  "retention purge",
                  tx -> engine.domain(tx, domain).map(ctx -> Purge.window(ctx, from, batch)))
              .orElse(null);
      if (w == null || w.size() == 0) {
        break;
      }
      Purge.Batch b;
      try {
        b = engine.write("retention purge", tx -> batchIn(tx, domain, w, cutoff));
      } catch (LedgerTimeoutException e) {
        if (e.bound() != LedgerTimeoutException.Bound.LOCK) {
          throw e;
        }
        b = null;
        t.skipped++;
      }
      if (b == BUSY) {
        t.busy = true;
        break;
      }
      t.batches++;
      if (b != null) {
        t.add(b);
      }
      progress.accept(t.report());
      cursor = w.high();
      if (w.size() < batch) {
        break;
      }
    }
    List<Purge.ClassKey> empty =
        engine
            .read(
                "retention purge",
                tx -> engine.domain(tx, domain).map(ctx -> Purge.emptyClasses(ctx, t.classes)))
            .orElse(List.of());
    if (!empty.isEmpty()) {
      try {
        int removed =
            engine.write(
                "retention purge",
                tx -> Purge.removeClasses(engine.domain(tx, domain).orElseThrow(), domain, empty));
        t.classesRemoved += Math.max(0, removed);
      } catch (LedgerTimeoutException e) {
        if (e.bound() != LedgerTimeoutException.Bound.LOCK) {
          throw e;
        }
      }
    }
    t.removedThroughSeq =
        get(domain).map(RetentionSetting::removedThroughSeq).orElse(t.removedThroughSeq);
    return t.report();
  }

  /** The batch of a purge that found another purge of the domain running. */
  private static final Purge.Batch BUSY = new Purge.Batch(0, 0, 0, 0, Set.of(), List.of());

  private Purge.Batch batchIn(
      dev.ledger.kernel.Tx tx, String domain, Purge.Window w, Instant cutoff) {
    Optional<DSLContext> mapped = engine.domain(tx, domain);
    if (mapped.isEmpty()) {
      return new Purge.Batch(0, 0, 0, 0, Set.of(), List.of());
    }
    DSLContext ctx = mapped.get();
    if (!Purge.begin(ctx, domain)) {
      return BUSY;
    }
    Purge.Batch b = Purge.batch(ctx, domain, w, cutoff);
    if (b.tasksRemoved() > 0) {
      Purge.record(tx.directory(), domain, b, engine.now());
      // in this transaction: a consumer's reader is refused once it commits, never before
      FeedHorizon.record(tx.directory(), domain, b.removed());
    }
    return b;
  }

  private static RetentionSetting setting(LedgerRetentionRecord r) {
    return new RetentionSetting(
        r.getDomain(),
        Optional.ofNullable(r.getRetentionSeconds()).map(Duration::ofSeconds),
        r.getRemovedThroughSeq(),
        r.getTasksRemoved(),
        r.getEventsRemoved(),
        r.getLastPurgeAt() == null ? null : Rfc3339.parse(r.getLastPurgeAt()));
  }

  /** A domain's running totals. */
  private static final class Totals {
    final String domain;
    long tasks;
    long events;
    long batches;
    long kept;
    long skipped;
    long removedThroughSeq;
    long classesRemoved;
    boolean busy;
    final Set<Purge.ClassKey> classes = new LinkedHashSet<>();

    Totals(String domain) {
      this.domain = domain;
    }

    void add(Purge.Batch b) {
      tasks += b.tasksRemoved();
      events += b.eventsRemoved();
      kept += b.tasksKept();
      removedThroughSeq = Math.max(removedThroughSeq, b.maxSeq());
      classes.addAll(b.classes());
    }

    DomainPurge report() {
      return new DomainPurge(
          domain, tasks, events, batches, kept, skipped, removedThroughSeq, classesRemoved, busy);
    }
  }
}

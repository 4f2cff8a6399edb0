package dev.ledger.feed;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_FEED_CONSUMERS;
import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_FEED_ERASURES;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.FEED_FOLLOWED;

import dev.ledger.InvalidInputException;
import dev.ledger.kernel.Engine;
import dev.ledger.kernel.Tx;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record1;
import org.jooq.Record2;
import org.jooq.Record3;
import org.jooq.Record5;
import org.jooq.Record6;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A reader of a named consumer's events: takes the consumer's lease of each domain ({@link
 * #acquire()}), reads the events after its checkpoint ({@link #poll()}) and commits the checkpoint
 * ({@link #commit(FeedBatch)}, or in the caller's transaction with {@link #commit(FeedBatch,
 * Connection)} for exactly-once effects). Get one from {@code ledger.feed(spec)}.
 *
 * <p>The delivery rule (docs/feed.md): an event is delivered only once every transaction with a
 * smaller id than the one that wrote it has ended, so no event can commit later below a checkpoint.
 * The checkpoint is a window of transaction ids {@code [xid_from, xid_to)}, every id in it from a
 * transaction that had ended when the window was opened (its upper end is the snapshot's xmin
 * then), and the last {@code seq} delivered in it: each window's events are delivered in {@code
 * seq} order, the windows one after another.
 *
 * <pre>{@code
 * try (Feed feed = ledger.feed(FeedSpec.builder("search-index", "payments").build())) {
 *   while (!feed.acquire()) Thread.sleep(1000);   // another reader holds it
 *   FeedBatch batch = feed.poll();
 *   index(batch.events());
 *   feed.commit(batch);                             // at least once
 * }
 * }</pre>
 *
 * <p>Errors: {@link FeedFencedException} when another reader took a lease; {@link
 * FeedBehindRetentionException} when a retention purge removed events the consumer had not
 * received; {@link dev.ledger.LedgerStorageException} when the database fails. Not thread-safe: one
 * thread uses a reader.
 */
public final class Feed implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Feed.class);

  private static final Field<String> XID = DSL.field(DSL.name("xid"), String.class);
  private static final Field<String> XID_FROM = DSL.field(DSL.name("xid_from"), String.class);
  private static final Field<String> XID_TO = DSL.field(DSL.name("xid_to"), String.class);
  private static final Field<String> PAYLOAD_TEXT = DSL.field(DSL.name("payload"), String.class);

  private final Engine engine;
  private final FeedSpec spec;
  private final Map<String, Long> epochs = new LinkedHashMap<>();
  private final Map<String, Boolean> followed = new LinkedHashMap<>();

  private Feed(Engine engine, FeedSpec spec) {
    this.engine = engine;
    this.spec = spec;
  }

  /**
   * Makes a reader. Internal: call {@code ledger.feed(spec)}.
   *
   * @param engine the ledger's engine
   * @param spec what to read, not null
   * @return the reader, holding no lease yet
   * @throws InvalidInputException naming {@code spec} when it is null
   * @throws dev.ledger.CitusUnsupportedException in Citus mode
   */
  public static Feed open(Engine engine, FeedSpec spec) {
    if (spec == null) {
      throw new InvalidInputException("spec", "must not be null");
    }
    if (engine.citus()) {
      throw new dev.ledger.CitusUnsupportedException(
          "feed",
          "it orders events by transaction id, and each node of a cluster has its own transaction"
              + " ids");
    }
    return new Feed(engine, spec);
  }

  /**
   * What this reader reads.
   *
   * @return its spec
   */
  public FeedSpec spec() {
    return spec;
  }

  /**
   * Takes the consumer's lease of every domain this reader does not hold yet, where the lease is
   * free or expired; a domain whose lease another reader holds is left for a later call. Each lease
   * taken gets a new epoch, which fences the reader that held it before. A consumer new to a domain
   * gets its first checkpoint here ({@link FeedSpec#fromStart()}).
   *
   * @return true when this reader now holds every domain of its spec
   * @throws dev.ledger.LedgerStorageException when the database fails
   */
  public boolean acquire() {
    for (String domain : spec.domains()) {
      if (!epochs.containsKey(domain)) {
        engine
            .write("feed acquire", tx -> take(tx, domain))
            .ifPresent(epoch -> epochs.put(domain, epoch));
      }
    }
    return epochs.size() == spec.domains().size();
  }

  /**
   * The domains whose lease this reader holds (as far as it knows: a lease taken over since is
   * found out at the next poll or commit).
   *
   * @return the domains, in the spec's order
   */
  public List<String> held() {
    return List.copyOf(epochs.keySet());
  }

  private Optional<Long> take(Tx tx, String domain) {
    DSLContext dir = tx.directory();
    // not from the start: after every transaction that has an id now, finished or not (xmax)
    long start =
        spec.fromStart()
            ? 0
            : Long.parseLong(
                dir.select(DSL.field("pg_snapshot_xmax(pg_current_snapshot())::text", String.class))
                    .fetchOne()
                    .value1());
    Field<String> startXid = xid8(start);
    Long epoch =
        dir.insertInto(LEDGER_FEED_CONSUMERS)
            .set(LEDGER_FEED_CONSUMERS.CONSUMER, spec.consumer())
            .set(LEDGER_FEED_CONSUMERS.DOMAIN, domain)
            .set(XID_FROM, startXid)
            .set(XID_TO, startXid)
            .set(LEDGER_FEED_CONSUMERS.HOLDER, spec.holder())
            .set(LEDGER_FEED_CONSUMERS.LEASE_UNTIL, leaseEnd())
            .set(LEDGER_FEED_CONSUMERS.EPOCH, 1L)
            .onConflict(LEDGER_FEED_CONSUMERS.CONSUMER, LEDGER_FEED_CONSUMERS.DOMAIN)
            .doUpdate()
            .set(LEDGER_FEED_CONSUMERS.HOLDER, DSL.excluded(LEDGER_FEED_CONSUMERS.HOLDER))
            .set(LEDGER_FEED_CONSUMERS.LEASE_UNTIL, DSL.excluded(LEDGER_FEED_CONSUMERS.LEASE_UNTIL))
            .set(LEDGER_FEED_CONSUMERS.EPOCH, LEDGER_FEED_CONSUMERS.EPOCH.plus(1L))
            .set(LEDGER_FEED_CONSUMERS.UPDATED, DSL.currentOffsetDateTime())
            .where(
                LEDGER_FEED_CONSUMERS
                    .LEASE_UNTIL
                    .isNull()
                    .or(LEDGER_FEED_CONSUMERS.LEASE_UNTIL.lt(DSL.currentOffsetDateTime())))
            .returningResult(LEDGER_FEED_CONSUMERS.EPOCH)
            .fetchOptional(LEDGER_FEED_CONSUMERS.EPOCH)
            .orElse(null);
    if (epoch != null) {
      follow(tx, domain);
      LOG.debug(
          "feed {}: {} took domain {} (epoch {})", spec.consumer(), spec.holder(), domain, epoch);
    }
    return Optional.ofNullable(epoch);
  }

  /**
   * Turns the domain's notifications on (domain migration V11) once it has a schema: only a
   * followed domain pays for a {@code NOTIFY} per transaction.
   */
  private void follow(Tx tx, String domain) {
    if (followed.containsKey(domain)) {
      return;
    }
    engine
        .domain(tx, domain)
        .ifPresent(
            ctx -> {
              ctx.insertInto(FEED_FOLLOWED).defaultValues().onConflictDoNothing().execute();
              followed.put(domain, true);
            });
  }

  /**
   * Reads the events after the consumer's committed checkpoint in every domain this reader holds,
   * up to {@link FeedSpec#batchSize()} per domain, renewing each lease. Reading again without a
   * commit returns the same events (and more). When a domain's window is exhausted its next window
   * is opened and recorded.
   *
   * @return the batch, empty when nothing is deliverable now
   * @throws FeedFencedException when another reader took one of the leases (that domain is no
   *     longer held; {@link #acquire()} again)
   * @throws FeedBehindRetentionException when a retention purge removed events of a domain that the
   *     consumer had not received (nothing is read until {@link #acceptLoss(String)})
   * @throws dev.ledger.LedgerStorageException when the database fails
   */
  public FeedBatch poll() {
    return engine.write(
        "feed poll",
        tx -> {
          long watermark = watermark(tx.directory()); // before this transaction writes: no xid yet
          List<FeedEvent> events = new ArrayList<>();
          List<FeedErasure> erasures = new ArrayList<>();
          List<FeedBatch.Position> positions = new ArrayList<>();
          for (Map.Entry<String, Long> held : List.copyOf(epochs.entrySet())) {
            positions.add(read(tx, held.getKey(), held.getValue(), watermark, events, erasures));
          }
          return new FeedBatch(events, erasures, positions);
        });
  }

  private FeedBatch.Position read(
      Tx tx,
      String domain,
      long epoch,
      long watermark,
      List<FeedEvent> into,
      List<FeedErasure> erasedInto) {
    DSLContext dir = tx.directory();
    Record6<String, String, Long, Long, Long, Boolean> row =
        dir.update(LEDGER_FEED_CONSUMERS)
            .set(LEDGER_FEED_CONSUMERS.LEASE_UNTIL, leaseEnd())
            .where(mine(domain, epoch))
            .returningResult(
                text(XID_FROM),
                text(XID_TO),
                LEDGER_FEED_CONSUMERS.SEQ_DONE,
                LEDGER_FEED_CONSUMERS.MISSED_SEQ,
                LEDGER_FEED_CONSUMERS.MISSED_LATER,
                // whether scrubs left erased items: read them only then (no statement per poll)
                DSL.field(
                    DSL.exists(
                        DSL.selectOne()
                            .from(LEDGER_FEED_ERASURES)
                            .where(LEDGER_FEED_ERASURES.CONSUMER.eq(spec.consumer()))
                            .and(LEDGER_FEED_ERASURES.DOMAIN.eq(domain)))))
            .fetchOne();
    if (row == null) {
      throw fenced(domain, epoch, "poll");
    }
    if (row.value4() > 0 || row.value5() > 0) {
      // a purge removed events this consumer had not received (FeedHorizon): no silent gap
      throw new FeedBehindRetentionException(spec.consumer(), domain, row.value4(), row.value5());
    }
    long from = Long.parseLong(row.value1());
    long to = Long.parseLong(row.value2());
    long seqDone = row.value3();
    Optional<DSLContext> ctx = engine.domain(tx, domain);
    if (ctx.isEmpty()) {
      return new FeedBatch.Position(domain, epoch, from, to, seqDone, 0, List.of());
    }
    follow(tx, domain);
    List<FeedEvent> events = window(ctx.get(), domain, from, to, seqDone);
    if (events.isEmpty() && watermark > to) {
      // the window is exhausted after the committed checkpoint: the next one starts at its end
      from = to;
      to = windowEnd(ctx.get(), from, watermark, WINDOW_BATCHES * spec.batchSize());
      seqDone = floor(ctx.get(), from, to);
      int moved =
          dir.update(LEDGER_FEED_CONSUMERS)
              .set(XID_FROM, xid8(from))
              .set(XID_TO, xid8(to))
              .set(LEDGER_FEED_CONSUMERS.SEQ_DONE, seqDone)
              .where(mine(domain, epoch))
              .execute();
      if (moved != 1) {
        throw fenced(domain, epoch, "poll");
      }
      events = window(ctx.get(), domain, from, to, seqDone);
    }
    into.addAll(events);
    long last = events.isEmpty() ? seqDone : events.get(events.size() - 1).seq();
    // the scrubs recorded for this consumer (FeedErasures); the row lock taken above orders them
    // with this read: a scrub that commits later is seen by the next poll
    List<Long> erasureIds = new ArrayList<>();
    if (!Boolean.TRUE.equals(row.value6())) {
      return new FeedBatch.Position(domain, epoch, from, to, last, events.size(), erasureIds);
    }
    for (var r :
        dir.select(
                LEDGER_FEED_ERASURES.ID,
                LEDGER_FEED_ERASURES.TASK_ID,
                LEDGER_FEED_ERASURES.SEQS,
                LEDGER_FEED_ERASURES.ERASED_AT)
            .from(LEDGER_FEED_ERASURES)
            .where(LEDGER_FEED_ERASURES.CONSUMER.eq(spec.consumer()))
            .and(LEDGER_FEED_ERASURES.DOMAIN.eq(domain))
            .orderBy(LEDGER_FEED_ERASURES.ID)
            .limit(spec.batchSize())
            .fetch()) {
      erasureIds.add(r.value1());
      erasedInto.add(
          new FeedErasure(domain, r.value2(), List.of(r.value3()), r.value4().toInstant()));
    }
    return new FeedBatch.Position(domain, epoch, from, to, last, events.size(), erasureIds);
  }

  /**
   * How many batches a window holds at most (see {@link #windowEnd}): each read of a window sorts
   * at most this many batches' events.
   */
  private static final int WINDOW_BATCHES = 4;

  /**
   * Where a new window ends: at the watermark, or sooner, at a transaction boundary, so that the
   * window holds at most {@code cap} events (more only when one transaction wrote more). Why: a
   * window's read ({@code xid} in the window, {@code seq} after the position, in {@code seq} order)
   * is planned on the table's statistics, and a log that grew since its last {@code ANALYZE} looks
   * small: PostgreSQL then reads the window's every remaining entry of {@code events_feed} and
   * sorts them for each batch, so a new consumer's catch-up, whose first window is the whole log,
   * could be quadratic in the log's size (seen with {@code auto_explain} in a quick B17 run). A
   * capped window bounds that read to {@code cap} entries whatever the statistics say. Windows stay
   * contiguous {@code xid} ranges, so the delivery order is unchanged: within a window by {@code
   * seq}, across windows by transaction.
   *
   * @param from the window's first transaction id
   * @param watermark the snapshot's xmin: no window reaches past it
   * @param cap the most events the window should hold
   * @return the window's end (exclusive), above {@code from}
   */
  private static long windowEnd(DSLContext ctx, long from, long watermark, int cap) {
    Record1<String> next =
        ctx.select(text(XID))
            .from(EVENTS)
            .where(XID.ge(xid8(from)))
            .and(XID.lt(xid8(watermark)))
            .orderBy(XID)
            .offset(cap) // the transaction of the (cap + 1)th event, walking events_feed
            .limit(1)
            .fetchOne();
    if (next == null) {
      return watermark; // fewer than cap + 1 events up to the watermark: the whole range
    }
    long end = Long.parseLong(next.value1());
    // one transaction with more than cap events at the window's start: the window is that one
    return end > from ? end : from + 1;
  }

  /**
   * Where a new window's position starts: one below its smallest {@code seq} (no event of the
   * window is at or below it), or, for an empty window, the log's largest {@code seq}. Not 0: the
   * window's read walks the primary key from the position when the plan cache has a generic plan
   * (it estimates a few rows for the {@code xid} range), so a position of 0 made every window's
   * first read walk the whole log (measured: 40,009 events, 963 buffers, 262 ms for a window of 18;
   * docs/feed.md). One range of {@code events_feed}: the window's entries, once per window.
   */
  private static long floor(DSLContext ctx, long from, long to) {
    // min(seq + 0), not min(seq): PostgreSQL answers a plain min(seq) by walking the primary key
    // until a row passes the xid filter (measured: 962 buffers for a window of 18); the expression
    // makes it read the window's range of events_feed (4 buffers)
    Long first =
        ctx.select(DSL.min(EVENTS.SEQ.plus(DSL.inline(0L))))
            .from(EVENTS)
            .where(XID.ge(xid8(from)))
            .and(XID.lt(xid8(to)))
            .fetchOne()
            .value1();
    if (first != null) {
      return first - 1;
    }
    Long last = ctx.select(DSL.max(EVENTS.SEQ)).from(EVENTS).fetchOne().value1();
    return last == null ? 0 : last;
  }

  private List<FeedEvent> window(DSLContext ctx, String domain, long from, long to, long after) {
    List<FeedEvent> events = new ArrayList<>();
    if (Long.compareUnsigned(from, to) >= 0) {
      return events; // an empty range (a new consumer's first window): nothing to read
    }
    for (Record5<Long, String, String, Instant, String> r :
        ctx.select(EVENTS.SEQ, EVENTS.TASK_ID, EVENTS.KIND, EVENTS.AT, PAYLOAD_TEXT)
            .from(EVENTS)
            .where(XID.ge(xid8(from)))
            .and(XID.lt(xid8(to)))
            .and(EVENTS.SEQ.gt(after))
            .orderBy(EVENTS.SEQ)
            .limit(spec.batchSize())
            .fetch()) {
      events.add(new FeedEvent(domain, r.value1(), r.value2(), r.value3(), r.value4(), r.value5()));
    }
    return events;
  }

  /**
   * Commits the batch's checkpoints in a transaction of the ledger's own: at-least-once delivery (a
   * crash before this commit delivers the batch again).
   *
   * @param batch a batch this reader polled, not null
   * @throws FeedFencedException when another reader took a lease meanwhile: nothing is committed
   * @throws InvalidInputException naming {@code batch} when it is null
   * @throws dev.ledger.LedgerStorageException when the database fails
   */
  public void commit(FeedBatch batch) {
    check(batch);
    engine.write("feed commit", tx -> store(tx, batch));
  }

  /**
   * Commits the batch's checkpoints in the caller's JDBC transaction, with the caller's own writes:
   * exactly-once effects on the caller's side. Never commits, rolls back or closes {@code
   * transaction}; the lease's fence holds the consumer's row locked until the caller's transaction
   * ends, so a reader taking over waits for it and finds the checkpoint (or no change, after a
   * rollback).
   *
   * @param batch a batch this reader polled, not null
   * @param transaction the caller's connection, autocommit off
   * @throws FeedFencedException when another reader took a lease: the caller must roll back
   * @throws InvalidInputException naming {@code batch} or {@code connection}
   * @throws dev.ledger.LedgerStorageException when a statement fails (the caller's transaction is
   *     then aborted)
   */
  public void commit(FeedBatch batch, Connection transaction) {
    check(batch);
    engine.joined(transaction, "feed commit", tx -> store(tx, batch));
  }

  /**
   * Commits the batch's checkpoints in the caller's jOOQ transaction, as {@link #commit(FeedBatch,
   * Connection)} on its connection.
   *
   * @param batch a batch this reader polled, not null
   * @param transaction the transaction's context, e.g. {@code cfg.dsl()} inside {@code
   *     dsl.transaction(cfg -> ...)}
   * @throws FeedFencedException when another reader took a lease
   * @throws InvalidInputException naming {@code batch} or {@code transaction}
   */
  public void commit(FeedBatch batch, DSLContext transaction) {
    check(batch);
    if (transaction == null) {
      throw new InvalidInputException("transaction", "must not be null");
    }
    transaction.connection(c -> commit(batch, c));
  }

  private static void check(FeedBatch batch) {
    if (batch == null) {
      throw new InvalidInputException("batch", "must not be null");
    }
  }

  private Void store(Tx tx, FeedBatch batch) {
    for (FeedBatch.Position p : batch.positions()) {
      int n =
          tx.directory()
              .update(LEDGER_FEED_CONSUMERS)
              .set(XID_FROM, xid8(p.xidFrom()))
              .set(XID_TO, xid8(p.xidTo()))
              .set(LEDGER_FEED_CONSUMERS.SEQ_DONE, p.seqDone())
              // the batch was read before a purge that ran while it was in flight (the purge
              // waits for the poll's row lock): the removed events up to its end were delivered
              .set(
                  LEDGER_FEED_CONSUMERS.MISSED_SEQ,
                  DSL.when(
                          XID_FROM
                              .eq(xid8(p.xidFrom()))
                              .and(XID_TO.eq(xid8(p.xidTo())))
                              .and(LEDGER_FEED_CONSUMERS.MISSED_SEQ.le(p.seqDone())),
                          DSL.inline(0L))
                      .otherwise(LEDGER_FEED_CONSUMERS.MISSED_SEQ))
              .set(
                  LEDGER_FEED_CONSUMERS.DELIVERED,
                  LEDGER_FEED_CONSUMERS.DELIVERED.plus((long) p.count()))
              .set(LEDGER_FEED_CONSUMERS.LEASE_UNTIL, leaseEnd())
              .set(LEDGER_FEED_CONSUMERS.UPDATED, DSL.currentOffsetDateTime())
              .where(mine(p.domain(), p.epoch()))
              .execute();
      if (n != 1) {
        epochs.remove(p.domain(), p.epoch());
        throw new FeedFencedException(spec.consumer(), p.domain(), p.epoch(), "commit");
      }
      if (!p.erasures().isEmpty()) {
        // delivered: by id, so a row the poll did not read stays for the next one
        tx.directory()
            .deleteFrom(LEDGER_FEED_ERASURES)
            .where(LEDGER_FEED_ERASURES.CONSUMER.eq(spec.consumer()))
            .and(LEDGER_FEED_ERASURES.DOMAIN.eq(p.domain()))
            .and(LEDGER_FEED_ERASURES.ID.in(p.erasures()))
            .execute();
      }
    }
    return null;
  }

  /**
   * Accepts that a retention purge removed events of {@code domain} this consumer had not received
   * ({@link FeedBehindRetentionException}): the refusal is lifted and the next poll goes on from
   * the checkpoint with the events that remain. Call it once the consumer has rebuilt what it keeps
   * from another source. Needs the lease of the domain ({@link #acquire()}).
   *
   * @param domain a domain of the spec whose lease this reader holds
   * @return true when there was a loss to accept, false when the consumer had missed nothing
   * @throws InvalidInputException naming {@code domain} when the reader does not hold its lease
   * @throws FeedFencedException when another reader took the lease
   * @throws dev.ledger.LedgerStorageException when the database fails
   */
  public boolean acceptLoss(String domain) {
    Long epoch = domain == null ? null : epochs.get(domain);
    if (epoch == null) {
      throw new InvalidInputException(
          "domain", "this reader holds no lease of '" + domain + "' (acquire first)");
    }
    return engine.write(
        "feed accept loss",
        tx -> {
          Record2<Long, Long> before =
              tx.directory()
                  .select(LEDGER_FEED_CONSUMERS.MISSED_SEQ, LEDGER_FEED_CONSUMERS.MISSED_LATER)
                  .from(LEDGER_FEED_CONSUMERS)
                  .where(mine(domain, epoch))
                  .forUpdate()
                  .fetchOne();
          if (before == null) {
            throw fenced(domain, epoch, "accept loss");
          }
          tx.directory()
              .update(LEDGER_FEED_CONSUMERS)
              .set(LEDGER_FEED_CONSUMERS.MISSED_SEQ, 0L)
              .set(LEDGER_FEED_CONSUMERS.MISSED_LATER, 0L)
              .set(LEDGER_FEED_CONSUMERS.LEASE_UNTIL, leaseEnd())
              .set(LEDGER_FEED_CONSUMERS.UPDATED, DSL.currentOffsetDateTime())
              .where(mine(domain, epoch))
              .execute();
          LOG.warn(
              "feed {}: accepted the loss of events retention removed from domain {} before"
                  + " delivery",
              spec.consumer(),
              domain);
          return before.value1() > 0 || before.value2() > 0;
        });
  }

  /**
   * How far the consumer is behind in each domain of the spec, whoever holds its leases. Reads the
   * events after the checkpoint (an index range; cheap while the consumer keeps up).
   *
   * @return one entry per domain, in the spec's order
   * @throws dev.ledger.LedgerStorageException when the database fails
   */
  public List<FeedLag> lag() {
    return engine.read(
        "feed lag",
        tx -> {
          long watermark = watermark(tx.directory());
          List<FeedLag> lags = new ArrayList<>();
          for (String domain : spec.domains()) {
            lags.add(lagOf(tx, domain, watermark));
          }
          return lags;
        });
  }

  private FeedLag lagOf(Tx tx, String domain, long watermark) {
    Record3<String, String, Long> row =
        tx.directory()
            .select(text(XID_FROM), text(XID_TO), LEDGER_FEED_CONSUMERS.SEQ_DONE)
            .from(LEDGER_FEED_CONSUMERS)
            .where(LEDGER_FEED_CONSUMERS.CONSUMER.eq(spec.consumer()))
            .and(LEDGER_FEED_CONSUMERS.DOMAIN.eq(domain))
            .fetchOne();
    Optional<DSLContext> ctx = engine.domain(tx, domain);
    if (ctx.isEmpty()) {
      return new FeedLag(domain, 0, 0, Duration.ZERO);
    }
    long from = row == null ? 0 : Long.parseLong(row.value1());
    long to = row == null ? 0 : Long.parseLong(row.value2());
    long seqDone = row == null ? 0 : row.value3();
    Record3<Integer, Integer, Instant> r =
        ctx.get()
            .select(
                DSL.count(), DSL.count().filterWhere(XID.ge(xid8(watermark))), DSL.min(EVENTS.AT))
            .from(EVENTS)
            .where(
                XID.ge(xid8(from))
                    .and(XID.lt(xid8(to)))
                    .and(EVENTS.SEQ.gt(seqDone))
                    .or(XID.ge(xid8(to))))
            .fetchOne();
    Duration oldest =
        r.value3() == null ? Duration.ZERO : Duration.between(r.value3(), engine.now());
    return new FeedLag(
        domain, r.value1(), r.value2(), oldest.isNegative() ? Duration.ZERO : oldest);
  }

  /**
   * Gives back every lease this reader holds, so another reader of the consumer takes over without
   * waiting for them to expire. Committed checkpoints stay. A failure is logged, not thrown: the
   * leases then expire.
   */
  @Override
  public void close() {
    for (Map.Entry<String, Long> held : List.copyOf(epochs.entrySet())) {
      try {
        engine.write(
            "feed release",
            tx ->
                tx.directory()
                    .update(LEDGER_FEED_CONSUMERS)
                    .setNull(LEDGER_FEED_CONSUMERS.HOLDER)
                    .setNull(LEDGER_FEED_CONSUMERS.LEASE_UNTIL)
                    .set(LEDGER_FEED_CONSUMERS.UPDATED, DSL.currentOffsetDateTime())
                    .where(mine(held.getKey(), held.getValue()))
                    .execute());
      } catch (RuntimeException e) {
        LOG.warn(
            "feed {}: giving back the lease of domain {} failed ({}); it expires instead",
            spec.consumer(),
            held.getKey(),
            e.getClass().getSimpleName());
      }
      epochs.remove(held.getKey());
    }
  }

  private org.jooq.Condition mine(String domain, long epoch) {
    return LEDGER_FEED_CONSUMERS
        .CONSUMER
        .eq(spec.consumer())
        .and(LEDGER_FEED_CONSUMERS.DOMAIN.eq(domain))
        .and(LEDGER_FEED_CONSUMERS.EPOCH.eq(epoch));
  }

  private FeedFencedException fenced(String domain, long epoch, String operation) {
    epochs.remove(domain, epoch);
    return new FeedFencedException(spec.consumer(), domain, epoch, operation);
  }

  private Field<OffsetDateTime> leaseEnd() {
    return DSL.field(
        "now() + {0} * interval '1 millisecond'",
        OffsetDateTime.class, DSL.val(spec.lease().toMillis()));
  }

  /**
   * The watermark: the snapshot's xmin, below which every transaction has ended. Read before the
   * reading transaction writes anything (a transaction with an id of its own counts itself).
   *
   * @param ctx any context on the transaction
   * @return the xmin, as a number
   */
  static long watermark(DSLContext ctx) {
    return Long.parseLong(
        ctx.select(DSL.field("pg_snapshot_xmin(pg_current_snapshot())::text", String.class))
            .fetchOne()
            .value1());
  }

  private static Field<String> xid8(long value) {
    return DSL.field("CAST({0} AS xid8)", String.class, DSL.val(Long.toString(value)));
  }

  private static Field<String> text(Field<String> xid) {
    return DSL.field("{0}::text", String.class, xid);
  }
}

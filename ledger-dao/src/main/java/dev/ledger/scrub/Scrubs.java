package dev.ledger.scrub;

import static dev.ledger.append.Retries.RETRIES;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.InvalidInputException;
import dev.ledger.Redaction;
import dev.ledger.ScrubResult;
import dev.ledger.Status;
import dev.ledger.Validation;
import dev.ledger.codegen.db.ledger_template.tables.Tasks;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.event.Event;
import dev.ledger.event.EventLog;
import dev.ledger.feed.FeedErasures;
import dev.ledger.kernel.DomainLock;
import dev.ledger.kernel.Engine;
import dev.ledger.kernel.Tx;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.jooq.CommonTableExpression;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Name;
import org.jooq.Record1;
import org.jooq.Select;
import org.jooq.impl.DSL;

/**
 * Erasure: the why of an entry's promotions ({@link #scrubPromotions}), the texts of the tasks
 * filed from an origin ({@link #scrubTasks}: open ones are invalidated first), or both ({@link
 * #scrubEntry}), each in the operation's transaction under the domain's lock. Payloads are
 * rewritten as JSON by {@link Scrub}. Arguments are checked first (nothing is written for bad
 * input). Ports the reference's {@code scrub_promotions}, {@code scrub_tasks} and {@code
 * scrub_entry}. Thread-safe.
 */
public final class Scrubs {

  /** The id of the transaction that wrote an event (domain V11), as a number. */
  private static final Field<String> EVENT_XID =
      DSL.field("{0}::text", String.class, DSL.field(DSL.name("xid")));

  private final Engine engine;
  private final EventLog log;

  /**
   * Creates the operations.
   *
   * @param engine the ledger's shared state
   * @param log the event log writer
   */
  public Scrubs(Engine engine, EventLog log) {
    this.engine = engine;
    this.log = log;
  }

  /**
   * Removes the why from an entry's promotion events and rows.
   *
   * @param tx the operation's transaction context
   * @param domain the domain
   * @param entry the entry
   * @return how many records of the entry hold no why now; 0 when the domain is unknown
   * @throws InvalidInputException naming {@code domain} or {@code entry}
   */
  public int scrubPromotions(Tx tx, String domain, String entry) {
    Validation.domain(domain);
    Validation.required("entry", entry, Validation.MAX_NAME);
    return underDomainLock(tx, domain, 0, ctx -> Scrub.promotions(ctx, domain, entry));
  }

  /**
   * Rewrites every task filed from {@code origin}, and its retry chain at any depth ({@code
   * retries:<id>} of a task reached), to the redaction, in its events and its row ({@link
   * Scrub#redactTask}), and invalidates the open ones.
   *
   * @param tx the operation's transaction context
   * @param domain the domain
   * @param origin the origin
   * @param redaction what to write instead, not null
   * @return how many tasks were reached; 0 when the domain is unknown
   * @throws InvalidInputException naming the invalid argument
   */
  public int scrubTasks(Tx tx, String domain, String origin, Redaction redaction) {
    Validation.domain(domain);
    Validation.required("origin", origin, Validation.MAX_NAME);
    checkRedaction(redaction);
    return underDomainLock(tx, domain, 0, ctx -> scrubTasksIn(tx, ctx, domain, origin, redaction));
  }

  /**
   * Both scrubs of an erasure.
   *
   * @param tx the operation's transaction context
   * @param domain the domain
   * @param entry the entry whose promotions lose their why
   * @param origin the origin whose tasks are redacted
   * @param redaction what to write instead, not null
   * @return the counts of both scrubs; zeros when the domain is unknown
   * @throws InvalidInputException naming the invalid argument
   */
  public ScrubResult scrubEntry(
      Tx tx, String domain, String entry, String origin, Redaction redaction) {
    Validation.domain(domain);
    Validation.required("entry", entry, Validation.MAX_NAME);
    Validation.required("origin", origin, Validation.MAX_NAME);
    checkRedaction(redaction);
    return underDomainLock(
        tx,
        domain,
        new ScrubResult(0, 0),
        ctx ->
            new ScrubResult(
                Scrub.promotions(ctx, domain, entry),
                scrubTasksIn(tx, ctx, domain, origin, redaction)));
  }

  /**
   * Runs {@code body} on a domain's schema holding the domain's lock; returns {@code unknown} when
   * the domain has no schema.
   */
  private <T> T underDomainLock(Tx tx, String domain, T unknown, Function<DSLContext, T> body) {
    Optional<DSLContext> mapped = engine.domain(tx, domain);
    if (mapped.isEmpty()) {
      return unknown;
    }
    DSLContext ctx = mapped.get();
    DomainLock.lock(ctx, domain);
    return body.apply(ctx);
  }

  private int scrubTasksIn(
      Tx tx, DSLContext ctx, String domain, String origin, Redaction redaction) {
    List<TasksRecord> rows =
        ctx.selectFrom(TASKS)
            .where(TASKS.ID.in(reached(origin)))
            .orderBy(TASKS.CREATED, TASKS.ID)
            .forUpdate()
            .fetch();
    if (rows.isEmpty()) {
      return 0;
    }
    // the feed's consumers that may hold copies of these events get an erased item (docs/feed.md)
    FeedErasures.record(
        tx.directory(),
        domain,
        ctx.select(EVENTS.TASK_ID, EVENTS.SEQ, EVENT_XID)
            .from(EVENTS)
            .where(EVENTS.TASK_ID.in(rows.stream().map(TasksRecord::getId).toList()))
            .orderBy(EVENTS.SEQ)
            .fetch(
                r ->
                    new FeedErasures.Scrubbed(
                        r.value1(), r.value2(), Long.parseUnsignedLong(r.value3()))));
    Instant now = engine.now();
    for (TasksRecord row : rows) {
      if (!Status.parse(row.getStatus()).terminal()) {
        log.applyToRow(tx, ctx, row, now, new Event.Invalidated(redaction.reason(), null));
      }
      Scrub.redactTask(ctx, row, redaction);
    }
    return rows.size();
  }

  /**
   * The ids a scrub of {@code origin} reaches: the tasks filed from the origin, and, transitively,
   * every task filed as {@code retries:<id>} of a task reached. A retry and a re-filed dead letter
   * are filed by the ledger itself ({@code Retries}) with the title and body of the task they
   * repeat, so they carry the erased text; a task filed under any other origin ({@code task:<id>},
   * {@code continues:<id>}) was filed by the caller with text of its own and is not reached. One
   * recursive query, so however a chain is shaped (a re-filed task's own retries included) the
   * scrub finds it.
   */
  private static Select<Record1<String>> reached(String origin) {
    Name chain = DSL.name("scrub_chain");
    Field<String> chainId = DSL.field(DSL.name("scrub_chain", "id"), String.class);
    Tasks retry = TASKS.as("retry");
    CommonTableExpression<Record1<String>> cte =
        chain
            .fields("id")
            .as(
                DSL.select(TASKS.ID)
                    .from(TASKS)
                    .where(TASKS.ORIGIN.eq(origin))
                    .union(
                        DSL.select(retry.ID)
                            .from(retry)
                            .join(DSL.table(chain))
                            .on(retry.ORIGIN.eq(DSL.inline(RETRIES).concat(chainId)))));
    return DSL.withRecursive(cte).select(cte.field("id", String.class)).from(cte);
  }

  private static void checkRedaction(Redaction redaction) {
    Validation.redaction(redaction);
  }
}

package dev.ledger.scrub;

import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.InvalidInputException;
import dev.ledger.Redaction;
import dev.ledger.ScrubResult;
import dev.ledger.Status;
import dev.ledger.Validation;
import dev.ledger.append.EventLog;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.internal.Directory;
import dev.ledger.internal.Event;
import dev.ledger.internal.Scrub;
import dev.ledger.tx.Engine;
import dev.ledger.tx.Tx;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.jooq.DSLContext;
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
   * Rewrites every task filed from {@code origin} to the redaction, in its events and its row, and
   * invalidates the open ones.
   *
   * @param tx the operation's transaction context
   * @param domain the domain
   * @param origin the origin
   * @param redaction what to write instead, not null
   * @return how many tasks were filed from the origin; 0 when the domain is unknown
   * @throws InvalidInputException naming the invalid argument
   */
  public int scrubTasks(Tx tx, String domain, String origin, Redaction redaction) {
    Validation.domain(domain);
    Validation.required("origin", origin, Validation.MAX_NAME);
    checkRedaction(redaction);
    return underDomainLock(tx, domain, 0, ctx -> scrubTasksIn(tx, ctx, origin, redaction));
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
                Scrub.promotions(ctx, domain, entry), scrubTasksIn(tx, ctx, origin, redaction)));
  }

  /**
   * Runs {@code body} on a domain's schema holding the domain's lock; returns {@code unknown} when
   * the domain has no schema.
   */
  private <T> T underDomainLock(Tx tx, String domain, T unknown, Function<DSLContext, T> body) {
    Optional<String> schema = engine.schemaOf(tx, domain);
    if (schema.isEmpty()) {
      return unknown;
    }
    DSLContext ctx = tx.forSchema(schema.get());
    Directory.lockDomain(ctx, domain);
    return body.apply(ctx);
  }

  private int scrubTasksIn(Tx tx, DSLContext ctx, String origin, Redaction redaction) {
    // the tasks filed from the origin, and their retries: a retry is filed from its chain's root
    // (origin retries:<root>) with the root's title and body, so it carries the same text
    List<TasksRecord> rows =
        ctx.selectFrom(TASKS)
            .where(TASKS.ORIGIN.eq(origin))
            .or(
                TASKS.ORIGIN.in(
                    DSL.select(DSL.inline("retries:").concat(TASKS.as("r").ID))
                        .from(TASKS.as("r"))
                        .where(TASKS.as("r").ORIGIN.eq(origin))))
            .orderBy(TASKS.CREATED)
            .forUpdate()
            .fetch();
    Instant now = engine.now();
    for (TasksRecord row : rows) {
      if (!Status.parse(row.getStatus()).terminal()) {
        log.applyToRow(tx, ctx, row, now, new Event.Invalidated(redaction.reason(), null));
      }
      Scrub.redactTask(ctx, row, redaction);
    }
    return rows.size();
  }

  private static void checkRedaction(Redaction redaction) {
    Validation.redaction(redaction);
  }
}

package dev.ledger.claim;

import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.Completion;
import dev.ledger.InvalidInputException;
import dev.ledger.Lease;
import dev.ledger.Status;
import dev.ledger.Validation;
import dev.ledger.codegen.convert.JsonConverter;
import dev.ledger.codegen.db.ledger_template.tables.Tasks;
import dev.ledger.internal.Event;
import dev.ledger.internal.RenderedStatement;
import dev.ledger.internal.RenderedStatement.Slot;
import dev.ledger.tx.Engine;
import dev.ledger.tx.Tx;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jooq.CommonTableExpression;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Record1;
import org.jooq.Record4;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * Completing many tasks of one domain in one transaction: what a worker pool does with the results
 * of one batch. The events and rows are those {@code Ledger.complete} writes for each task, in the
 * order given, appended set-wise ({@code unnest} of the ids and payloads) instead of one round trip
 * each; each lease is checked as {@code complete} checks it, on rows locked {@code FOR UPDATE} in
 * id order (so two batches cannot deadlock).
 */
public final class BatchCompletion {

  private static final JsonConverter JSON = new JsonConverter();

  private final Engine engine;

  /**
   * Creates the operation.
   *
   * @param engine the ledger's shared state
   */
  public BatchCompletion(Engine engine) {
    this.engine = engine;
  }

  /**
   * Completes a batch of one domain in {@code tx} (see {@code Ledger.completeAll}).
   *
   * @param tx the operation's transaction context
   * @param domain the domain
   * @param completions the leases and handoffs
   * @return the refused leases
   * @throws InvalidInputException naming {@code lease} or {@code handoff}
   */
  public List<Lease> completeAll(Tx tx, String domain, List<Completion> completions) {
    Validation.domain(domain);
    if (completions == null) {
      throw new InvalidInputException("completions", "must not be null");
    }
    for (Completion c : completions) {
      if (c == null || c.lease() == null) {
        throw new InvalidInputException("lease", "must not be null");
      }
      Validation.text("handoff", c.handoff(), Validation.MAX_BODY);
    }
    if (completions.isEmpty()) {
      return List.of();
    }
    Optional<String> schema = engine.schemaOf(tx, domain);
    if (schema.isEmpty()) {
      return completions.stream().map(Completion::lease).toList();
    }
    return completeIn(tx, tx.forSchema(schema.get()), completions);
  }

  private List<Lease> completeIn(Tx op, DSLContext tx, List<Completion> completions) {
    // one completion per task: a second one of the same task is refused, as complete would
    List<Lease> lost = new ArrayList<>();
    Map<String, Integer> order = new HashMap<>();
    List<Completion> distinct = new ArrayList<>(completions.size());
    for (Completion c : completions) {
      if (order.putIfAbsent(c.lease().taskId(), distinct.size()) == null) {
        distinct.add(c);
      } else {
        lost.add(c.lease());
      }
    }
    // sorted by id, the order the rows are locked in (two batches cannot deadlock); each carries
    // its place in the given order, the order of the events
    List<Completion> byId = new ArrayList<>(distinct);
    byId.sort(java.util.Comparator.comparing(c -> c.lease().taskId()));
    int n = byId.size();
    String[] ids = new String[n];
    String[] holders = new String[n];
    String[] attempts = new String[n];
    String[] places = new String[n];
    String[] payloads = new String[n];
    String[] handoffs = new String[n];
    for (int i = 0; i < n; i++) {
      Completion c = byId.get(i);
      ids[i] = c.lease().taskId();
      holders[i] = c.lease().holder();
      attempts[i] = Long.toString(c.lease().attempt());
      places[i] = Integer.toString(order.get(ids[i]));
      payloads[i] = JSON.to(new Event.Completed(c.handoff()).payload());
      handoffs[i] = c.handoff();
    }
    java.util.Set<String> done = new java.util.HashSet<>();
    for (Record r :
        statement(tx)
            .fetch(tx, DONE, engine.now(), ids, holders, attempts, places, payloads, handoffs)) {
      done.add(r.get(TASKS.ID));
    }
    for (Completion c : distinct) {
      if (!done.contains(c.lease().taskId())) {
        lost.add(c.lease());
      }
    }
    // the routes' completed and the dependents' blocked flags: the triggers (domain V8, directory
    // V5), in this statement's transaction
    return lost;
  }

  private static final Slot<Instant> AT = Slot.of("at", EVENTS.AT.getDataType());
  private static final Slot<String[]> IDS = textArray("ids");
  private static final Slot<String[]> HOLDERS = textArray("holders");
  private static final Slot<String[]> ATTEMPTS = textArray("attempts");
  private static final Slot<String[]> PLACES = textArray("places");
  private static final Slot<String[]> PAYLOADS = textArray("payloads");
  private static final Slot<String[]> HANDOFFS = textArray("handoffs");
  private static final Field<?>[] DONE = {TASKS.ID};

  private static Slot<String[]> textArray(String name) {
    return Slot.of(name, SQLDataType.CLOB.getArrayDataType());
  }

  /**
   * The completion of a batch, one statement: lock the batch's rows in id order, complete those
   * whose lease is current (the fence: claimed, same holder, same attempt), append a {@code
   * completed} event to each of them in the given order, and return their ids.
   */
  private RenderedStatement statement(DSLContext tx) {
    return engine
        .statements()
        .get(
            tx,
            "complete all",
            () -> {
              Table<?> u =
                  DSL.table(
                          "unnest({0}, {1}, {2}, {3}, {4}, {5})",
                          IDS.field(),
                          HOLDERS.field(),
                          ATTEMPTS.field(),
                          PLACES.field(),
                          PAYLOADS.field(),
                          HANDOFFS.field())
                      .as("u", "id", "holder", "attempt", "place", "payload", "handoff");
              Field<String> uId = DSL.field(DSL.name("u", "id"), String.class);
              Tasks l = TASKS.as("l");
              // every row of the batch locked in id order, as it is now (a fresh version after a
              // concurrent change commits): the fence is checked on these values, which no one
              // else can change until this transaction ends
              CommonTableExpression<Record4<String, String, String, Long>> locked =
                  DSL.name("locked")
                      .asMaterialized(
                          DSL.select(l.ID, l.STATUS, l.HOLDER, l.ATTEMPTS)
                              .from(l)
                              .where(l.ID.eq(DSL.any(IDS.field())))
                              .orderBy(l.ID)
                              .forUpdate()
                              .of(l));
              CommonTableExpression<Record> input =
                  DSL.name("input").as(DSL.select(DSL.asterisk()).from(u));
              Field<String> lockedId = locked.field(l.ID.getName(), String.class);
              Field<String> inputId = DSL.field(DSL.name("input", "id"), String.class);
              CommonTableExpression<Record1<String>> completed =
                  DSL.name("completed")
                      .as(
                          DSL.update(TASKS)
                              .set(TASKS.STATUS, DSL.inline(Status.COMPLETED.wire()))
                              .set(
                                  TASKS.HANDOFF,
                                  DSL.field(DSL.name("input", "handoff"), String.class))
                              .set(
                                  TASKS.LEASE_UNTIL,
                                  DSL.inline((Instant) null, TASKS.LEASE_UNTIL.getDataType()))
                              .from(locked.join(input).on(inputId.eq(lockedId)))
                              .where(TASKS.ID.eq(lockedId))
                              .and(
                                  locked
                                      .field(l.STATUS.getName(), String.class)
                                      .eq(DSL.inline(Status.CLAIMED.wire())))
                              .and(
                                  locked
                                      .field(l.HOLDER.getName(), String.class)
                                      .eq(DSL.field(DSL.name("input", "holder"), String.class)))
                              .and(
                                  locked
                                      .field(l.ATTEMPTS.getName(), Long.class)
                                      .eq(
                                          DSL.field(DSL.name("input", "attempt"), String.class)
                                              .cast(SQLDataType.BIGINT)))
                              .returningResult(TASKS.ID));
              Field<String> doneId = completed.field(TASKS.ID);
              CommonTableExpression<Record1<Long>> logged =
                  DSL.name("logged")
                      .as(
                          DSL.insertInto(
                                  EVENTS, EVENTS.TASK_ID, EVENTS.KIND, EVENTS.AT, EVENTS.PAYLOAD)
                              .select(
                                  DSL.select(
                                          doneId,
                                          DSL.inline(new Event.Completed(null).kind()),
                                          AT.field(),
                                          DSL.field(
                                              DSL.name("input", "payload"),
                                              EVENTS.PAYLOAD.getDataType()))
                                      .from(completed)
                                      .join(input)
                                      .on(inputId.eq(doneId))
                                      .orderBy(
                                          DSL.field(DSL.name("input", "place"), String.class)
                                              .cast(SQLDataType.INTEGER)))
                              .returningResult(EVENTS.SEQ));
              return DSL.with(locked)
                  .with(input)
                  .with(completed)
                  .with(logged)
                  .select(doneId.as(TASKS.ID.getName()))
                  .from(completed);
            },
            List.of(AT, IDS, HOLDERS, ATTEMPTS, PLACES, PAYLOADS, HANDOFFS));
  }
}

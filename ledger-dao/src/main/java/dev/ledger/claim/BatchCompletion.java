package dev.ledger.claim;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_DEPENDENCIES;
import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.Completion;
import dev.ledger.InvalidInputException;
import dev.ledger.Lease;
import dev.ledger.Status;
import dev.ledger.Validation;
import dev.ledger.codegen.convert.JsonConverter;
import dev.ledger.internal.ClaimIndex;
import dev.ledger.internal.Event;
import dev.ledger.tx.Engine;
import dev.ledger.tx.Tx;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
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
    List<String> ids = completions.stream().map(c -> c.lease().taskId()).distinct().toList();
    Map<String, Record> rows = new HashMap<>();
    for (Record r :
        tx.select(TASKS.ID, TASKS.STATUS, TASKS.HOLDER, TASKS.ATTEMPTS)
            .from(TASKS)
            .where(TASKS.ID.in(ids))
            .orderBy(TASKS.ID)
            .forUpdate()
            .fetch()) {
      rows.put(r.get(TASKS.ID), r);
    }
    List<Lease> lost = new ArrayList<>();
    List<Completion> current = new ArrayList<>();
    java.util.Set<String> taken = new java.util.HashSet<>();
    for (Completion c : completions) {
      Lease l = c.lease();
      Record r = rows.get(l.taskId());
      boolean ok =
          r != null
              && Status.CLAIMED.wire().equals(r.get(TASKS.STATUS))
              && l.holder().equals(r.get(TASKS.HOLDER))
              && r.get(TASKS.ATTEMPTS) == l.attempt()
              && taken.add(l.taskId());
      if (ok) {
        current.add(c);
      } else {
        lost.add(l);
      }
    }
    if (current.isEmpty()) {
      return lost;
    }
    Instant now = engine.now();
    String[] taskIds = current.stream().map(c -> c.lease().taskId()).toArray(String[]::new);
    String[] payloads =
        current.stream()
            .map(c -> JSON.to(new Event.Completed(c.handoff()).payload()))
            .toArray(String[]::new);
    String[] handoffs = current.stream().map(Completion::handoff).toArray(String[]::new);
    Field<String[]> idArray = DSL.val(taskIds, SQLDataType.CLOB.getArrayDataType());
    Field<String[]> payloadArray = DSL.val(payloads, SQLDataType.CLOB.getArrayDataType());
    Field<String[]> handoffArray = DSL.val(handoffs, SQLDataType.CLOB.getArrayDataType());
    Table<?> u =
        DSL.table("unnest({0}, {1}) with ordinality", idArray, payloadArray)
            .as("u", "task_id", "payload", "n");
    int events =
        tx.insertInto(EVENTS, EVENTS.TASK_ID, EVENTS.KIND, EVENTS.AT, EVENTS.PAYLOAD)
            .select(
                DSL.select(
                        DSL.field(DSL.name("u", "task_id"), String.class),
                        DSL.inline(new Event.Completed(null).kind()),
                        DSL.val(now, EVENTS.AT),
                        DSL.field(DSL.name("u", "payload"), String.class).coerce(EVENTS.PAYLOAD))
                    .from(u)
                    .orderBy(DSL.field(DSL.name("u", "n"))))
            .execute();
    Table<?> h = DSL.table("unnest({0}, {1})", idArray, handoffArray).as("h", "id", "handoff");
    int updated =
        tx.update(TASKS)
            .set(TASKS.STATUS, DSL.inline(Status.COMPLETED.wire()))
            .set(TASKS.HANDOFF, DSL.field(DSL.name("h", "handoff"), String.class))
            .setNull(TASKS.LEASE_UNTIL)
            .from(h)
            .where(TASKS.ID.eq(DSL.field(DSL.name("h", "id"), String.class)))
            .execute();
    if (events != taskIds.length || updated != taskIds.length) {
      throw new IllegalStateException(
          "completing "
              + taskIds.length
              + " tasks wrote "
              + events
              + " events and "
              + updated
              + " rows");
    }
    List<String> done = List.of(taskIds);
    tx.update(LEDGER_TASKS)
        .set(LEDGER_TASKS.COMPLETED, true)
        .where(LEDGER_TASKS.ID.in(done))
        .execute();
    List<String> withDependents =
        tx.selectDistinct(LEDGER_DEPENDENCIES.DEPENDS_ON)
            .from(LEDGER_DEPENDENCIES)
            .where(LEDGER_DEPENDENCIES.DEPENDS_ON.in(done))
            .orderBy(LEDGER_DEPENDENCIES.DEPENDS_ON)
            .fetch(LEDGER_DEPENDENCIES.DEPENDS_ON);
    for (String id : withDependents) {
      ClaimIndex.completed(tx, engine.statements(), id, d -> engine.forDomain(op, d));
    }
    return lost;
  }
}

package dev.ledger.event;

import dev.ledger.PromotionSpec;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.codegen.db.ledger_template.tables.records.PromotionsRecord;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import java.time.Instant;

/**
 * The projection of events onto {@code tasks} and {@code promotions} rows: the one fold that live
 * operations (on a row locked {@code FOR UPDATE}, then {@code UPDATE}d with its changed columns)
 * and replay (in memory, then bulk-inserted) both use, so the two cannot disagree. Ports the
 * reference's {@code project}, {@code insert_task} and {@code insert_promotion}.
 */
public final class Projection {

  private Projection() {}

  /**
   * The row a {@code created} event projects to: a task born proposed.
   *
   * @param id the new task's id
   * @param at the event's time
   * @param spec what it was filed with
   * @return a new, detached record holding every column
   */
  public static TasksRecord created(String id, Instant at, TaskSpec spec) {
    return new TasksRecord()
        .setId(id)
        .setDomain(spec.domain())
        .setTitle(spec.title())
        .setBody(spec.body())
        .setRequirements(spec.requirements())
        .setDependsOn(spec.dependsOn())
        .setOrigin(spec.origin())
        .setUpstreamEvent(spec.upstreamEvent())
        .setCreatedBy(spec.createdBy())
        .setLabelRank(spec.classification().rank())
        .setPriority(spec.priority())
        .setCreated(at)
        .setStatus(Status.PROPOSED.wire())
        .setHolder(null)
        .setLeaseUntil(null)
        .setAttempts(0L)
        .setHandoff(null)
        .setReason(null)
        .setSupersededBy(null)
        .setPostedTo(null)
        .setBlocked(false)
        .setNotBefore(spec.notBefore())
        .setMaxAttempts((long) spec.maxAttempts());
  }

  /**
   * The row a {@code promoted} event projects to.
   *
   * @param at the event's time
   * @param spec what was promoted
   * @param whyErased whether the why is erased
   * @return a new, detached record holding every column but {@code seq}
   */
  public static PromotionsRecord promoted(Instant at, PromotionSpec spec, boolean whyErased) {
    return new PromotionsRecord()
        .setDomain(spec.domain())
        .setEntry(spec.entry())
        .setTier(spec.tier())
        .setPromoter(spec.by())
        .setAuthor(spec.author())
        .setWhy(spec.why())
        .setLabelRank(spec.classification().rank())
        .setDigest(spec.digest())
        .setNewDigest(spec.newDigest())
        .setAt(at)
        .setWhyErased(whyErased);
  }

  /**
   * Applies an event of an existing task to its row, in place. {@code created} and {@code promoted}
   * events make rows instead ({@link #created}, {@link #promoted}). One exhaustive {@code switch}
   * over {@link EventKind}: a new kind fails to compile here until its projection is written.
   *
   * @param row the task's row, changed in place
   * @param event any event but {@code created} and {@code promoted}
   * @return {@code row}
   * @throws IllegalArgumentException for {@code created} or {@code promoted}
   */
  public static TasksRecord apply(TasksRecord row, Event event) {
    return switch (event.kind()) {
      case ADMITTED -> row.setStatus(Status.ADMITTED.wire());
      case CLAIMED -> {
        Event.Claimed c = (Event.Claimed) event;
        yield row.setStatus(Status.CLAIMED.wire())
            .setHolder(c.holder())
            .setLeaseUntil(c.until())
            .setAttempts(row.getAttempts() + 1);
      }
      case HEARTBEAT -> row.setLeaseUntil(((Event.Heartbeat) event).until());
      case RELEASED -> row.setStatus(Status.ADMITTED.wire()).setHolder(null).setLeaseUntil(null);
      case HANDOFF_LEFT -> row.setHandoff(((Event.HandoffLeft) event).handoff());
      case COMPLETED ->
          row.setStatus(Status.COMPLETED.wire())
              .setHandoff(((Event.Completed) event).handoff())
              .setLeaseUntil(null);
      case INVALIDATED -> {
        Event.Invalidated i = (Event.Invalidated) event;
        yield row.setStatus(Status.INVALIDATED.wire())
            .setReason(i.reason())
            .setSupersededBy(i.supersededBy())
            .setLeaseUntil(null);
      }
      case POSTED -> row.setPostedTo(((Event.Posted) event).to());
      case RESCORED -> row.setPriority(((Event.Rescored) event).priority());
      case CREATED, PROMOTED ->
          throw new IllegalArgumentException(
              "a " + event.kind().wire() + " event makes a row; it does not change one");
    };
  }
}

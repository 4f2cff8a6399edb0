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
   * events make rows instead ({@link #created}, {@link #promoted}).
   *
   * @param row the task's row, changed in place
   * @param event any event but {@code created} and {@code promoted}
   * @throws IllegalArgumentException for {@code created} or {@code promoted}
   */
  public static void apply(TasksRecord row, Event event) {
    if (event instanceof Event.Admitted) {
      row.setStatus(Status.ADMITTED.wire());
    } else if (event instanceof Event.Claimed c) {
      row.setStatus(Status.CLAIMED.wire())
          .setHolder(c.holder())
          .setLeaseUntil(c.until())
          .setAttempts(row.getAttempts() + 1);
    } else if (event instanceof Event.Heartbeat h) {
      row.setLeaseUntil(h.until());
    } else if (event instanceof Event.Released) {
      row.setStatus(Status.ADMITTED.wire()).setHolder(null).setLeaseUntil(null);
    } else if (event instanceof Event.HandoffLeft h) {
      row.setHandoff(h.handoff());
    } else if (event instanceof Event.Completed c) {
      row.setStatus(Status.COMPLETED.wire()).setHandoff(c.handoff()).setLeaseUntil(null);
    } else if (event instanceof Event.Invalidated i) {
      row.setStatus(Status.INVALIDATED.wire())
          .setReason(i.reason())
          .setSupersededBy(i.supersededBy())
          .setLeaseUntil(null);
    } else if (event instanceof Event.Posted p) {
      row.setPostedTo(p.to());
    } else if (event instanceof Event.Rescored r) {
      row.setPriority(r.priority());
    } else {
      throw new IllegalArgumentException(
          "a " + event.kind() + " event makes a row; it does not change one");
    }
  }
}

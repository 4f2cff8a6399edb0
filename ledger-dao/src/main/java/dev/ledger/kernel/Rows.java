package dev.ledger.kernel;

import dev.ledger.Label;
import dev.ledger.Promotion;
import dev.ledger.PromotionSpec;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.TaskSpec;
import dev.ledger.codegen.db.ledger_template.tables.records.PromotionsRecord;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;

/** Generated records to the API's value objects; jOOQ records never leave the DAO layer. */
public final class Rows {

  private Rows() {}

  /**
   * A task row as a {@link Task}.
   *
   * @param r the row
   * @return the task
   */
  public static Task task(TasksRecord r) {
    return new Task(
        r.getId(),
        new TaskSpec(
            r.getDomain(),
            r.getTitle(),
            r.getBody(),
            r.getRequirements(),
            r.getDependsOn(),
            r.getOrigin(),
            r.getUpstreamEvent(),
            r.getCreatedBy(),
            Label.ofRank(r.getLabelRank()),
            r.getPriority(),
            r.getNotBefore(),
            Math.toIntExact(r.getMaxAttempts())),
        r.getCreated(),
        Status.parse(r.getStatus()),
        r.getHolder(),
        r.getLeaseUntil(),
        r.getAttempts(),
        r.getHandoff(),
        r.getReason(),
        r.getSupersededBy(),
        r.getPostedTo());
  }

  /**
   * A promotions row as a {@link Promotion}.
   *
   * @param r the row
   * @return the promotion
   */
  public static Promotion promotion(PromotionsRecord r) {
    return new Promotion(
        new PromotionSpec(
            r.getDomain(),
            r.getEntry(),
            r.getTier(),
            r.getPromoter(),
            r.getAuthor(),
            r.getWhy(),
            Label.ofRank(r.getLabelRank()),
            r.getDigest(),
            r.getNewDigest()),
        r.getAt(),
        Boolean.TRUE.equals(r.getWhyErased()));
  }
}

package dev.ledger.append;

import static dev.ledger.codegen.db.ledger_template.Tables.PROMOTIONS;

import dev.ledger.PromotionSpec;
import dev.ledger.Validation;
import dev.ledger.event.Event;
import dev.ledger.event.EventLog;
import dev.ledger.event.Projection;
import dev.ledger.kernel.DomainLock;
import dev.ledger.kernel.Engine;
import dev.ledger.kernel.Tx;
import java.time.Instant;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * Recording a promotion: its {@code promoted} event (keyed {@code promotion:<entry>}) and its row
 * in {@code promotions}, unless this promoter promoted this version of the entry to this tier
 * already. The domain's lock is held from the check to the end of the transaction, so two processes
 * recording the same promotion record it once. Ports the reference's {@code record_promotion}.
 * Thread-safe.
 */
public final class PromotionRecording {

  private final Engine engine;
  private final EventLog log;

  /**
   * Creates the operation.
   *
   * @param engine the ledger's shared state
   * @param log the event log writer
   */
  public PromotionRecording(Engine engine, EventLog log) {
    this.engine = engine;
    this.log = log;
  }

  /**
   * Records a promotion in {@code tx}, making the domain's schema first when needed.
   *
   * @param tx the operation's transaction context
   * @param spec the promotion
   * @param whyErased whether the promotion is recorded with its why erased ({@code why_erased} of
   *     its event and row), as the reference's {@code record_promotion} takes it
   * @return true when recorded, false when it was there already
   * @throws dev.ledger.InvalidInputException naming the field, see {@link Validation#promotion}
   */
  public boolean record(Tx tx, PromotionSpec spec, boolean whyErased) {
    Validation.promotion(spec);
    DSLContext ctx = engine.domainForWrite(tx, spec.domain());
    DomainLock.lock(ctx, spec.domain());
    boolean seen =
        ctx.fetchExists(
            DSL.selectOne()
                .from(PROMOTIONS)
                .where(PROMOTIONS.ENTRY.eq(spec.entry()))
                .and(PROMOTIONS.TIER.eq(spec.tier()))
                .and(PROMOTIONS.DIGEST.eq(spec.digest()))
                .and(PROMOTIONS.PROMOTER.eq(spec.by())));
    if (seen) {
      return false;
    }
    Instant now = engine.now();
    log.append(ctx, promotionKey(spec.entry()), now, new Event.Promoted(spec, whyErased));
    ctx.insertInto(PROMOTIONS).set(Projection.promoted(now, spec, whyErased)).execute();
    return true;
  }

  /**
   * The event key of an entry's promotions.
   *
   * @param entry the entry
   * @return {@code promotion:<entry>}
   */
  public static String promotionKey(String entry) {
    return "promotion:" + entry;
  }
}

package dev.ledger;

/**
 * A promotion of a version of an entry to a tier: the {@code spec} of a {@code promoted} event.
 * Ports the reference's {@code PromotionSpec}. Recorded once per (entry, tier, digest, promoter).
 *
 * @param domain the domain
 * @param entry the entry promoted, e.g. {@code runbook/oncall}; its events are kept under {@code
 *     promotion:<entry>}
 * @param tier the tier, e.g. {@code reviewed}
 * @param by the promoter (column {@code promoter})
 * @param author the entry's author
 * @param why the reason; erased by {@link Ledger#scrubPromotions(String, String)}
 * @param classification the entry's label
 * @param digest the digest of the version promoted
 * @param newDigest the digest the promotion produced, {@code ""} for none (first-shape promotions
 *     have none)
 */
public record PromotionSpec(
    String domain,
    String entry,
    String tier,
    String by,
    String author,
    String why,
    Label classification,
    String digest,
    String newDigest) {

  /** Normalises nulls: no new digest is {@code ""}, no label is {@code public}. */
  public PromotionSpec {
    newDigest = newDigest == null ? "" : newDigest;
    classification = classification == null ? Label.PUBLIC : classification;
  }
}

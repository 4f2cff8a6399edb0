package dev.ledger;

import java.time.Instant;

/**
 * A recorded promotion: a row of the domain's {@code promotions} table. Ports the reference's
 * {@code PromotionRecord}.
 *
 * @param spec what was promoted ({@code why} is {@code ""} once erased)
 * @param at when it was recorded
 * @param whyErased whether the why has been scrubbed
 */
public record Promotion(PromotionSpec spec, Instant at, boolean whyErased) {}

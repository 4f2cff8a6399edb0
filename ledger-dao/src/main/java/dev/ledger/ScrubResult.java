package dev.ledger;

/**
 * What {@link Ledger#scrubEntry} did.
 *
 * @param promotions how many promotion records of the entry hold no why now
 * @param tasks how many tasks were filed from the origin (all redacted)
 */
public record ScrubResult(int promotions, int tasks) {}

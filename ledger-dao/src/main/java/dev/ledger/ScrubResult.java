package dev.ledger;

/**
 * What {@link Ledger#scrubEntry} did.
 *
 * @param promotions how many promotion records of the entry hold no why now
 * @param tasks how many tasks the scrub reached (all redacted): those filed from the origin and
 *     their retry chains, as {@link Ledger#scrubTasks} says
 */
public record ScrubResult(int promotions, int tasks) {}

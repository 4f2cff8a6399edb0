/**
 * Retention (issue 25): how long each domain keeps its completed and invalidated tasks ({@link
 * dev.ledger.retention.Retention#set}), and the purge that removes older ones with their events,
 * routes and dependency edges in short batches ({@link dev.ledger.retention.Retention#purge}).
 * Reached through {@link dev.ledger.Ledger#retention()}. See docs/retention.md.
 */
package dev.ledger.retention;

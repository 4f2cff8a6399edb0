/**
 * Queue controls: a domain's pause, concurrency limit and rate limit, kept in its schema's {@code
 * queue_controls} row, set through {@link dev.ledger.Ledger#pause}, {@link
 * dev.ledger.Ledger#setLimits} and read by the gate every controlled claim passes ({@link
 * dev.ledger.control.QueueControls}). See docs/controls.md.
 */
package dev.ledger.control;

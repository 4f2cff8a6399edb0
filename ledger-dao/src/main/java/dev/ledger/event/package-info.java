/**
 * Private API. No compatibility guarantees provided.
 *
 * <p>The event log, format v1: each kind declared once ({@link dev.ledger.event.EventKind}, its
 * wire name in {@code events.kind}), its payload ({@link dev.ledger.event.Event}), the fold of
 * events onto rows that live operations and replay share ({@link dev.ledger.event.Projection}), and
 * the writes that append an event and project it ({@link dev.ledger.event.EventLog}). A new kind is
 * a new constant of {@code EventKind} and a new record of {@code Event}: every exhaustive {@code
 * switch} over the kinds (projection, parsing, redaction) then fails to compile until it handles
 * it.
 */
package dev.ledger.event;

/**
 * The event feed: named consumers follow one or several domains' events in order, with a checkpoint
 * in the database and one active reader per consumer and domain. {@link dev.ledger.feed.Feed} is
 * the reader ({@code ledger.feed(spec)}), {@link dev.ledger.feed.FeedRunner} a follower that calls
 * a {@link dev.ledger.feed.FeedHandler}. The delivery rule (a transaction-id watermark, so an event
 * that commits late is never skipped) is in docs/feed.md.
 */
package dev.ledger.feed;

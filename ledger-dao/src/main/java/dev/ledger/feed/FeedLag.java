package dev.ledger.feed;

import java.time.Duration;

/**
 * How far a consumer is behind in one domain.
 *
 * @param domain the domain
 * @param pending committed events not yet checkpointed by the consumer (readable now or held back)
 * @param heldBack of those, the events above the watermark: committed, but not deliverable until
 *     every transaction older than theirs has ended (a long transaction anywhere in the cluster
 *     holds them back; docs/feed.md)
 * @param oldest the age of the oldest pending event ({@code now - at}), {@link Duration#ZERO} when
 *     none is pending
 */
public record FeedLag(String domain, long pending, long heldBack, Duration oldest) {}

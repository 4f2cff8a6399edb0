package dev.ledger;

import java.util.Map;

/**
 * One domain as {@link Ledger#describeDomains()} reports it.
 *
 * @param domain the domain
 * @param schema its schema, unquoted
 * @param version the schema's migration version, or null when it has no history
 * @param tasks how many tasks it holds in each status (every status present, zero included)
 */
public record DomainInfo(String domain, String schema, String version, Map<Status, Long> tasks) {}

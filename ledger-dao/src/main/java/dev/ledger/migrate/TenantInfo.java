package dev.ledger.migrate;

/**
 * One tenant of the registry as it may be shown: never its DSN.
 *
 * @param tenant the tenant id
 * @param status its status
 * @param reason why it is degraded; null otherwise
 * @param updated when its status last changed, RFC 3339 UTC with microseconds
 */
public record TenantInfo(String tenant, TenantStatus status, String reason, String updated) {}

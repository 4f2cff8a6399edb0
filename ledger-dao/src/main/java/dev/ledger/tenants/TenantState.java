package dev.ledger.tenants;

import dev.ledger.migrate.TenantStatus;

/**
 * One registered tenant as a {@link TenantDirectory} sees it, for health checks and metrics. Holds
 * no DSN.
 *
 * @param tenant the tenant id
 * @param status its registry status as of the last refresh
 * @param served whether the directory serves it (active, with a valid DSN)
 * @param reachable false while its database is known not to answer (calls are refused at once);
 *     true otherwise, also before its first call
 * @param openConnections the physical connections its pool holds now, 0 before its first call
 * @param activeConnections how many of them are in use now
 */
public record TenantState(
    String tenant,
    TenantStatus status,
    boolean served,
    boolean reachable,
    int openConnections,
    int activeConnections) {}

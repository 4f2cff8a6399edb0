package dev.ledger.migrate;

import java.time.Duration;

/**
 * What a fleet run did for one tenant (the reference reconciler's {@code TenantReport}).
 *
 * @param tenant the tenant id
 * @param before its registry status before the run
 * @param status its registry status after the run (a plan changes none)
 * @param skipped true when the run left it alone: degraded and not retried, busy ({@code locked}),
 *     or not started because the control database failed
 * @param locked true when it was skipped because another run (ours or the reference reconciler's)
 *     held its advisory lock for the whole lock timeout; its status is then unchanged and the next
 *     run migrates it
 * @param applied migrations applied to its database by this run, over all its schemas
 * @param pending plan: migrations a migrate would apply, over all its schemas
 * @param schemas schemas of its database the run looked at; zero when it could not be reached
 * @param error why it is degraded (names the migration or the failure) or was skipped; null when it
 *     ended well. Never contains its DSN or password
 * @param elapsed time spent on it, lock wait included
 * @param report its database's report (errors redacted); null when it could not be reached or was
 *     skipped
 */
public record TenantReport(
    String tenant,
    TenantStatus before,
    TenantStatus status,
    boolean skipped,
    boolean locked,
    int applied,
    int pending,
    int schemas,
    String error,
    Duration elapsed,
    MigrationReport report) {}

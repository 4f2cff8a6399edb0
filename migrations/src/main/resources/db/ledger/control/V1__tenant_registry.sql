-- The fleet's tenant registry, in the control database (the reference reconciler's harness_tenants,
-- with the reason a tenant went degraded and when its status last changed). The DSN carries
-- credentials: ledger-app reads it to connect and never prints or logs it.
CREATE TABLE "${flyway:defaultSchema}".ledger_tenants (
    tenant  TEXT PRIMARY KEY,
    dsn     TEXT NOT NULL,
    status  TEXT NOT NULL CHECK (status IN ('provisioning', 'active', 'degraded')),
    reason  TEXT,
    updated TEXT NOT NULL
);

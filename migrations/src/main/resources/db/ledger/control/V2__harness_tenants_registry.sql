-- One registry for both reconcilers (issue #13, item 8): the fleet's tenants live in the reference
-- reconciler's harness_tenants (tenant, dsn, status), made here exactly as its bootstrap_registry
-- makes it, so a control database either stack bootstrapped first is read and written by both.
-- What the reference's table has no column for (why a tenant went degraded, when its status was
-- last set by ledger-app) goes to ledger_tenant_notes; a note is shown only while harness_tenants
-- still holds the status it was written with (a status the reference set has no note of ours).
CREATE TABLE IF NOT EXISTS "${flyway:defaultSchema}".harness_tenants (
    tenant TEXT PRIMARY KEY,
    dsn    TEXT NOT NULL,
    status TEXT NOT NULL
);

CREATE TABLE "${flyway:defaultSchema}".ledger_tenant_notes (
    tenant  TEXT PRIMARY KEY,
    status  TEXT NOT NULL,
    reason  TEXT,
    updated TEXT NOT NULL
);

-- The tenants registered before: into harness_tenants, unless the reference registered the same
-- tenant id (its row is kept: that is the fleet the reference serves); their notes when the row
-- kept is theirs. The old table, when it held any tenant, stays as ledger_tenants_before_harness,
-- so a tenant whose id both stacks registered with different DSNs can be compared by hand.
INSERT INTO "${flyway:defaultSchema}".harness_tenants (tenant, dsn, status)
SELECT tenant, dsn, status FROM "${flyway:defaultSchema}".ledger_tenants
ON CONFLICT (tenant) DO NOTHING;

INSERT INTO "${flyway:defaultSchema}".ledger_tenant_notes (tenant, status, reason, updated)
SELECT o.tenant, o.status, o.reason, o.updated
FROM "${flyway:defaultSchema}".ledger_tenants o
JOIN "${flyway:defaultSchema}".harness_tenants h
  ON h.tenant = o.tenant AND h.dsn = o.dsn AND h.status = o.status;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM "${flyway:defaultSchema}".ledger_tenants) THEN
        ALTER TABLE "${flyway:defaultSchema}".ledger_tenants RENAME TO ledger_tenants_before_harness;
    ELSE
        DROP TABLE "${flyway:defaultSchema}".ledger_tenants;
    END IF;
END
$$;

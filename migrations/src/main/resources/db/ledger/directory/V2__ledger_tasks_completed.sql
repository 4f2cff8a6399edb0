-- Not in the reference: whether the task has completed, derived from its `completed` event (a
-- replay rebuilds it). A claim checks "every dependency completed, in whatever domain" inside one
-- SQL statement through this column instead of visiting each dependency's domain schema.
ALTER TABLE "${flyway:defaultSchema}".ledger_tasks
    ADD COLUMN IF NOT EXISTS completed BOOLEAN NOT NULL DEFAULT false;

-- Backfill from the domain schemas a ledger already has. Schema names come from the routing table
-- and are used only when they have the shape of a domain schema name (quoted, ledger_..._<8 hex>).
DO $$
DECLARE
    d RECORD;
BEGIN
    FOR d IN SELECT schema FROM "${flyway:defaultSchema}".ledger_domains LOOP
        IF d.schema ~ '^"ledger_[a-z0-9_]{0,40}_[0-9a-f]{8}"$'
           AND to_regclass(d.schema || '.tasks') IS NOT NULL THEN
            EXECUTE format(
                'UPDATE %I.ledger_tasks r SET completed = true FROM %s.tasks t
                  WHERE t.id = r.id AND t.status = ''completed'' AND NOT r.completed',
                '${flyway:defaultSchema}', d.schema);
        END IF;
    END LOOP;
END
$$;

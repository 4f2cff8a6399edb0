-- Not in the reference: the derived state a claim reads (ledger_tasks.completed here, tasks.blocked
-- and claim_classes in each domain schema) is kept right by the database itself, whoever writes the
-- rows: this ledger, the reference stack's own INSERT/UPDATE/DELETE statements (which know nothing
-- of these columns), or an operator's SQL. Domain migration V8 installs the domain half.
--
-- This half: when a route's `completed` changes (or a completed route is inserted or deleted), every
-- task that depends on it, in whatever domain, gets its `blocked` flag recomputed from the
-- `completed` flags of all its dependencies. Dependents are locked in id order first, and the flags
-- are read by a fresh statement after the locks, so two dependencies completing at once cannot both
-- miss the other's commit. A domain schema not yet migrated to a version with `blocked` is skipped
-- (its migration recomputes the flags).
--
-- A replay (`Ledger.rebuild`) recomputes everything itself in bulk: it sets the transaction-local
-- setting ledger.replay to 'on', and the triggers' WHEN clauses skip it.
-- A dependent's open dependencies are looked up by the dependent (task_id); the key serves lookups
-- by the dependency.
CREATE INDEX IF NOT EXISTS ledger_dependencies_task
    ON "${flyway:defaultSchema}".ledger_dependencies (task_id);

CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".ledger_route_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    changed text;
    d RECORD;
    x RECORD;
BEGIN
    IF TG_OP = 'DELETE' THEN
        changed := OLD.id;
    ELSE
        changed := NEW.id;
    END IF;
    FOR d IN
        SELECT m.schema, array_agg(e.task_id ORDER BY e.task_id) AS ids
          FROM "${flyway:defaultSchema}".ledger_dependencies e
          JOIN "${flyway:defaultSchema}".ledger_tasks r ON r.id = e.task_id
          JOIN "${flyway:defaultSchema}".ledger_domains m ON m.domain = r.domain
         WHERE e.depends_on = changed
         GROUP BY m.schema
         ORDER BY m.schema
    LOOP
        IF d.schema ~ '^"ledger_[a-z0-9_]{0,40}_[0-9a-f]{8}"$'
           AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                        WHERE a.attrelid = to_regclass(d.schema || '.tasks')
                          AND a.attname = 'blocked' AND NOT a.attisdropped) THEN
            EXECUTE format(
                'SELECT count(*) FROM (SELECT 1 FROM %s.tasks WHERE id = ANY ($1)
                  ORDER BY id FOR UPDATE) locked', d.schema)
                USING d.ids;
            -- a fresh statement after the locks: it sees every completion committed meanwhile
            FOR x IN
                SELECT u.id, EXISTS (
                           SELECT 1 FROM "${flyway:defaultSchema}".ledger_dependencies e
                             LEFT JOIN "${flyway:defaultSchema}".ledger_tasks r
                                    ON r.id = e.depends_on
                            WHERE e.task_id = u.id AND r.completed IS NOT TRUE) AS open
                  FROM unnest(d.ids) AS u(id)
            LOOP
                EXECUTE format(
                    'UPDATE %s.tasks SET blocked = $2
                      WHERE id = $1 AND blocked IS DISTINCT FROM $2', d.schema)
                    USING x.id, x.open;
            END LOOP;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

CREATE TRIGGER ledger_route_completed_changed
    AFTER UPDATE OF completed ON "${flyway:defaultSchema}".ledger_tasks
    FOR EACH ROW
    WHEN (OLD.completed IS DISTINCT FROM NEW.completed
          AND current_setting('ledger.replay', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION "${flyway:defaultSchema}".ledger_route_changed();

CREATE TRIGGER ledger_route_completed_inserted
    AFTER INSERT ON "${flyway:defaultSchema}".ledger_tasks
    FOR EACH ROW
    WHEN (NEW.completed AND current_setting('ledger.replay', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION "${flyway:defaultSchema}".ledger_route_changed();

CREATE TRIGGER ledger_route_completed_deleted
    AFTER DELETE ON "${flyway:defaultSchema}".ledger_tasks
    FOR EACH ROW
    WHEN (OLD.completed AND current_setting('ledger.replay', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION "${flyway:defaultSchema}".ledger_route_changed();

-- Bring what the reference stack (or anything else) wrote since V2 and V3 right: every route's
-- `completed` from its task's status, every dependency edge from its task's depends_on. With the
-- triggers in place, a route that changes here recomputes its dependents' flags.
DO $$
DECLARE
    d RECORD;
BEGIN
    FOR d IN SELECT schema FROM "${flyway:defaultSchema}".ledger_domains ORDER BY schema LOOP
        IF d.schema ~ '^"ledger_[a-z0-9_]{0,40}_[0-9a-f]{8}"$'
           AND to_regclass(d.schema || '.tasks') IS NOT NULL THEN
            EXECUTE format(
                'INSERT INTO %I.ledger_dependencies (depends_on, task_id)
                 SELECT DISTINCT dep, t.id FROM %s.tasks t,
                        jsonb_array_elements_text(t.depends_on::jsonb) AS dep
                 ON CONFLICT DO NOTHING',
                '${flyway:defaultSchema}', d.schema);
            EXECUTE format(
                'UPDATE %I.ledger_tasks r SET completed = (t.status = ''completed'')
                   FROM %s.tasks t
                  WHERE t.id = r.id AND r.completed IS DISTINCT FROM (t.status = ''completed'')',
                '${flyway:defaultSchema}', d.schema);
        END IF;
    END LOOP;
END
$$;

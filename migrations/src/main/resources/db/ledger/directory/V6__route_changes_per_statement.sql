-- Not in the reference. V5 recomputed dependents' `blocked` flags with a row trigger: one PL/pgSQL
-- call per route whose `completed` changed, each looking its dependents up on its own. A worker
-- pool's batch completion changes a dozen routes in one UPDATE, and those calls were the largest
-- part of the batch's time in the database (bench B9, auto_explain: 0.9 of 2.1 ms for 17 routes,
-- none of them with a dependent). This statement trigger does the same for every row of one
-- UPDATE at once: one lookup of the dependents of all the changed routes, then per domain schema
-- one lock of the dependents in id order and one UPDATE of their flags, whoever writes (the
-- domains' completion triggers, the reference stack's statements, an operator's SQL).
--
-- Changed is what V5's WHEN clause said, per row: `completed` differs from the old row's. An
-- UPDATE that changes a route's id counts both ids (the old one is gone, the new one is new).
-- Inserted and deleted routes keep V5's row triggers: they fire only for a completed route, which
-- only a copy or an operator inserts or deletes, and a statement trigger would run on every filing.
--
-- Locks are taken as before: the dependents of one statement's changes, schemas in name order,
-- each schema's rows in id order; the flags are then read by a fresh statement, which sees every
-- completion committed while it waited. A replay still skips it (ledger.replay = on).
CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".ledger_routes_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    changed text[];
    d RECORD;
BEGIN
    SELECT array_agg(c.id) INTO changed FROM (
        SELECT n.id FROM ledger_new_routes n
         WHERE NOT EXISTS (SELECT 1 FROM ledger_old_routes o
                            WHERE o.id = n.id AND o.completed = n.completed)
        UNION
        SELECT o.id FROM ledger_old_routes o
         WHERE NOT EXISTS (SELECT 1 FROM ledger_new_routes n WHERE n.id = o.id)
           AND o.completed) c;
    IF changed IS NULL THEN
        RETURN NULL;
    END IF;
    FOR d IN
        SELECT m.schema, array_agg(DISTINCT e.task_id ORDER BY e.task_id) AS ids
          FROM "${flyway:defaultSchema}".ledger_dependencies e
          JOIN "${flyway:defaultSchema}".ledger_tasks r ON r.id = e.task_id
          JOIN "${flyway:defaultSchema}".ledger_domains m ON m.domain = r.domain
         WHERE e.depends_on = ANY (changed)
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
            EXECUTE format(
                'UPDATE %s.tasks t SET blocked = x.open
                   FROM (SELECT u.id, EXISTS (
                                SELECT 1 FROM "${flyway:defaultSchema}".ledger_dependencies e
                                  LEFT JOIN "${flyway:defaultSchema}".ledger_tasks r
                                         ON r.id = e.depends_on
                                 WHERE e.task_id = u.id AND r.completed IS NOT TRUE) AS open
                           FROM unnest($1::text[]) AS u(id)) x
                  WHERE t.id = x.id AND t.blocked IS DISTINCT FROM x.open',
                d.schema)
                USING d.ids;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

DROP TRIGGER ledger_route_completed_changed ON "${flyway:defaultSchema}".ledger_tasks;

CREATE TRIGGER ledger_routes_completed_changed
    AFTER UPDATE ON "${flyway:defaultSchema}".ledger_tasks
    REFERENCING OLD TABLE AS ledger_old_routes NEW TABLE AS ledger_new_routes
    FOR EACH STATEMENT
    WHEN (current_setting('ledger.replay', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION "${flyway:defaultSchema}".ledger_routes_changed();

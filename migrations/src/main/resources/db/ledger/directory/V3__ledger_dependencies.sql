-- Not in the reference: each dependency edge, so completing a task finds the tasks (of any domain)
-- waiting on it with one index lookup and clears their `blocked` flag. Derived from the `created`
-- events (depends_on); a replay rebuilds it.
CREATE TABLE IF NOT EXISTS "${flyway:defaultSchema}".ledger_dependencies (
    depends_on TEXT NOT NULL,
    task_id    TEXT NOT NULL,
    PRIMARY KEY (depends_on, task_id)
);

DO $$
DECLARE
    d RECORD;
BEGIN
    FOR d IN SELECT schema FROM "${flyway:defaultSchema}".ledger_domains LOOP
        IF d.schema ~ '^"ledger_[a-z0-9_]{0,40}_[0-9a-f]{8}"$'
           AND to_regclass(d.schema || '.tasks') IS NOT NULL THEN
            EXECUTE format(
                'INSERT INTO %I.ledger_dependencies (depends_on, task_id)
                 SELECT DISTINCT dep, t.id FROM %s.tasks t,
                        jsonb_array_elements_text(t.depends_on::jsonb) AS dep
                 ON CONFLICT DO NOTHING',
                '${flyway:defaultSchema}', d.schema);
        END IF;
    END LOOP;
END
$$;

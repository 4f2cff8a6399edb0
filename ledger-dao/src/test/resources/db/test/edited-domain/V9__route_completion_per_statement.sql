-- Not in the reference. V8 kept a route's `completed` right with a row trigger that ran one
-- dynamic UPDATE of the directory's ledger_tasks per task whose status entered or left
-- `completed`: planned afresh for every row, it was half the time of completing a worker pool's
-- batch (bench B9). This statement trigger does the same for every row of one UPDATE statement
-- at once: one dynamic UPDATE over the changed ids, whoever writes (this ledger's batch
-- completion, the reference stack's one-row UPDATEs, an operator's SQL). Inserted rows keep
-- V8's row trigger (it fires only for a row inserted completed, which only a copy or a replay
-- does).
--
-- A statement that changes no row's completion (a claim, a heartbeat, an admit) reads its
-- transition tables once and stops there. A replay still skips it (ledger.replay = on).

CREATE FUNCTION "${flyway:defaultSchema}".ledger_tasks_completion_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    dir text;
    ids text[];
    flags boolean[];
BEGIN
    -- the rows whose completion changed; a row whose id changed counts as changed (its new id's
    -- route is set to what the row says, which is right either way)
    SELECT array_agg(n.id ORDER BY n.id), array_agg(n.status = 'completed' ORDER BY n.id)
      INTO ids, flags
      FROM ledger_new_rows n
     WHERE NOT EXISTS (
               SELECT 1 FROM ledger_old_rows o
                WHERE o.id = n.id AND (o.status = 'completed') = (n.status = 'completed'));
    IF ids IS NULL THEN
        RETURN NULL;
    END IF;
    dir := "${flyway:defaultSchema}".ledger_directory_of(TG_TABLE_SCHEMA);
    IF dir IS NULL THEN
        RETURN NULL;
    END IF;
    -- in id order, as the row trigger's statements came one row at a time; directory V5's
    -- trigger recomputes the dependents of each route that changes
    EXECUTE format(
        'UPDATE %I.ledger_tasks r SET completed = x.completed
           FROM unnest($1::text[], $2::boolean[]) AS x(id, completed)
          WHERE r.id = x.id AND r.completed IS DISTINCT FROM x.completed', dir)
        USING ids, flags;
    RETURN NULL;
END
$$;

DROP TRIGGER ledger_task_status_changed ON "${flyway:defaultSchema}".tasks;

CREATE TRIGGER ledger_tasks_completion_changed
    AFTER UPDATE ON "${flyway:defaultSchema}".tasks
    REFERENCING OLD TABLE AS ledger_old_rows NEW TABLE AS ledger_new_rows
    FOR EACH STATEMENT
    WHEN (current_setting('ledger.replay', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION "${flyway:defaultSchema}".ledger_tasks_completion_changed();

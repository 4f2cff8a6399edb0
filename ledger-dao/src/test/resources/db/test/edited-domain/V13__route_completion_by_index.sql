-- Not in the reference. V9's statement trigger updated the changed routes with a join of the
-- directory's ledger_tasks to the unnested ids: the planner, costing the join against the whole
-- routing table, chose a sequential scan of every domain's routes for every completing statement
-- (auto_explain in B9's quick drain; pg_stat_statements: 0.91 ms of the batch completion's 2.8 ms
-- per statement, a third, at 4,000 routes; 2.3 ms against 0.33 ms by the index at 6,000), until the
-- directory is large enough for the index to win its costing. The same UPDATE now also names its
-- ids as an array
-- (`r.id = ANY`), which the planner matches to the routing table's primary key whatever the
-- directory's size. What it writes is unchanged: the route of every row whose completion changed,
-- in id order, whoever wrote the rows.

CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".ledger_tasks_completion_changed() RETURNS trigger
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
          WHERE r.id = ANY ($1::text[]) AND r.id = x.id
            AND r.completed IS DISTINCT FROM x.completed', dir)
        USING ids, flags;
    RETURN NULL;
END
$$;

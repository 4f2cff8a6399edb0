-- Not in the reference. V8's row trigger ledger_task_filed ran a plpgsql call and an
-- `INSERT ... ON CONFLICT DO NOTHING` into claim_classes for every inserted task: for a batch
-- filing of 1,000 tasks (bench B12) about half the time of the tasks' INSERT. Here the claim
-- classes of one INSERT statement are written once, by a statement trigger over its transition
-- table, whoever inserts (this ledger's single and batch filings, the reference stack's one-row
-- INSERTs, an operator's SQL); the row trigger is left with what needs the row before it is
-- written (the dependency edges and `blocked`) and fires only for a row that has dependencies or
-- says it is blocked, which it alone sets right.
--
-- A replay still skips both (ledger.replay = on): it writes claim classes and flags itself.

CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".ledger_task_filed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    dir text;
    deps text[];
    done bigint;
BEGIN
    IF NEW.depends_on = '[]' THEN
        NEW.blocked := false;
        RETURN NEW;
    END IF;
    deps := ARRAY(SELECT DISTINCT jsonb_array_elements_text(NEW.depends_on::jsonb));
    IF cardinality(deps) = 0 THEN
        NEW.blocked := false;
        RETURN NEW;
    END IF;
    dir := "${flyway:defaultSchema}".ledger_directory_of(TG_TABLE_SCHEMA);
    IF dir IS NULL THEN
        NEW.blocked := true;
        RETURN NEW;
    END IF;
    EXECUTE format(
        'INSERT INTO %I.ledger_dependencies (depends_on, task_id)
         SELECT unnest($1), $2 ON CONFLICT DO NOTHING', dir)
        USING deps, NEW.id;
    EXECUTE format(
        'SELECT count(*) FILTER (WHERE completed) FROM (
            SELECT completed FROM %I.ledger_tasks WHERE id = ANY ($1) ORDER BY id FOR SHARE) r', dir)
        INTO done USING deps;
    NEW.blocked := done < cardinality(deps);
    RETURN NEW;
END
$$;

DROP TRIGGER ledger_task_filed ON "${flyway:defaultSchema}".tasks;

-- a row without dependencies that is not marked blocked is already what the function would make
-- of it (blocked = false): no call
CREATE TRIGGER ledger_task_filed
    BEFORE INSERT ON "${flyway:defaultSchema}".tasks
    FOR EACH ROW
    WHEN (current_setting('ledger.replay', true) IS DISTINCT FROM 'on'
          AND (NEW.depends_on <> '[]' OR NEW.blocked))
    EXECUTE FUNCTION "${flyway:defaultSchema}".ledger_task_filed();

-- The claim classes of the inserted rows, distinct, in key order (two transactions inserting the
-- same new classes wait for each other in one order, never in a cycle). The transition table is
-- read into arrays first and the insert reads only the arrays (as V9's trigger does), so no
-- statement joins a transition table with a table of the schema.
CREATE FUNCTION "${flyway:defaultSchema}".ledger_tasks_filed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    ranks bigint[];
    reqs text[];
BEGIN
    SELECT array_agg(c.label_rank ORDER BY c.label_rank, md5(c.requirements)),
           array_agg(c.requirements ORDER BY c.label_rank, md5(c.requirements))
      INTO ranks, reqs
      FROM (SELECT DISTINCT n.label_rank, n.requirements FROM ledger_filed_rows n) c;
    IF ranks IS NULL THEN
        RETURN NULL;
    END IF;
    INSERT INTO "${flyway:defaultSchema}".claim_classes (label_rank, requirements_md5, requirements)
    SELECT x.label_rank, md5(x.requirements), x.requirements
      FROM unnest(ranks, reqs) WITH ORDINALITY AS x(label_rank, requirements, n)
     ORDER BY x.n
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER ledger_tasks_filed
    AFTER INSERT ON "${flyway:defaultSchema}".tasks
    REFERENCING NEW TABLE AS ledger_filed_rows
    FOR EACH STATEMENT
    WHEN (current_setting('ledger.replay', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION "${flyway:defaultSchema}".ledger_tasks_filed();

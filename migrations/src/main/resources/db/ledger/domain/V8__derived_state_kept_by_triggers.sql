-- Not in the reference: the derived state a claim reads (tasks.blocked and claim_classes here,
-- ledger_tasks.completed and ledger_dependencies in the directory) is kept right by the database
-- itself, whoever writes the rows: this ledger, the reference stack's own INSERT/UPDATE statements
-- (which know nothing of these columns), or an operator's SQL. Directory migration V5 installs the
-- directory half (a route whose `completed` changes recomputes its dependents' `blocked`).
--
-- A replay (`Ledger.rebuild`) recomputes everything itself in bulk: it sets the transaction-local
-- setting ledger.replay to 'on', and the triggers' WHEN clauses skip it.

-- The directory schema whose routing table routes a domain schema (given bare), or null when none
-- does (a template schema, or a schema whose route is not inserted yet). The directory schema is
-- configurable and the domain set does not know it, so it is found through the catalog once per
-- session and kept in the session setting ledger.directory_of_<schema> (reverted with the
-- transaction that set it, should that roll back).
CREATE FUNCTION "${flyway:defaultSchema}".ledger_directory_of(domain_schema text) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    cache text := 'ledger.directory_of_' || domain_schema;
    ns text;
    routed boolean;
BEGIN
    ns := current_setting(cache, true);
    IF ns IS NOT NULL AND ns <> '' THEN
        RETURN ns;
    END IF;
    FOR ns IN
        SELECT n.nspname FROM pg_catalog.pg_class c
          JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         WHERE c.relname = 'ledger_domains' AND c.relkind IN ('r', 'p')
         ORDER BY n.nspname
    LOOP
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.ledger_domains WHERE schema = $1)', ns)
            INTO routed USING '"' || domain_schema || '"';
        IF routed THEN
            EXECUTE format('SET %s TO %L', cache, ns);
            RETURN ns;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

-- A new task row: its claim class, its dependency edges, and its `blocked` flag (some dependency
-- not completed). The edges are written before the dependencies' routes are read FOR SHARE, and a
-- completion sets its route's flag before it reads the edges, so of a filing and a completion
-- racing, one sees the other's commit.
CREATE FUNCTION "${flyway:defaultSchema}".ledger_task_filed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    dir text;
    deps text[];
    done bigint;
BEGIN
    INSERT INTO "${flyway:defaultSchema}".claim_classes (label_rank, requirements_md5, requirements)
    VALUES (NEW.label_rank, md5(NEW.requirements), NEW.requirements) ON CONFLICT DO NOTHING;
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

-- A task whose status enters or leaves `completed` (or a row inserted completed): its route's
-- `completed` follows, and directory V5's trigger recomputes its dependents' flags.
CREATE FUNCTION "${flyway:defaultSchema}".ledger_task_status_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    dir text;
BEGIN
    dir := "${flyway:defaultSchema}".ledger_directory_of(TG_TABLE_SCHEMA);
    IF dir IS NOT NULL THEN
        EXECUTE format(
            'UPDATE %I.ledger_tasks SET completed = $2
              WHERE id = $1 AND completed IS DISTINCT FROM $2', dir)
            USING NEW.id, NEW.status = 'completed';
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER ledger_task_filed
    BEFORE INSERT ON "${flyway:defaultSchema}".tasks
    FOR EACH ROW
    WHEN (current_setting('ledger.replay', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION "${flyway:defaultSchema}".ledger_task_filed();

CREATE TRIGGER ledger_task_inserted_completed
    AFTER INSERT ON "${flyway:defaultSchema}".tasks
    FOR EACH ROW
    WHEN (NEW.status = 'completed'
          AND current_setting('ledger.replay', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION "${flyway:defaultSchema}".ledger_task_status_changed();

CREATE TRIGGER ledger_task_status_changed
    AFTER UPDATE OF status ON "${flyway:defaultSchema}".tasks
    FOR EACH ROW
    WHEN ((OLD.status = 'completed') IS DISTINCT FROM (NEW.status = 'completed')
          AND current_setting('ledger.replay', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION "${flyway:defaultSchema}".ledger_task_status_changed();

-- Times in the projection as the ledger writes them (RFC 3339, UTC, `Z`, 6 fractional digits),
-- so a replay of an adopted schema rewrites none of them; digits past the sixth are truncated.
UPDATE "${flyway:defaultSchema}".tasks
   SET created = to_char(regexp_replace(created, '(\.[0-9]{6})[0-9]+', '\1')::timestamptz
                         AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
 WHERE created !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$';
UPDATE "${flyway:defaultSchema}".tasks
   SET lease_until = to_char(regexp_replace(lease_until, '(\.[0-9]{6})[0-9]+', '\1')::timestamptz
                             AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
 WHERE lease_until !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$';
UPDATE "${flyway:defaultSchema}".promotions
   SET at = to_char(regexp_replace(at, '(\.[0-9]{6})[0-9]+', '\1')::timestamptz
                    AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
 WHERE at !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$';

-- Bring what was written before these triggers right: every claim class, this domain's routes'
-- `completed` and dependency edges, and every task's `blocked` (a schema upgraded to V6 started
-- with blocked = false everywhere).
INSERT INTO "${flyway:defaultSchema}".claim_classes (label_rank, requirements_md5, requirements)
SELECT DISTINCT label_rank, md5(requirements), requirements FROM "${flyway:defaultSchema}".tasks
ON CONFLICT DO NOTHING;

DO $$
DECLARE
    dir text := "${flyway:defaultSchema}".ledger_directory_of('${flyway:defaultSchema}');
BEGIN
    IF dir IS NULL THEN
        RETURN;
    END IF;
    EXECUTE format(
        'INSERT INTO %I.ledger_dependencies (depends_on, task_id)
         SELECT DISTINCT dep, t.id FROM %I.tasks t,
                jsonb_array_elements_text(t.depends_on::jsonb) AS dep
         ON CONFLICT DO NOTHING', dir, '${flyway:defaultSchema}');
    EXECUTE format(
        'UPDATE %I.ledger_tasks r SET completed = (t.status = ''completed'')
           FROM %I.tasks t
          WHERE t.id = r.id AND r.completed IS DISTINCT FROM (t.status = ''completed'')',
        dir, '${flyway:defaultSchema}');
    EXECUTE format(
        'UPDATE %I.tasks t SET blocked = x.open
           FROM (SELECT u.id, EXISTS (
                        SELECT 1 FROM %I.ledger_dependencies e
                          LEFT JOIN %I.ledger_tasks r ON r.id = e.depends_on
                         WHERE e.task_id = u.id AND r.completed IS NOT TRUE) AS open
                   FROM %I.tasks u) x
          WHERE t.id = x.id AND t.blocked IS DISTINCT FROM x.open',
        '${flyway:defaultSchema}', dir, dir, '${flyway:defaultSchema}');
END
$$;

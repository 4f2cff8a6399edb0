-- The schema the ledger's migrations make at their current version: canonical DDL read
-- back from PostgreSQL after applying them (ledger-app schema-diff's catalog reader).
-- Objects are sorted by name; names are unqualified, each set applies to its own schema.
--
-- Written by the build; do not edit. The build fails when it is stale; refresh it with
--   ./mvnw -B -ntp verify -Dledger.schema.update=true
-- and commit it together with the migration.

-- Directory set (db/ledger/directory), in the directory schema, at version 11

SET check_function_bodies = false;

CREATE OR REPLACE FUNCTION ledger_route_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
          FROM ledger_dependencies e
          JOIN ledger_tasks r ON r.id = e.task_id
          JOIN ledger_domains m ON m.domain = r.domain
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
                           SELECT 1 FROM ledger_dependencies e
                             LEFT JOIN ledger_tasks r
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
$function$;

SET check_function_bodies = false;

CREATE OR REPLACE FUNCTION ledger_routes_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
          FROM ledger_dependencies e
          JOIN ledger_tasks r ON r.id = e.task_id
          JOIN ledger_domains m ON m.domain = r.domain
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
                                SELECT 1 FROM ledger_dependencies e
                                  LEFT JOIN ledger_tasks r
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
$function$;

CREATE SEQUENCE ledger_feed_erasures_id_seq AS bigint START WITH 1 INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 CACHE 1 NO CYCLE;

CREATE TABLE ledger_dependencies (
    depends_on text NOT NULL,
    task_id text NOT NULL,
    CONSTRAINT ledger_dependencies_pkey PRIMARY KEY (depends_on, task_id)
);

CREATE TABLE ledger_domains (
    domain text NOT NULL,
    schema text NOT NULL,
    CONSTRAINT ledger_domains_pkey PRIMARY KEY (domain),
    CONSTRAINT ledger_domains_schema_key UNIQUE (schema)
);

CREATE TABLE ledger_feed_consumers (
    consumer text NOT NULL,
    domain text NOT NULL,
    xid_from xid8 DEFAULT '0'::xid8 NOT NULL,
    xid_to xid8 DEFAULT '0'::xid8 NOT NULL,
    seq_done bigint DEFAULT 0 NOT NULL,
    delivered bigint DEFAULT 0 NOT NULL,
    holder text,
    lease_until timestamp with time zone,
    epoch bigint DEFAULT 0 NOT NULL,
    updated timestamp with time zone DEFAULT now() NOT NULL,
    missed_seq bigint DEFAULT 0 NOT NULL,
    missed_later bigint DEFAULT 0 NOT NULL,
    CONSTRAINT ledger_feed_consumers_pkey PRIMARY KEY (consumer, domain)
);

CREATE TABLE ledger_feed_erasures (
    id bigint DEFAULT nextval('ledger_feed_erasures_id_seq'::regclass) NOT NULL,
    consumer text NOT NULL,
    domain text NOT NULL,
    task_id text NOT NULL,
    seqs bigint[] NOT NULL,
    erased_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT ledger_feed_erasures_pkey PRIMARY KEY (consumer, domain, id)
);

CREATE TABLE ledger_retention (
    domain text NOT NULL,
    retention_seconds bigint,
    removed_through_seq bigint DEFAULT 0 NOT NULL,
    tasks_removed bigint DEFAULT 0 NOT NULL,
    events_removed bigint DEFAULT 0 NOT NULL,
    last_purge_at text,
    updated_at text NOT NULL,
    CONSTRAINT ledger_retention_pkey PRIMARY KEY (domain),
    CONSTRAINT ledger_retention_retention_seconds_check CHECK (retention_seconds IS NULL OR retention_seconds > 0)
);

CREATE TABLE ledger_schedules (
    name text NOT NULL,
    domain text NOT NULL,
    cron text,
    zone text,
    interval_seconds bigint,
    title text NOT NULL,
    body text NOT NULL,
    requirements text[] NOT NULL,
    label text NOT NULL,
    priority bigint NOT NULL,
    max_attempts bigint NOT NULL,
    catch_up bigint NOT NULL,
    paused boolean DEFAULT false NOT NULL,
    last_tick timestamp with time zone,
    next_tick timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT ledger_schedules_catch_up_check CHECK (catch_up >= 1 AND catch_up <= 1000),
    CONSTRAINT ledger_schedules_check CHECK (cron IS NOT NULL AND zone IS NOT NULL AND interval_seconds IS NULL OR cron IS NULL AND zone IS NULL AND interval_seconds > 0),
    CONSTRAINT ledger_schedules_pkey PRIMARY KEY (name)
);

CREATE TABLE ledger_schema_state (
    schema_name text NOT NULL,
    kind text NOT NULL,
    version text NOT NULL,
    migrations_digest text NOT NULL,
    catalog_extras text[] DEFAULT '{}'::text[] NOT NULL,
    recorded_by text NOT NULL,
    recorded_at text NOT NULL,
    CONSTRAINT ledger_schema_state_kind_check CHECK (kind = ANY (ARRAY['directory'::text, 'domain'::text])),
    CONSTRAINT ledger_schema_state_pkey PRIMARY KEY (schema_name)
);

CREATE TABLE ledger_tasks (
    id text NOT NULL,
    domain text NOT NULL,
    completed boolean DEFAULT false NOT NULL,
    CONSTRAINT ledger_tasks_pkey PRIMARY KEY (id)
);

CREATE INDEX ledger_dependencies_task ON ledger_dependencies USING btree (task_id);

CREATE INDEX ledger_schedules_due ON ledger_schedules USING btree (domain, next_tick) WHERE NOT paused;

ALTER TABLE ledger_tasks ADD CONSTRAINT ledger_tasks_domain_fkey FOREIGN KEY (domain) REFERENCES ledger_domains(domain);

ALTER SEQUENCE ledger_feed_erasures_id_seq OWNED BY ledger_feed_erasures.id;

CREATE TRIGGER ledger_route_completed_deleted AFTER DELETE ON ledger_tasks FOR EACH ROW WHEN (old.completed AND current_setting('ledger.replay'::text, true) IS DISTINCT FROM 'on'::text) EXECUTE FUNCTION ledger_route_changed();

CREATE TRIGGER ledger_route_completed_inserted AFTER INSERT ON ledger_tasks FOR EACH ROW WHEN (new.completed AND current_setting('ledger.replay'::text, true) IS DISTINCT FROM 'on'::text) EXECUTE FUNCTION ledger_route_changed();

CREATE TRIGGER ledger_routes_completed_changed AFTER UPDATE ON ledger_tasks REFERENCING OLD TABLE AS ledger_old_routes NEW TABLE AS ledger_new_routes FOR EACH STATEMENT WHEN (current_setting('ledger.replay'::text, true) IS DISTINCT FROM 'on'::text) EXECUTE FUNCTION ledger_routes_changed();

-- Domain set (db/ledger/domain), in each domain schema, at version 14

SET check_function_bodies = false;

CREATE OR REPLACE FUNCTION feed_events_inserted()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF EXISTS (SELECT 1 FROM feed_new_events)
       AND EXISTS (SELECT 1 FROM feed_followed) THEN
        PERFORM pg_notify('ledger_feed', TG_TABLE_SCHEMA);
    END IF;
    RETURN NULL;
END
$function$;

SET check_function_bodies = false;

CREATE OR REPLACE FUNCTION ledger_directory_of(domain_schema text)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
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
$function$;

SET check_function_bodies = false;

CREATE OR REPLACE FUNCTION ledger_task_filed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
    dir := ledger_directory_of(TG_TABLE_SCHEMA);
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
$function$;

SET check_function_bodies = false;

CREATE OR REPLACE FUNCTION ledger_task_status_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    dir text;
BEGIN
    dir := ledger_directory_of(TG_TABLE_SCHEMA);
    IF dir IS NOT NULL THEN
        EXECUTE format(
            'UPDATE %I.ledger_tasks SET completed = $2
              WHERE id = $1 AND completed IS DISTINCT FROM $2', dir)
            USING NEW.id, NEW.status = 'completed';
    END IF;
    RETURN NULL;
END
$function$;

SET check_function_bodies = false;

CREATE OR REPLACE FUNCTION ledger_tasks_completion_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
    dir := ledger_directory_of(TG_TABLE_SCHEMA);
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
$function$;

SET check_function_bodies = false;

CREATE OR REPLACE FUNCTION ledger_tasks_filed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
    INSERT INTO claim_classes (label_rank, requirements_md5, requirements)
    SELECT x.label_rank, md5(x.requirements), x.requirements
      FROM unnest(ranks, reqs) WITH ORDINALITY AS x(label_rank, requirements, n)
     ORDER BY x.n
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$function$;

SET check_function_bodies = false;

CREATE OR REPLACE FUNCTION tasks_notify_workers()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM pg_notify(TG_TABLE_SCHEMA, NEW.status);
    RETURN NULL;
END
$function$;

CREATE SEQUENCE events_seq_seq AS bigint START WITH 1 INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 CACHE 1 NO CYCLE;

CREATE SEQUENCE promotions_seq_seq AS bigint START WITH 1 INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 CACHE 1 NO CYCLE;

CREATE TABLE claim_classes (
    label_rank bigint NOT NULL,
    requirements_md5 text NOT NULL,
    requirements text NOT NULL,
    CONSTRAINT claim_classes_pkey PRIMARY KEY (label_rank, requirements_md5)
);

CREATE TABLE events (
    seq bigint DEFAULT nextval('events_seq_seq'::regclass) NOT NULL,
    task_id text NOT NULL,
    kind text NOT NULL,
    at text NOT NULL,
    payload text NOT NULL,
    xid xid8 DEFAULT pg_current_xact_id() NOT NULL,
    CONSTRAINT events_pkey PRIMARY KEY (seq)
);

CREATE TABLE feed_followed (
    followed boolean DEFAULT true NOT NULL,
    CONSTRAINT feed_followed_followed_check CHECK (followed),
    CONSTRAINT feed_followed_pkey PRIMARY KEY (followed)
);

CREATE TABLE promotions (
    seq bigint DEFAULT nextval('promotions_seq_seq'::regclass) NOT NULL,
    domain text NOT NULL,
    entry text NOT NULL,
    tier text NOT NULL,
    promoter text NOT NULL,
    author text NOT NULL,
    why text NOT NULL,
    label_rank bigint NOT NULL,
    digest text NOT NULL,
    at text NOT NULL,
    new_digest text DEFAULT ''::text NOT NULL,
    why_erased bigint DEFAULT 0 NOT NULL,
    CONSTRAINT promotions_pkey PRIMARY KEY (seq)
);

CREATE TABLE queue_control_slots (
    slot smallint NOT NULL,
    rate_slot bigint DEFAULT 0 NOT NULL,
    rate_counts text DEFAULT ''::text NOT NULL,
    CONSTRAINT queue_control_slots_pkey PRIMARY KEY (slot),
    CONSTRAINT queue_control_slots_slot_check CHECK (slot >= 1 AND slot <= 8)
);

CREATE TABLE queue_controls (
    only_row boolean DEFAULT true NOT NULL,
    paused boolean DEFAULT false NOT NULL,
    max_claimed bigint,
    rate_claims bigint,
    rate_period_ms bigint,
    rate_slot bigint DEFAULT 0 NOT NULL,
    rate_counts text DEFAULT ''::text NOT NULL,
    active boolean GENERATED ALWAYS AS (paused OR max_claimed IS NOT NULL OR rate_claims IS NOT NULL) STORED,
    CONSTRAINT queue_controls_check CHECK ((rate_claims IS NULL) = (rate_period_ms IS NULL)),
    CONSTRAINT queue_controls_max_claimed_check CHECK (max_claimed > 0),
    CONSTRAINT queue_controls_only_row_check CHECK (only_row),
    CONSTRAINT queue_controls_pkey PRIMARY KEY (only_row),
    CONSTRAINT queue_controls_rate_claims_check CHECK (rate_claims > 0),
    CONSTRAINT queue_controls_rate_period_ms_check CHECK (rate_period_ms > 0)
);

CREATE TABLE tasks (
    id text NOT NULL,
    domain text NOT NULL,
    title text NOT NULL,
    body text NOT NULL,
    requirements text NOT NULL,
    depends_on text NOT NULL,
    origin text,
    upstream_event text,
    created_by text NOT NULL,
    label_rank bigint NOT NULL,
    priority bigint NOT NULL,
    created text NOT NULL,
    status text NOT NULL,
    holder text,
    lease_until text,
    attempts bigint DEFAULT 0 NOT NULL,
    handoff text,
    reason text,
    superseded_by text,
    posted_to text,
    blocked boolean DEFAULT false NOT NULL,
    not_before text,
    max_attempts bigint DEFAULT 0 NOT NULL,
    CONSTRAINT tasks_pkey PRIMARY KEY (id)
);

CREATE INDEX events_feed ON events USING btree (xid, seq);

CREATE INDEX events_task ON events USING btree (task_id, seq);

CREATE UNIQUE INDEX promotions_version ON promotions USING btree (entry, tier, digest, promoter);

CREATE INDEX tasks_by_origin ON tasks USING btree (origin) WHERE origin IS NOT NULL;

CREATE INDEX tasks_claim_class ON tasks USING btree (label_rank, md5(requirements), priority DESC, created) WHERE (status = ANY (ARRAY['admitted'::text, 'claimed'::text])) AND NOT blocked;

CREATE INDEX tasks_claimable ON tasks USING btree (priority DESC, created) WHERE status = ANY (ARRAY['admitted'::text, 'claimed'::text]);

CREATE INDEX tasks_due ON tasks USING btree (not_before) WHERE status = 'proposed'::text AND not_before IS NOT NULL;

CREATE UNIQUE INDEX tasks_origin ON tasks USING btree (origin, upstream_event) WHERE origin IS NOT NULL AND upstream_event IS NOT NULL;

CREATE INDEX tasks_queue ON tasks USING btree (status, priority DESC, created);

ALTER SEQUENCE events_seq_seq OWNED BY events.seq;

ALTER SEQUENCE promotions_seq_seq OWNED BY promotions.seq;

CREATE TRIGGER feed_events_inserted AFTER INSERT ON events REFERENCING NEW TABLE AS feed_new_events FOR EACH STATEMENT EXECUTE FUNCTION feed_events_inserted();

CREATE TRIGGER ledger_task_filed BEFORE INSERT ON tasks FOR EACH ROW WHEN (current_setting('ledger.replay'::text, true) IS DISTINCT FROM 'on'::text AND (new.depends_on <> '[]'::text OR new.blocked)) EXECUTE FUNCTION ledger_task_filed();

CREATE TRIGGER ledger_task_inserted_completed AFTER INSERT ON tasks FOR EACH ROW WHEN (new.status = 'completed'::text AND current_setting('ledger.replay'::text, true) IS DISTINCT FROM 'on'::text) EXECUTE FUNCTION ledger_task_status_changed();

CREATE TRIGGER ledger_tasks_completion_changed AFTER UPDATE ON tasks REFERENCING OLD TABLE AS ledger_old_rows NEW TABLE AS ledger_new_rows FOR EACH STATEMENT WHEN (current_setting('ledger.replay'::text, true) IS DISTINCT FROM 'on'::text) EXECUTE FUNCTION ledger_tasks_completion_changed();

CREATE TRIGGER ledger_tasks_filed AFTER INSERT ON tasks REFERENCING NEW TABLE AS ledger_filed_rows FOR EACH STATEMENT WHEN (current_setting('ledger.replay'::text, true) IS DISTINCT FROM 'on'::text) EXECUTE FUNCTION ledger_tasks_filed();

CREATE TRIGGER tasks_notify_workers AFTER INSERT OR UPDATE OF status ON tasks FOR EACH ROW WHEN (new.status = 'admitted'::text OR new.status = 'proposed'::text AND new.not_before IS NOT NULL) EXECUTE FUNCTION tasks_notify_workers();

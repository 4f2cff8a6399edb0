-- The schema the ledger's migrations make at their current version: canonical DDL read
-- back from PostgreSQL after applying them (ledger-app schema-diff's catalog reader).
-- Objects are sorted by name; names are unqualified, each set applies to its own schema.
--
-- Written by the build; do not edit. The build fails when it is stale; refresh it with
--   ./mvnw -B -ntp verify -Dledger.schema.update=true
-- and commit it together with the migration.

-- Directory set (db/ledger/directory), in the directory schema, at version 4

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

ALTER TABLE ledger_tasks ADD CONSTRAINT ledger_tasks_domain_fkey FOREIGN KEY (domain) REFERENCES ledger_domains(domain);

-- Domain set (db/ledger/domain), in each domain schema, at version 7

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
    CONSTRAINT events_pkey PRIMARY KEY (seq)
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

CREATE TRIGGER tasks_notify_workers AFTER INSERT OR UPDATE OF status ON tasks FOR EACH ROW WHEN (new.status = 'admitted'::text OR new.status = 'proposed'::text AND new.not_before IS NOT NULL) EXECUTE FUNCTION tasks_notify_workers();

-- One domain's event log and task projection: the reference's DOMAIN_TABLES, same names, same
-- columns, same indexes. Times are RFC 3339 UTC text with 6 fractional digits, so text order is
-- time order; requirements and depends_on are JSON arrays of text; payload is JSON text (format v1).
CREATE TABLE "${flyway:defaultSchema}".events (
    seq      BIGSERIAL PRIMARY KEY,
    task_id  TEXT NOT NULL,
    kind     TEXT NOT NULL,
    at       TEXT NOT NULL,
    payload  TEXT NOT NULL
);
CREATE INDEX events_task ON "${flyway:defaultSchema}".events (task_id, seq);

CREATE TABLE "${flyway:defaultSchema}".tasks (
    id             TEXT PRIMARY KEY,
    domain         TEXT NOT NULL,
    title          TEXT NOT NULL,
    body           TEXT NOT NULL,
    requirements   TEXT NOT NULL,
    depends_on     TEXT NOT NULL,
    origin         TEXT,
    upstream_event TEXT,
    created_by     TEXT NOT NULL,
    label_rank     BIGINT NOT NULL,
    priority       BIGINT NOT NULL,
    created        TEXT NOT NULL,
    status         TEXT NOT NULL,
    holder         TEXT,
    lease_until    TEXT,
    attempts       BIGINT NOT NULL DEFAULT 0,
    handoff        TEXT,
    reason         TEXT,
    superseded_by  TEXT,
    posted_to      TEXT
);
CREATE INDEX tasks_queue ON "${flyway:defaultSchema}".tasks (status, priority DESC, created);
CREATE UNIQUE INDEX tasks_origin ON "${flyway:defaultSchema}".tasks (origin, upstream_event)
    WHERE origin IS NOT NULL AND upstream_event IS NOT NULL;

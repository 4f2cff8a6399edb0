-- Not in the reference: schedules, the recurring tasks a ledger files by itself (issue 25,
-- dev.ledger.schedule). One row per schedule, keyed by its name: the domain it files into, its
-- timing (a cron expression and a time zone, or a fixed interval in seconds), the task it files at
-- each tick, and how far it got. A tick is filed as a task of origin `schedule:<name>` with the
-- tick's instant (RFC 3339, UTC) as its upstream event, so the domain's own idempotent filing makes
-- a tick filed twice come back as the first task. The reference stack never reads this table; its
-- tasks are ordinary tasks.
--
-- `next_tick` is the first tick not yet filed (null when the cron expression has no later match),
-- `last_tick` the latest tick filed. Whoever files a schedule's due ticks holds its row
-- (FOR UPDATE SKIP LOCKED) and advances both in the transaction that files them. The partial index
-- answers a worker pool's question "when is the next tick of my domain" in one indexed read.
-- Whole numbers are BIGINT, as everywhere in the ledger's schemas (the migration job's catalog
-- check compares column types with the generated jOOQ classes, which render INTEGER as `int`).
-- IF NOT EXISTS: a reference-stack directory is baselined at version 0 and every script runs again.
CREATE TABLE IF NOT EXISTS "${flyway:defaultSchema}".ledger_schedules (
    name             TEXT PRIMARY KEY,
    domain           TEXT NOT NULL,
    cron             TEXT,
    zone             TEXT,
    interval_seconds BIGINT,
    title            TEXT NOT NULL,
    body             TEXT NOT NULL,
    requirements     TEXT[] NOT NULL,
    label            TEXT NOT NULL,
    priority         BIGINT NOT NULL,
    max_attempts     BIGINT NOT NULL,
    catch_up         BIGINT NOT NULL CHECK (catch_up BETWEEN 1 AND 1000),
    paused           BOOLEAN NOT NULL DEFAULT FALSE,
    last_tick        TIMESTAMPTZ,
    next_tick        TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL,
    CHECK ((cron IS NOT NULL AND zone IS NOT NULL AND interval_seconds IS NULL)
        OR (cron IS NULL AND zone IS NULL AND interval_seconds > 0))
);
CREATE INDEX IF NOT EXISTS ledger_schedules_due
    ON "${flyway:defaultSchema}".ledger_schedules (domain, next_tick) WHERE NOT paused;

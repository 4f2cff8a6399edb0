-- Not in the reference (issue 25, retention). One row per domain that has a retention: how long its
-- completed and invalidated tasks are kept after their terminal event, and what purges removed so
-- far. `ledger-app retention run` (and a worker pool that is told to) removes the domain's terminal
-- tasks older than the retention, with their events, routes and dependency edges, in short batches.
--
-- removed_through_seq is the largest `events.seq` of the domain's log a purge has removed (0: none):
-- a reader of the log that resumes from a seq at or below it may have missed removed events, and is
-- behind the retention horizon. The reference stack never reads this table; its replay of a purged
-- domain folds the remaining events, which gives the same rows as ours.
--
-- No foreign key to ledger_domains: a retention may be set before the domain's first task, and a
-- replay rewrites routes, never domains. IF NOT EXISTS: a reference-stack directory is baselined at
-- version 0 and every script runs again.
CREATE TABLE IF NOT EXISTS "${flyway:defaultSchema}".ledger_retention (
    domain              TEXT PRIMARY KEY,
    retention_seconds   BIGINT CHECK (retention_seconds IS NULL OR retention_seconds > 0),
    removed_through_seq BIGINT NOT NULL DEFAULT 0,
    tasks_removed       BIGINT NOT NULL DEFAULT 0,
    events_removed      BIGINT NOT NULL DEFAULT 0,
    last_purge_at       TEXT,
    updated_at          TEXT NOT NULL
);

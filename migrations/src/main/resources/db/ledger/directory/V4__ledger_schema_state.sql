-- Not in the reference: what each schema of this ledger was last found to hold, so that a migrate
-- over schemas that are all current reads this table and the routing table in one statement
-- instead of every schema's catalog and Flyway history.
--
-- One row per schema (the directory schema itself included), written by the migration job after it
-- ran or verified the schema, and by a ledger that makes a new domain's schema at run time. It says
-- the schema was current with a migration set: that set's latest version and the SHA-256 of its
-- migrations (each version and Flyway checksum). A build whose migrations differ in any version or
-- checksum computes another digest, the row no longer matches, and the job checks the schema in full
-- (an edited migration is still found and refused there). The rows are trusted as Flyway trusts its
-- history table; `ledger-app migrate --verify` checks every schema whatever its row says.
-- IF NOT EXISTS: a reference-stack directory is baselined at version 0 and every script runs again.
CREATE TABLE IF NOT EXISTS "${flyway:defaultSchema}".ledger_schema_state (
    schema_name       TEXT PRIMARY KEY,
    kind              TEXT NOT NULL CHECK (kind IN ('directory', 'domain')),
    version           TEXT NOT NULL,
    migrations_digest TEXT NOT NULL,
    catalog_extras    TEXT[] NOT NULL DEFAULT '{}',
    recorded_by       TEXT NOT NULL,
    recorded_at       TEXT NOT NULL
);

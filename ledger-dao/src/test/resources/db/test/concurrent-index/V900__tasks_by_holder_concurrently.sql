-- A test-only extra migration: an index built CONCURRENTLY, which Flyway runs outside a transaction.
-- Version 900: far above the main domain set, so it applies after every main migration.
-- It must complete while the job holds its advisory lock and other schemas migrate in parallel.
CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_by_holder ON "${flyway:defaultSchema}".tasks (holder);

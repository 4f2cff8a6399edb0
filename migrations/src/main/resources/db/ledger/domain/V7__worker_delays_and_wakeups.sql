-- Not in the reference; for worker pools (docs/workers.md). Derived from the events, so a replay
-- rebuilds it; the reference stack ignores the columns and its writes still wake our workers.
--
-- not_before, max_attempts: from the created event's spec, whose fields not_before and max_attempts
-- are written only when a filer sets them (a task filed without them has a payload byte for byte
-- as the reference writes it). A delayed task stays proposed until a worker pool of its domain
-- admits it at its time, so the claim's walk never meets it. max_attempts 0: the pool's default.
ALTER TABLE "${flyway:defaultSchema}".tasks ADD COLUMN not_before TEXT;
ALTER TABLE "${flyway:defaultSchema}".tasks ADD COLUMN max_attempts BIGINT NOT NULL DEFAULT 0;

-- tasks_due: the due admission reads the delayed proposed tasks in time order.
CREATE INDEX tasks_due ON "${flyway:defaultSchema}".tasks (not_before)
    WHERE status = 'proposed' AND not_before IS NOT NULL;

-- Wake-ups: a row that becomes claimable (admitted, or released back to admitted) or is filed
-- delayed notifies the channel named as its schema, in the writing transaction, whoever writes.
-- The payload is the new status; PostgreSQL folds equal notifications of one transaction into one.
CREATE FUNCTION "${flyway:defaultSchema}".tasks_notify_workers() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(TG_TABLE_SCHEMA, NEW.status);
    RETURN NULL;
END
$$;
CREATE TRIGGER tasks_notify_workers
    AFTER INSERT OR UPDATE OF status ON "${flyway:defaultSchema}".tasks
    FOR EACH ROW
    WHEN (NEW.status = 'admitted' OR (NEW.status = 'proposed' AND NEW.not_before IS NOT NULL))
    EXECUTE FUNCTION "${flyway:defaultSchema}".tasks_notify_workers();

-- Not in the reference; for the event feed (docs/feed.md). `seq` is a BIGSERIAL taken when an event
-- is inserted, and transactions commit out of `seq` order, so a reader of "seq > last seen" skips an
-- event whose transaction commits after a later one was read. The feed reads by the id of the
-- writing transaction instead: every event with xid below the snapshot's xmin
-- (pg_snapshot_xmin(pg_current_snapshot())) was written by a finished transaction, and no event can
-- ever be added below it.
--
-- A default, so every writer fills it without naming it: our statements, the hot paths that insert
-- their events in their own statement (the claim, the batch completion), and the reference stack's
-- INSERTs. Rows older than this migration get xid 0 (a constant default first, so adding the column
-- rewrites nothing): they were committed before it and are read first, in seq order. The column
-- survives a replay, which reads the events and never rewrites them.
ALTER TABLE "${flyway:defaultSchema}".events ADD COLUMN xid xid8 NOT NULL DEFAULT '0'::xid8;
ALTER TABLE "${flyway:defaultSchema}".events ALTER COLUMN xid SET DEFAULT pg_current_xact_id();

-- The feed reads a range of transaction ids in seq order.
CREATE INDEX events_feed ON "${flyway:defaultSchema}".events (xid, seq);

-- Whether a feed consumer has ever followed this domain: only then do inserted events notify the
-- feed's channel. A NOTIFY serializes the commits of the transactions that send one, so a domain
-- nobody follows must not pay for it. The feed inserts the row when a consumer first takes the
-- domain's lease; deleting it turns the notifications off again (the feed then polls).
CREATE TABLE "${flyway:defaultSchema}".feed_followed (
    followed BOOLEAN PRIMARY KEY DEFAULT true CHECK (followed)
);

-- One notification per statement that inserted events into a followed domain, on the channel
-- `ledger_feed` with the schema as payload; PostgreSQL folds equal notifications of a transaction
-- into one and delivers them at commit, so a follower wakes when the events become readable.
CREATE FUNCTION "${flyway:defaultSchema}".feed_events_inserted() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM feed_new_events)
       AND EXISTS (SELECT 1 FROM "${flyway:defaultSchema}".feed_followed) THEN
        PERFORM pg_notify('ledger_feed', TG_TABLE_SCHEMA);
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER feed_events_inserted
    AFTER INSERT ON "${flyway:defaultSchema}".events
    REFERENCING NEW TABLE AS feed_new_events
    FOR EACH STATEMENT
    EXECUTE FUNCTION "${flyway:defaultSchema}".feed_events_inserted();

-- Not in the reference; for the event feed (docs/feed.md, "Erasure"). A scrub rewrites a task's
-- events in place, but a consumer may already hold a copy of them. So the scrub, in its own
-- transaction, records here one row per consumer of the domain and task scrubbed whose events the
-- consumer may have received (an event below the end of its checkpoint's window, xid_to: delivered,
-- or read by a batch in flight); the consumer's next poll delivers the row as an `erased` item, and
-- its checkpoint deletes it. Ids and sequence numbers only: no text of what was erased.
--
--   id         the order of delivery within a consumer and domain. The scrub holds the consumer's
--              row of ledger_feed_consumers locked (FOR UPDATE) while it inserts, so the scrubs of
--              one consumer insert one after another and a poll (which locks the same row) sees
--              either all of a scrub's rows or none; the checkpoint deletes the rows it delivered
--              by id, so none is skipped.
--   task_id    the scrubbed task
--   seqs       the seqs of its events the consumer may hold (ascending)
--   erased_at  when the scrub ran (the database's clock)
CREATE TABLE "${flyway:defaultSchema}".ledger_feed_erasures (
    id        BIGSERIAL NOT NULL,
    consumer  TEXT NOT NULL,
    domain    TEXT NOT NULL,
    task_id   TEXT NOT NULL,
    seqs      BIGINT[] NOT NULL,
    erased_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer, domain, id)
);

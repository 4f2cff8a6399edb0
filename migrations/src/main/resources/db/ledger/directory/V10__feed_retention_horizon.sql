-- Not in the reference; for the event feed (docs/feed.md, "Replay and retention"). A retention purge
-- removes whole old terminal tasks with their events, so the removed events are not a prefix of a
-- domain's log (`ledger_retention.removed_through_seq` is only the largest seq removed) and the
-- feed delivers by transaction-id window, not by seq. So the purge, in the transaction that removes
-- the events, compares them with each consumer's committed checkpoint and records here what a
-- consumer had not received yet:
--
--   missed_seq    the largest seq of a removed event in the checkpoint's current window
--                 ([xid_from, xid_to)) above seq_done (0: none). The batch in flight when the purge
--                 ran was read before it (the purge waits for the row's lock), so a checkpoint
--                 committed in the same window at or past missed_seq clears it.
--   missed_later  how many removed events were in later windows (xid >= xid_to): never read yet.
--
-- A reader of a consumer with either set is refused (FeedBehindRetentionException) until the
-- consumer accepts the loss. Events removed after a consumer received them change nothing.
ALTER TABLE "${flyway:defaultSchema}".ledger_feed_consumers
    ADD COLUMN missed_seq BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN missed_later BIGINT NOT NULL DEFAULT 0;

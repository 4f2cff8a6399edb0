-- Not in the reference; for the event feed (docs/feed.md). One row per consumer and domain: its
-- checkpoint and the lease of its one active reader.
--
-- The checkpoint is a window of transaction ids and a position in it: every event whose xid is
-- below xid_from has been delivered; of the events with xid_from <= xid < xid_to (all written by
-- transactions finished when xid_to was read as the snapshot's xmin) those with seq <= seq_done
-- have been delivered. A new consumer starts with the empty window [0, 0).
--
-- The lease: holder (a reader's name) until lease_until (the database's clock); epoch grows by one
-- each time a reader takes the lease, and every renewal and checkpoint of a reader names the epoch
-- it took, so the late checkpoint of a reader whose lease another reader took is refused.
CREATE TABLE "${flyway:defaultSchema}".ledger_feed_consumers (
    consumer    TEXT NOT NULL,
    domain      TEXT NOT NULL,
    xid_from    xid8 NOT NULL DEFAULT '0'::xid8,
    xid_to      xid8 NOT NULL DEFAULT '0'::xid8,
    seq_done    BIGINT NOT NULL DEFAULT 0,
    delivered   BIGINT NOT NULL DEFAULT 0,
    holder      TEXT,
    lease_until TIMESTAMPTZ,
    epoch       BIGINT NOT NULL DEFAULT 0,
    updated     TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer, domain)
);

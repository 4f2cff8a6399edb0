-- Not in the reference: the slots of the domain's controlled claims (docs/controls.md, "How it is
-- enforced"). A controlled claim far from its limits locks one of these rows (FOR UPDATE SKIP
-- LOCKED) instead of the queue_controls row, so such claims overlap: at most one claim in flight
-- per slot row. A claim near a limit, and a change of the controls, locks the queue_controls row
-- and then every slot row, in slot order. The rate window's counts are spread over the rows: the
-- window is the queue_controls row's counts plus every slot row's (each row's rate_slot and
-- rate_counts as in queue_controls: comma-separated counts per bucket, the last being bucket
-- rate_slot). The reference stack ignores the table, and a replay leaves it as it is: it is
-- configuration and bookkeeping, not derived from the events. Eight rows, made here once.
CREATE TABLE "${flyway:defaultSchema}".queue_control_slots (
    slot        SMALLINT PRIMARY KEY CHECK (slot BETWEEN 1 AND 8),
    rate_slot   BIGINT NOT NULL DEFAULT 0,
    rate_counts TEXT NOT NULL DEFAULT ''
);

INSERT INTO "${flyway:defaultSchema}".queue_control_slots (slot)
SELECT s FROM generate_series(1, 8) AS s;

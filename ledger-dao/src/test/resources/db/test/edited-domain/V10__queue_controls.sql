-- Not in the reference: the domain's queue controls (docs/controls.md). One row at most, written
-- by Ledger.pause / resume / limit; no row means no control. The reference stack ignores the
-- table (its claims are not held back), and a replay leaves it as it is: it is configuration,
-- not derived from the events.
--
-- paused: claims return nothing. max_claimed: at most this many tasks claimed (lease not expired)
-- at once. rate_claims per rate_period_ms: at most this many claims in any window of the period.
-- rate_slot and rate_counts: the claims of the last buckets of the period (a bucket is the period
-- divided in 20), as comma-separated counts, the last being bucket rate_slot (epoch milliseconds
-- divided by the bucket's length). active: whether a claim must take the row's lock (the claim statement's
-- one cheap check when nothing is set).
CREATE TABLE "${flyway:defaultSchema}".queue_controls (
    only_row       BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (only_row),
    paused         BOOLEAN NOT NULL DEFAULT FALSE,
    max_claimed    BIGINT CHECK (max_claimed > 0),
    rate_claims    BIGINT CHECK (rate_claims > 0),
    rate_period_ms BIGINT CHECK (rate_period_ms > 0),
    rate_slot      BIGINT NOT NULL DEFAULT 0,
    rate_counts    TEXT NOT NULL DEFAULT '',
    active         BOOLEAN GENERATED ALWAYS AS
                       (paused OR max_claimed IS NOT NULL OR rate_claims IS NOT NULL) STORED,
    CHECK ((rate_claims IS NULL) = (rate_period_ms IS NULL))
);

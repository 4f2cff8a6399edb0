-- Promotions in their first shape, as the reference stack first made them: no new_digest, no
-- why_erased, and the key promotions_version without the promoter. A schema adopted in this shape
-- is baselined at version 2; V3 and V4 bring it to the current shape.
CREATE TABLE "${flyway:defaultSchema}".promotions (
    seq        BIGSERIAL PRIMARY KEY,
    domain     TEXT NOT NULL,
    entry      TEXT NOT NULL,
    tier       TEXT NOT NULL,
    promoter   TEXT NOT NULL,
    author     TEXT NOT NULL,
    why        TEXT NOT NULL,
    label_rank BIGINT NOT NULL,
    digest     TEXT NOT NULL,
    at         TEXT NOT NULL
);
CREATE UNIQUE INDEX promotions_version ON "${flyway:defaultSchema}".promotions (entry, tier, digest);

-- The reference's PROMOTION_INDEX: a promotion is recorded once per (entry, tier, digest, promoter).
-- The first shape keyed it without the promoter; the key is made again with it.
DROP INDEX IF EXISTS "${flyway:defaultSchema}".promotions_version;
CREATE UNIQUE INDEX promotions_version ON "${flyway:defaultSchema}".promotions (entry, tier, digest, promoter);

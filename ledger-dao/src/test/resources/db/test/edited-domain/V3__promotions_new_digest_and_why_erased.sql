-- The reference's PROMOTION_TABLE columns a first-shape table lacks. IF NOT EXISTS: an adopted
-- schema may have one of them already.
ALTER TABLE "${flyway:defaultSchema}".promotions ADD COLUMN IF NOT EXISTS new_digest TEXT NOT NULL DEFAULT '';
ALTER TABLE "${flyway:defaultSchema}".promotions ADD COLUMN IF NOT EXISTS why_erased BIGINT NOT NULL DEFAULT 0;
-- An edit made after V3 was applied elsewhere: the checksum test applies this copy, then runs the
-- job with the real script, which must refuse the schema and name both checksums.

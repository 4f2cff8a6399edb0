-- The reference's PROMOTION_TABLE columns a first-shape table lacks. IF NOT EXISTS: an adopted
-- schema may have one of them already.
ALTER TABLE "${flyway:defaultSchema}".promotions ADD COLUMN IF NOT EXISTS new_digest TEXT NOT NULL DEFAULT '';
ALTER TABLE "${flyway:defaultSchema}".promotions ADD COLUMN IF NOT EXISTS why_erased BIGINT NOT NULL DEFAULT 0;

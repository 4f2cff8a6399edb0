-- The service's own first migration, in public next to the ledger's directory.
CREATE TABLE orders (
  id    text PRIMARY KEY,
  total bigint NOT NULL
);

CREATE TABLE orders (
  id    text PRIMARY KEY,
  total bigint NOT NULL
);

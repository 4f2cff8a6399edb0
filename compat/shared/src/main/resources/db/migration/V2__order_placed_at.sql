ALTER TABLE orders ADD COLUMN placed_at timestamptz NOT NULL DEFAULT now();

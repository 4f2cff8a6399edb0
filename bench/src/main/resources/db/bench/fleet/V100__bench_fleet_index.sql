-- B8 only: the "one new migration" every tenant of the benchmark fleet gets, handed to the fleet
-- reconciler as an extra domain location. Not part of the ledger's migrations.
CREATE INDEX bench_events_kind ON "${flyway:defaultSchema}".events (kind);

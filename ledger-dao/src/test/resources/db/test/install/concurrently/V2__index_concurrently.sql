CREATE INDEX CONCURRENTLY t_v ON "${flyway:defaultSchema}".t (v);

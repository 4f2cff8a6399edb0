-- A deployment's own index, from an extra location: plain, transactional DDL.
CREATE INDEX tasks_by_holder ON "${flyway:defaultSchema}".tasks (holder);

INSERT INTO "${flyway:defaultSchema}".t (id) VALUES (1);
INSERT INTO "${flyway:defaultSchema}".t (id) VALUES (1);

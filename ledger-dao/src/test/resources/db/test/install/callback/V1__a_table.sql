CREATE TABLE "${flyway:defaultSchema}".t (id bigint PRIMARY KEY);

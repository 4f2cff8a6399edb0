CREATE TABLE "${flyway:defaultSchema}".t (id bigint PRIMARY KEY, owner text DEFAULT '${owner}');

-- A repeatable migration from an extra location: Flyway runs it again whenever its checksum changes.
CREATE OR REPLACE VIEW "${flyway:defaultSchema}".open_tasks AS
  SELECT id FROM "${flyway:defaultSchema}".tasks WHERE status <> 'completed';

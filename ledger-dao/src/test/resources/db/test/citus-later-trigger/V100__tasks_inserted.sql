-- A later domain migration that adds a trigger (CitusLaterTriggerTest, docs/scale-out.md): a table
-- of the schema and a row trigger on tasks that records every inserted task's id in it.
CREATE TABLE "${flyway:defaultSchema}".tasks_inserted (id TEXT PRIMARY KEY);

CREATE FUNCTION "${flyway:defaultSchema}".tasks_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO "${flyway:defaultSchema}".tasks_inserted (id) VALUES (NEW.id);
    RETURN NULL;
END
$$;

CREATE TRIGGER tasks_inserted
    AFTER INSERT ON "${flyway:defaultSchema}".tasks
    FOR EACH ROW
    EXECUTE FUNCTION "${flyway:defaultSchema}".tasks_inserted();

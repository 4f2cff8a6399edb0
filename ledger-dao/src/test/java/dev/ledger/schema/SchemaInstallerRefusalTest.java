package dev.ledger.schema;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What {@link SchemaInstaller} refuses to put in one transaction with the other scripts (Flyway
 * runs the set instead), and what it keeps; each case is one script's text.
 */
class SchemaInstallerRefusalTest {

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "CREATE INDEX CONCURRENTLY i ON t (x);|holds 'CONCURRENTLY'",
        "VACUUM t;|holds 'VACUUM'",
        "REINDEX SCHEMA s;|holds 'REINDEX SCHEMA'",
        "CREATE TABLESPACE ts LOCATION '/x';|holds 'CREATE TABLESPACE'",
        "DROP SUBSCRIPTION sub;|holds 'DROP SUBSCRIPTION'",
        "DISCARD ALL;|holds 'DISCARD ALL'",
        "ALTER TYPE mood ADD VALUE 'sad';|holds 'ADD VALUE'",
        "COPY t FROM STDIN;|holds 'FROM STDIN'",
        "-- flyway:executeInTransaction=false\\nCREATE TABLE t (x int);"
            + "|holds 'executeInTransaction'",
        "SELECT set_config('search_path', 'public', false);|holds 'set_config'",
        "CREATE TABLE t7 (x int); COMMIT;|holds a 'COMMIT' statement",
        "CREATE TABLE t (x int);\\n  rollback;|holds a 'ROLLBACK' statement",
        "BEGIN; CREATE TABLE t (x int);|holds a 'BEGIN' statement",
        "SET search_path TO public; CREATE TABLE t8 (x int);|holds a 'SET' statement",
        "CREATE TABLE a (x int);\\n-- a comment\\nSET ROLE other;|holds a 'SET' statement",
        "RESET search_path;|holds a 'RESET' statement",
        "START TRANSACTION;|holds a 'START TRANSACTION' statement",
        "CREATE TABLE t (o text DEFAULT '${owner}');|uses the placeholder ${owner}",
        "CREATE TABLE t (o text DEFAULT '${flyway:timestamp}');"
            + "|uses the placeholder ${flyway:timestamp}",
      })
  void a_script_that_cannot_share_the_transaction_is_refused_with_the_reason(
      String script, String reason) {
    assertThat(SchemaInstaller.refusal(script.replace("\\n", "\n"))).startsWith(reason);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "CREATE TABLE \"${flyway:defaultSchema}\".t (x int);",
        "UPDATE t\\nSET x = 1;",
        "ALTER TABLE t ALTER COLUMN x\\n  SET NOT NULL;",
        "ALTER TABLE t ALTER COLUMN x SET DEFAULT 0;",
        "SET LOCAL lock_timeout = '5s'; ALTER TABLE t ADD COLUMN y int;",
        "CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$\\nBEGIN\\n  RETURN 1;\\nEND;\\n$$;",
        "DO $body$ BEGIN PERFORM 1; END $body$;",
        "-- no COMMIT here, only in a comment\\nCREATE TABLE t (x int);",
        "COMMENT ON TABLE t IS '${flyway:filename} in ${flyway:table}';",
      })
  void a_script_that_can_share_the_transaction_is_kept(String script) {
    assertThat(SchemaInstaller.refusal(script.replace("\\n", "\n"))).isNull();
  }
}

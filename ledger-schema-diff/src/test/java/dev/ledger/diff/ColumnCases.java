package dev.ledger.diff;

import static dev.ledger.diff.AcceptanceCases.T;
import static dev.ledger.diff.AcceptanceCases.exact;
import static dev.ledger.diff.AcceptanceCases.refused;

import java.util.List;

/**
 * Acceptance cases of {@link SchemaDiffAcceptanceTest} ({@link AcceptanceCases}): every column
 * change kind for each of 24 column types, and type changes.
 */
final class ColumnCases {

  private ColumnCases() {}

  /** Adds the cases, in a stable order. */
  static void addAll() {
    columnsByType();
    typeChanges();
  }

  /** A type and a literal of it. */
  private record Typed(String type, String literal) {}

  private static final List<Typed> TYPES =
      List.of(
          new Typed("smallint", "1"),
          new Typed("integer", "1"),
          new Typed("bigint", "1"),
          new Typed("numeric(10,2)", "1.5"),
          new Typed("numeric", "1.5"),
          new Typed("real", "1.5"),
          new Typed("double precision", "1.5"),
          new Typed("text", "'x'"),
          new Typed("varchar(20)", "'x'"),
          new Typed("char(5)", "'x'"),
          new Typed("boolean", "true"),
          new Typed("date", "'2025-01-01'"),
          new Typed("timestamp", "'2025-01-01 00:00'"),
          new Typed("timestamptz", "now()"),
          new Typed("time", "'12:00'"),
          new Typed("interval", "'1 day'"),
          new Typed("uuid", "gen_random_uuid()"),
          new Typed("jsonb", "'{}'"),
          new Typed("json", "'[]'"),
          new Typed("bytea", "'\\x00'"),
          new Typed("inet", "'127.0.0.1'"),
          new Typed("integer[]", "'{}'"),
          new Typed("text[]", "ARRAY['a']"),
          new Typed("tsrange", "'empty'"));

  /** Every column change kind, for each type. */
  private static void columnsByType() {
    for (Typed t : TYPES) {
      String n = t.type();
      String with = T + "CREATE TABLE c (id int, v " + n + ");";
      String withDefault = T + "CREATE TABLE c (id int, v " + n + " DEFAULT " + t.literal() + ");";
      String notNull = T + "CREATE TABLE c (id int, v " + n + " NOT NULL);";
      String without = T + "CREATE TABLE c (id int);";
      exact(n + ": column added", without, with, "safe");
      // gen_random_uuid() is volatile: every row is filled, the table rewritten.
      String withDefaultClass = t.literal().equals("gen_random_uuid()") ? "locking" : "safe";
      exact(n + ": column added with a default", without, withDefault, withDefaultClass);
      exact(n + ": column added NOT NULL without a default", without, notNull, "destructive");
      exact(n + ": column dropped", with, without, "destructive");
      exact(n + ": SET NOT NULL", with, notNull, "destructive");
      exact(n + ": DROP NOT NULL", notNull, with, "safe");
      exact(n + ": default set", with, withDefault, "safe");
      exact(n + ": default dropped", withDefault, with, "safe");
      exact(n + ": column comment", with, with + "\nCOMMENT ON COLUMN c.v IS 'the v';", "safe");
      exact(n + ": table with the column created", T, with, "safe");
    }
  }

  private static void typeChanges() {
    String[][] changes = {
      {"integer", "bigint", "locking"},
      {"smallint", "integer", "locking"},
      {"bigint", "integer", "destructive"},
      {"integer", "smallint", "destructive"},
      {"varchar(20)", "varchar(50)", "safe"},
      {"varchar(50)", "varchar(20)", "destructive"},
      {"varchar(20)", "text", "safe"},
      {"text", "varchar(20)", "destructive"},
      {"text", "varchar", "safe"},
      {"numeric(10,2)", "numeric(12,2)", "safe"},
      {"numeric(10,2)", "numeric(10,4)", "destructive"},
      {"numeric(10,2)", "numeric", "safe"},
      {"integer", "numeric", "locking"},
      {"real", "double precision", "locking"},
      {"double precision", "real", "destructive"},
      {"timestamp", "timestamptz", "locking"},
      {"timestamptz", "timestamp", "locking"},
      {"timestamp(3)", "timestamp(6)", "safe"},
      {"timestamp(6)", "timestamp(3)", "destructive"},
      {"integer", "text", "locking"},
      {"text", "integer", "destructive"},
      {"char(5)", "char(10)", "locking"},
      {"date", "timestamp", "destructive"},
      {"json", "jsonb", "destructive"},
      {"integer[]", "bigint[]", "locking"},
      {"text", "uuid", "destructive"},
    };
    for (String[] c : changes) {
      exact(
          "type " + c[0] + " to " + c[1],
          "CREATE TABLE c (id int, v " + c[0] + ");",
          "CREATE TABLE c (id int, v " + c[1] + ");",
          c[2]);
    }
    exact(
        "type changed with a default",
        "CREATE TABLE c (v integer DEFAULT 0);",
        "CREATE TABLE c (v bigint DEFAULT 0);",
        "locking");
    exact(
        "collation changed",
        "CREATE TABLE c (v text);",
        "CREATE TABLE c (v text COLLATE \"C\");",
        "locking");
    refused(
        "type bigint to timestamp has no cast",
        "CREATE TABLE c (v bigint);",
        "CREATE TABLE c (v timestamp);",
        "destructive",
        "column `v` on `c` (no cast from bigint to timestamp without time zone");
    refused(
        "type integer to boolean[] has no cast",
        "CREATE TABLE c (v integer);",
        "CREATE TABLE c (v boolean[]);",
        "destructive",
        "column `v` on `c` (no cast");
  }
}

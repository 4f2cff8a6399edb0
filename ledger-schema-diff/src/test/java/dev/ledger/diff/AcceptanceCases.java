package dev.ledger.diff;

import java.util.ArrayList;
import java.util.List;

/**
 * The cases of {@link SchemaDiffAcceptanceTest}: old DDL, new DDL, and the classes the changes must
 * have ({@code destructive}, {@code locking}, {@code safe}, joined with {@code +} in that sorted
 * order; empty for no change), plus, for a case the tool must refuse, the object its refusal names.
 * Grouped by object kind; within a kind, one case per change kind.
 */
final class AcceptanceCases {

  private AcceptanceCases() {}

  /**
   * One case.
   *
   * @param name unique
   * @param oldDdl the base schema
   * @param newDdl the head schema
   * @param classes the expected classes, e.g. {@code destructive+safe}
   * @param refused for a refused case, text the refusal must contain; else null
   */
  record Case(String name, String oldDdl, String newDdl, String classes, String refused) {}

  private static final List<Case> CASES = new ArrayList<>();

  /**
   * Adds a case the tool must migrate exactly.
   *
   * @param name unique
   * @param oldDdl the base schema
   * @param newDdl the head schema
   * @param classes the expected classes
   */
  static void exact(String name, String oldDdl, String newDdl, String classes) {
    CASES.add(new Case(name, oldDdl, newDdl, classes, null));
  }

  /**
   * Adds a case the tool must refuse by name.
   *
   * @param name unique
   * @param oldDdl the base schema
   * @param newDdl the head schema
   * @param classes the expected classes
   * @param refused text the refusal must contain
   */
  static void refused(String name, String oldDdl, String newDdl, String classes, String refused) {
    CASES.add(new Case(name, oldDdl, newDdl, classes, refused));
  }

  /**
   * Every case, in a stable order (the order of the sections, each file's in turn).
   *
   * @return each case once
   */
  static synchronized List<Case> all() {
    if (CASES.isEmpty()) {
      ColumnCases.addAll();
      TableCases.addAll();
      TypeAndFunctionCases.addAll();
      DependentObjectCases.addAll();
      PartitionCases.addAll();
      refusals();
      CASES.addAll(SwapDependentCases.all());
    }
    return List.copyOf(CASES);
  }

  static final String T = "CREATE TABLE t (id bigint PRIMARY KEY, a integer, b text);\n";

  static final String TOUCH =
      """
      CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN NEW.a := 1; RETURN NEW; END $$;
      """;

  private static void refusals() {
    refused(
        "aggregate added",
        T,
        T + "CREATE AGGREGATE total(int) (sfunc = int4pl, stype = int, initcond = '0');",
        "destructive",
        "aggregate total(integer)");
    refused(
        "operator added",
        T,
        T
            + """
        CREATE FUNCTION near(int, int) RETURNS boolean LANGUAGE sql AS 'SELECT abs($1 - $2) < 2';
        CREATE OPERATOR ~~~ (LEFTARG = int, RIGHTARG = int, FUNCTION = near);
        """,
        "destructive+safe",
        "operator");
    refused(
        "range type added",
        T,
        T + "CREATE TYPE floatrange AS RANGE (subtype = float8);",
        "destructive",
        "range type");
    refused(
        "text search configuration added",
        T,
        T + "CREATE TEXT SEARCH CONFIGURATION simple2 (COPY = simple);",
        "destructive",
        "text search configuration");
  }
}

package dev.ledger.diff;

import dev.ledger.diff.SchemaCatalog.Column;
import dev.ledger.diff.SchemaCatalog.Table;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The author's conversions of columns whose type changes ({@code --using TABLE.COLUMN=EXPR}): a
 * type change with no cast between the types is refused, since only the author knows how old values
 * map to new ones; with {@code --using} the column is converted with {@code ALTER COLUMN ... TYPE
 * ... USING EXPR}, and the SQL is checked like any other. Stateless; thread-safe.
 */
public final class Using {

  /** The option's name, as messages give it. */
  public static final String OPTION = "--using";

  private Using() {}

  /**
   * Parses the option's values.
   *
   * @param args each {@code TABLE.COLUMN=EXPR}, the table as the report names it ({@code orders},
   *     {@code audit.log}), the column unquoted; the expression is SQL over the column's old value
   *     (e.g. {@code to_timestamp(created)}), split at the first {@code =}
   * @return {@code table.column} to the expression, in the order given; empty for no values
   * @throws SchemaDiffException naming {@value #OPTION} for a value without {@code =} or {@code .}
   *     in its key, an empty expression, or a column given twice
   */
  public static Map<String, String> parse(List<String> args) {
    Map<String, String> using = new LinkedHashMap<>();
    for (String arg : args) {
      int eq = arg.indexOf('=');
      int dot = eq < 0 ? -1 : arg.lastIndexOf('.', eq);
      if (eq < 0 || dot <= 0 || dot == eq - 1) {
        throw new SchemaDiffException(OPTION + ": expected TABLE.COLUMN=EXPR, got '" + arg + "'");
      }
      String key = arg.substring(0, eq).strip();
      String expression = arg.substring(eq + 1).strip();
      if (expression.isEmpty()) {
        throw new SchemaDiffException(OPTION + ": " + key + ": the expression is empty");
      }
      if (using.putIfAbsent(key, expression) != null) {
        throw new SchemaDiffException(OPTION + ": " + key + " given twice; give each column once");
      }
    }
    return using;
  }

  /**
   * Checks that each named column is in the change set: a column both catalogs hold, whose type (or
   * collation) changes.
   *
   * @param using {@code table.column} to the expression
   * @param base the base's catalog
   * @param head the head's catalog
   * @throws SchemaDiffException naming {@value #OPTION} and the column when the table or column is
   *     missing from either side, or its type does not change
   */
  static void validate(Map<String, String> using, SchemaCatalog base, SchemaCatalog head) {
    for (String key : using.keySet()) {
      int dot = key.lastIndexOf('.');
      String table = key.substring(0, dot);
      String column = key.substring(dot + 1);
      Table b = base.tables().get(table);
      Table h = head.tables().get(table);
      if (b == null || h == null) {
        throw new SchemaDiffException(
            OPTION
                + ": "
                + key
                + ": no table '"
                + table
                + "' in "
                + (b == null && h == null
                    ? "the base or the head"
                    : b == null ? "the base" : "the head")
                + " (tables are named as the report names them: 'orders', 'audit.log')");
      }
      Column bc = b.column(column).orElse(null);
      Column hc = h.column(column).orElse(null);
      if (bc == null || hc == null) {
        throw new SchemaDiffException(
            OPTION
                + ": "
                + key
                + ": table '"
                + table
                + "' has no column '"
                + column
                + "' in "
                + (bc == null && hc == null
                    ? "the base or the head"
                    : bc == null ? "the base" : "the head"));
      }
      if (bc.type().equals(hc.type()) && Objects.equals(bc.collation(), hc.collation())) {
        throw new SchemaDiffException(
            OPTION
                + ": "
                + key
                + ": its type does not change ("
                + hc.type()
                + " in both): "
                + OPTION
                + " is for a column whose type changes");
      }
    }
  }
}

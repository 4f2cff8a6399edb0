package dev.ledger.diff;

/** Small SQL text helpers. */
final class Sql {

  private Sql() {}

  /**
   * Quotes an identifier the way PostgreSQL reads it: in double quotes, inner quotes doubled.
   *
   * @param identifier the bare identifier, not null
   * @return e.g. {@code "ledger_diff_base_1a2b3c4d"}
   * @throws IllegalArgumentException when the identifier is empty or contains U+0000
   */
  static String quoteIdentifier(String identifier) {
    if (identifier.isEmpty() || identifier.indexOf('\0') >= 0) {
      throw new IllegalArgumentException("identifier: must be non-empty and free of U+0000");
    }
    return '"' + identifier.replace("\"", "\"\"") + '"';
  }

  /**
   * Quotes a string literal the way PostgreSQL reads it with {@code standard_conforming_strings}
   * on: in single quotes, inner quotes doubled.
   *
   * @param value the value, not null
   * @return e.g. {@code 'it''s'}
   */
  static String literal(String value) {
    return "'" + value.replace("'", "''") + "'";
  }

  /**
   * Whether PostgreSQL runs a statement only outside a transaction block, or only makes its effect
   * usable after the transaction commits: {@code CONCURRENTLY} index builds and drops, and {@code
   * ALTER TYPE ... ADD VALUE} (a new enum value cannot be used before it commits).
   *
   * @param statement one statement, not null
   * @return true when the statement must run on its own
   */
  static boolean outsideTransaction(String statement) {
    return statement.contains(" CONCURRENTLY ")
        || (statement.startsWith("ALTER TYPE ") && statement.contains(" ADD VALUE "));
  }
}

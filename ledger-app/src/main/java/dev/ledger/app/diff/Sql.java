package dev.ledger.app.diff;

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
}

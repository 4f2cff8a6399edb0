package dev.ledger;

/**
 * A schema is behind or ahead of this code, or a domain has no schema while runtime DDL is
 * forbidden. The message says which command to run: {@code ledger-app migrate} for a schema behind,
 * a newer {@code ledger-dao} for one ahead.
 */
public final class SchemaVersionException extends LedgerException {

  private static final long serialVersionUID = 1L;

  private final String schema;
  private final String found;
  private final String expected;

  /**
   * Creates the error.
   *
   * @param schema the schema, unquoted
   * @param found the version found, or null when there is none (not provisioned, no history)
   * @param expected the version this code needs
   * @param message the full message, with the remedy
   */
  public SchemaVersionException(String schema, String found, String expected, String message) {
    super(message);
    this.schema = schema;
    this.found = found;
    this.expected = expected;
  }

  /**
   * The schema.
   *
   * @return its name, unquoted
   */
  public String schema() {
    return schema;
  }

  /**
   * The version found.
   *
   * @return the version, or null when the schema has none
   */
  public String found() {
    return found;
  }

  /**
   * The version this code needs.
   *
   * @return e.g. {@code 5}
   */
  public String expected() {
    return expected;
  }
}

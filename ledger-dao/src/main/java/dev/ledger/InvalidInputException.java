package dev.ledger;

/**
 * An argument is invalid; nothing was written. Names the field and the rule, never the value of a
 * free-text field (titles and bodies are private).
 */
public final class InvalidInputException extends LedgerException {

  private static final long serialVersionUID = 1L;

  private final String field;

  /**
   * Creates the error.
   *
   * @param field the field, as named in the event format, e.g. {@code title}
   * @param rule what is wrong and what is allowed, e.g. {@code must not be empty}
   */
  public InvalidInputException(String field, String rule) {
    super(field + ": " + rule);
    this.field = field;
  }

  /**
   * The invalid field.
   *
   * @return e.g. {@code title}
   */
  public String field() {
    return field;
  }
}

package dev.ledger.schedule;

import dev.ledger.LedgerException;

/** No schedule has the name; nothing was written. */
public final class ScheduleNotFoundException extends LedgerException {

  private static final long serialVersionUID = 1L;

  private final String name;

  /**
   * Creates the error.
   *
   * @param name the name looked for
   */
  public ScheduleNotFoundException(String name) {
    super("no schedule named '" + name + "' (see 'ledger-app schedule list')");
    this.name = name;
  }

  /**
   * The name looked for.
   *
   * @return the name
   */
  public String name() {
    return name;
  }
}

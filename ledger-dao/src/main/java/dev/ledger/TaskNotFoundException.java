package dev.ledger;

/** No task (or no domain) has the given id. Ports the reference's {@code Error::NotFound}. */
public final class TaskNotFoundException extends LedgerException {

  private static final long serialVersionUID = 1L;

  private final String id;

  /**
   * Creates the error.
   *
   * @param id the id looked for, not null
   */
  public TaskNotFoundException(String id) {
    super("no task with id '" + id + "'");
    this.id = id;
  }

  /**
   * The id looked for.
   *
   * @return the id
   */
  public String id() {
    return id;
  }
}

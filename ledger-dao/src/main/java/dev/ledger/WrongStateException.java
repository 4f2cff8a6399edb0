package dev.ledger;

/**
 * The operation is not allowed in the task's current status (e.g. admitting a completed task,
 * claiming one whose dependencies are open). Ports the reference's {@code Error::WrongState}.
 */
public final class WrongStateException extends LedgerException {

  private static final long serialVersionUID = 1L;

  private final String id;
  private final Status status;
  private final String operation;

  /**
   * Creates the error.
   *
   * @param id the task id
   * @param status its status when refused
   * @param operation the operation refused, e.g. {@code admit}
   * @param why why, e.g. {@code only a proposed task can be admitted}
   */
  public WrongStateException(String id, Status status, String operation, String why) {
    super("cannot " + operation + " task '" + id + "' in status " + status.wire() + ": " + why);
    this.id = id;
    this.status = status;
    this.operation = operation;
  }

  /**
   * The task id.
   *
   * @return the id
   */
  public String id() {
    return id;
  }

  /**
   * The task's status when the operation was refused.
   *
   * @return the status
   */
  public Status status() {
    return status;
  }

  /**
   * The operation refused.
   *
   * @return e.g. {@code complete}
   */
  public String operation() {
    return operation;
  }
}

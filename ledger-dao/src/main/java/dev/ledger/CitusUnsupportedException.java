package dev.ledger;

/**
 * An operation that cannot give right results on a Citus cluster was refused: the ledger's database
 * has the {@code citus} extension (Citus mode, docs/scale-out.md) and the operation relies on what
 * only one server has. Today that is the event feed ({@link Ledger#feed}): it orders and fences
 * events by transaction id, and every node of a cluster has its own transaction ids, so its order
 * and watermark would mean nothing across nodes. Nothing was read or written.
 *
 * <p>Thrown at once, before any statement; not retryable on the same database.
 */
public final class CitusUnsupportedException extends LedgerException {

  private static final long serialVersionUID = 1L;

  private final String operation;

  /**
   * Creates the error.
   *
   * @param operation the refused operation, e.g. {@code feed}
   * @param why why it cannot work on a cluster, a sentence without a trailing period
   */
  public CitusUnsupportedException(String operation, String why) {
    super(operation + " is not supported on a Citus cluster (docs/scale-out.md): " + why);
    this.operation = operation;
  }

  /**
   * The refused operation.
   *
   * @return e.g. {@code feed}
   */
  public String operation() {
    return operation;
  }
}

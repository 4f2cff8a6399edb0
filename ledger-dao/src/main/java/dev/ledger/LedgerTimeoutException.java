package dev.ledger;

import java.time.Duration;

/**
 * A bound of {@link Timeouts} ran out: the call waited as long as it was allowed to and gave up.
 * The ledger's own transaction was rolled back and its connection given back; {@link #bound()} says
 * which wait it was, {@link #limit()} how long it was allowed.
 *
 * <p>What to do depends on the bound: {@link Bound#LOCK} ("task busy": another transaction holds a
 * row or lock the call needs) and {@link Bound#STATEMENT} are worth a retry later; {@link
 * Bound#NETWORK} and {@link Bound#CONNECT} ("database unreachable") mean the server did not answer,
 * and when the network bound ran out during the ledger's commit, {@link #outcomeUnknown()} is true
 * as for any connection lost in a commit. Immutable.
 */
public final class LedgerTimeoutException extends LedgerStorageException {

  private static final long serialVersionUID = 1L;

  /** Which wait ran out. */
  public enum Bound {
    /** Waiting for a lock another transaction holds ({@link Timeouts#lock()}, SQLState 55P03). */
    LOCK("lock"),
    /** One statement ran too long on the server ({@link Timeouts#statement()}, SQLState 57014). */
    STATEMENT("statement"),
    /** The server sent nothing for too long ({@link Timeouts#network()}). */
    NETWORK("network"),
    /** No connection could be had ({@link Timeouts#connect()}, or the pool's own bound). */
    CONNECT("connect");

    private final String setting;

    Bound(String setting) {
      this.setting = setting;
    }

    /**
     * The name of the {@link Timeouts} component that sets this bound.
     *
     * @return {@code lock}, {@code statement}, {@code network} or {@code connect}
     */
    public String setting() {
      return setting;
    }
  }

  private final Bound bound;
  private final transient Duration limit;

  /**
   * Creates the error.
   *
   * @param operation the ledger operation, e.g. {@code complete}
   * @param bound which wait ran out, not null
   * @param limit the bound that was set, or null when the data source's own bound ran out (its
   *     value is not known to the ledger)
   * @param sqlState PostgreSQL's SQLState, or null
   * @param cause the driver's failure
   * @param outcomeUnknown true when it ran out during the ledger's commit
   */
  public LedgerTimeoutException(
      String operation,
      Bound bound,
      Duration limit,
      String sqlState,
      Throwable cause,
      boolean outcomeUnknown) {
    super(
        message(operation, bound, limit, sqlState, outcomeUnknown),
        cause,
        sqlState,
        outcomeUnknown);
    this.bound = bound;
    this.limit = limit;
  }

  /**
   * Which wait ran out.
   *
   * @return the bound, never null
   */
  public Bound bound() {
    return bound;
  }

  /**
   * How long the call was allowed to wait.
   *
   * @return the bound's value, or null when the data source's own bound ran out
   */
  public Duration limit() {
    return limit;
  }

  private static String message(
      String operation, Bound bound, Duration limit, String sqlState, boolean outcomeUnknown) {
    String within = limit == null ? null : " (" + Timeouts.describe(limit) + ")";
    StringBuilder m = new StringBuilder(operation).append(": ");
    switch (bound) {
      case LOCK ->
          m.append("task busy: waited longer than the lock bound")
              .append(within == null ? "" : within)
              .append(" for a lock another transaction holds on the task or its domain");
      case STATEMENT ->
          m.append("a statement ran longer than the statement bound")
              .append(within == null ? "" : within);
      case NETWORK ->
          m.append("database unreachable: no answer within the network bound")
              .append(within == null ? "" : within);
      case CONNECT ->
          m.append("database unreachable: no connection within ")
              .append(
                  within == null
                      ? "the connection pool's own bound (its connection timeout)"
                      : "the connect bound" + within);
    }
    if (sqlState != null) {
      m.append(" (SQLState ").append(sqlState).append(")");
    }
    if (outcomeUnknown) {
      m.append(
          "; it ran out during the commit, so the outcome is unknown (the write may have been"
              + " committed; retry only an idempotent operation, or read first)");
    }
    m.append(
        switch (bound) {
          case LOCK -> "; retry later";
          case STATEMENT -> "";
          case NETWORK, CONNECT -> "; check that the database is up and reachable";
        });
    return m.toString();
  }
}

package dev.ledger;

import java.time.Duration;

/**
 * The bounds on every wait of a ledger call, part of {@link LedgerConfig}; immutable. When one runs
 * out, the call ends with a {@link LedgerTimeoutException} naming it, its transaction is rolled
 * back and its connection given back.
 *
 * <pre>{@code
 * LedgerConfig config = LedgerConfig.builder()
 *     .timeouts(Timeouts.defaults().withLock(Duration.ofSeconds(2)))
 *     .build();
 * }</pre>
 *
 * <p>In a transaction the ledger owns (every call of {@link Ledger} outside a caller's
 * transaction), {@code lock} and {@code statement} are set for that transaction alone ({@code SET
 * LOCAL lock_timeout, statement_timeout}) and {@code network} is the connection's socket timeout
 * while the ledger holds it (JDBC {@code setNetworkTimeout}, restored before the connection goes
 * back). Inside a caller's transaction ({@link Ledger#in}, or a data source that hands out a
 * connection already in a transaction, as Spring's does) the ledger changes nothing of the caller's
 * connection: the caller's own settings bound it. Getting a connection is bounded by the data
 * source (HikariCP's {@code connectionTimeout}, 30 s by default; pgjdbc's {@code connectTimeout},
 * 10 s by default); {@code ledger-app} sets both to {@code connect}.
 *
 * @param lock how long a statement may wait for a row, table or advisory lock another transaction
 *     holds (a task another transaction is changing, a domain being replayed): PostgreSQL's {@code
 *     lock_timeout}; 5 s by default. Past it: {@link LedgerTimeoutException.Bound#LOCK}, "task
 *     busy"
 * @param statement how long one statement may run on the server: PostgreSQL's {@code
 *     statement_timeout}; 30 s by default. A replay streams a domain's whole event log in one
 *     statement (about 1.5 s per million events here): raise it for domains of tens of millions of
 *     events. Past it: {@link LedgerTimeoutException.Bound#STATEMENT}
 * @param network how long the ledger waits for the server to answer at all (a blackholed link, a
 *     frozen server) before it gives up on the connection: the socket timeout; 45 s by default,
 *     longer than {@code statement} so that a slow statement is ended by the server first. Past it:
 *     {@link LedgerTimeoutException.Bound#NETWORK}, "database unreachable"
 * @param connect how long to wait to open a connection, for the connections {@code ledger-app}
 *     opens itself; 10 s by default. A failure to get one: {@link
 *     LedgerTimeoutException.Bound#CONNECT}
 */
public record Timeouts(Duration lock, Duration statement, Duration network, Duration connect) {

  /** The largest bound: PostgreSQL's timeouts are {@code int} milliseconds. */
  public static final Duration MAX = Duration.ofMillis(Integer.MAX_VALUE);

  private static final Timeouts DEFAULTS =
      new Timeouts(
          Duration.ofSeconds(5),
          Duration.ofSeconds(30),
          Duration.ofSeconds(45),
          Duration.ofSeconds(10));

  /**
   * Validates.
   *
   * @throws InvalidInputException naming {@code lock}, {@code statement}, {@code network} or {@code
   *     connect} when it is null, zero or negative, not a whole number of milliseconds, or over
   *     {@link #MAX}
   */
  public Timeouts {
    check("lock", lock);
    check("statement", statement);
    check("network", network);
    check("connect", connect);
  }

  /**
   * The defaults: lock 5 s, statement 30 s, network 45 s, connect 10 s.
   *
   * @return the defaults
   */
  public static Timeouts defaults() {
    return DEFAULTS;
  }

  /**
   * A copy with another lock bound.
   *
   * @param bound the new bound, positive
   * @return the copy
   * @throws InvalidInputException naming {@code lock}
   */
  public Timeouts withLock(Duration bound) {
    return new Timeouts(bound, statement, network, connect);
  }

  /**
   * A copy with another statement bound.
   *
   * @param bound the new bound, positive
   * @return the copy
   * @throws InvalidInputException naming {@code statement}
   */
  public Timeouts withStatement(Duration bound) {
    return new Timeouts(lock, bound, network, connect);
  }

  /**
   * A copy with another network bound.
   *
   * @param bound the new bound, positive
   * @return the copy
   * @throws InvalidInputException naming {@code network}
   */
  public Timeouts withNetwork(Duration bound) {
    return new Timeouts(lock, statement, bound, connect);
  }

  /**
   * A copy with another connect bound.
   *
   * @param bound the new bound, positive
   * @return the copy
   * @throws InvalidInputException naming {@code connect}
   */
  public Timeouts withConnect(Duration bound) {
    return new Timeouts(lock, statement, network, bound);
  }

  /**
   * A bound as PostgreSQL reads a duration setting, e.g. {@code 5000ms}.
   *
   * @param bound one of this record's bounds
   * @return the setting's text
   */
  public static String setting(Duration bound) {
    return bound.toMillis() + "ms";
  }

  /**
   * A bound for messages, e.g. {@code 5 s} or {@code 250 ms}.
   *
   * @param bound a duration
   * @return the text
   */
  public static String describe(Duration bound) {
    long ms = bound.toMillis();
    return ms % 1000 == 0 ? ms / 1000 + " s" : ms + " ms";
  }

  private static void check(String field, Duration bound) {
    if (bound == null) {
      throw new InvalidInputException(field, "must not be null");
    }
    if (bound.isZero() || bound.isNegative()) {
      throw new InvalidInputException(field, "must be longer than zero");
    }
    if (bound.compareTo(MAX) > 0) {
      throw new InvalidInputException(field, "must be at most " + MAX.toMillis() + " ms");
    }
    if (bound.toNanos() % 1_000_000 != 0) {
      throw new InvalidInputException(field, "must be a whole number of milliseconds");
    }
  }
}

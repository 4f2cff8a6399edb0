package dev.ledger.bench;

/**
 * A correctness check of a run failed (a double claim, a replay that differs from the live
 * projection, a baseline whose SQL no longer matches ours): the run stops and exits non-zero.
 */
final class BenchFailure extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /**
   * Creates the failure.
   *
   * @param message what was checked and what was found
   */
  BenchFailure(String message) {
    super(message);
  }
}

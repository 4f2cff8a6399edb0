package dev.ledger.bench;

/**
 * The job B13's JobRunr side enqueues ({@link OutboxBench}); never run, as the bench starts no
 * JobRunr background server. Public, as JobRunr requires of a job's class and method.
 */
public final class OutboxNoopJob {

  private OutboxNoopJob() {}

  /**
   * Does nothing.
   *
   * @param n the job's number
   */
  public static void run(long n) {}
}

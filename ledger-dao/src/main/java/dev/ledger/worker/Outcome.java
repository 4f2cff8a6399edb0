package dev.ledger.worker;

/**
 * What a {@link TaskHandler} made of a task: {@link Done} completes it, {@link Failed} records the
 * failure and retries (or dead-letters) it. Immutable.
 */
public sealed interface Outcome {

  /**
   * The task is done: it is completed with the handoff.
   *
   * @param handoff the result note stored with the completion, or null; at most {@value
   *     dev.ledger.Validation#MAX_BODY} characters
   */
  record Done(String handoff) implements Outcome {}

  /**
   * The attempt failed: the error is recorded on the task and a retry is filed (or the task ends as
   * a dead letter after its last attempt).
   *
   * @param error what went wrong, not empty; cut to {@value dev.ledger.Validation#MAX_BODY}
   *     characters with the attempt's prefix
   */
  record Failed(String error) implements Outcome {
    /** Checks the error. */
    public Failed {
      if (error == null || error.isEmpty()) {
        throw new IllegalArgumentException("error: must not be empty");
      }
    }
  }

  /**
   * Done, without a handoff.
   *
   * @return the outcome
   */
  static Outcome done() {
    return new Done(null);
  }

  /**
   * Done, with a handoff.
   *
   * @param handoff the result note, or null
   * @return the outcome
   */
  static Outcome done(String handoff) {
    return new Done(handoff);
  }

  /**
   * Failed.
   *
   * @param error what went wrong, not empty
   * @return the outcome
   * @throws IllegalArgumentException when the error is null or empty
   */
  static Outcome failed(String error) {
    return new Failed(error);
  }
}

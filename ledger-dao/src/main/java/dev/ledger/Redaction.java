package dev.ledger;

/**
 * What a scrub writes in place of erased text (ports the reference's {@code Redaction}): the title
 * and body of each task filed from the origin, and the reason that replaces invalidation reasons
 * and handoffs.
 *
 * @param title the title written, 1 or more characters
 * @param body the body written, may be empty
 * @param reason the reason and handoff text written, and the reason open tasks are invalidated with
 */
public record Redaction(String title, String body, String reason) {

  /**
   * The default redaction: title {@code [erased]}, empty body, reason {@code erased on request}.
   */
  public static final Redaction ERASED = new Redaction("[erased]", "", "erased on request");
}

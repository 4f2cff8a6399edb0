package dev.ledger;

/**
 * What a scrub writes in place of erased text (ports the reference's {@code Redaction}): the title
 * and body of each task reached, and the text that replaces every other free text of it
 * (invalidation reasons, a failed attempt's error, handoffs, post destinations, the whys of
 * priority changes). What a scrub reaches: {@link Ledger#scrubTasks}.
 *
 * @param title the title written, 1 to 500 characters
 * @param body the body written, may be empty, not null
 * @param reason the text written in place of reasons, errors, handoffs, post destinations and whys,
 *     and the reason open tasks are invalidated with; 1 or more characters
 */
public record Redaction(String title, String body, String reason) {

  /**
   * The default redaction: title {@code [erased]}, empty body, reason {@code erased on request}.
   */
  public static final Redaction ERASED = new Redaction("[erased]", "", "erased on request");
}

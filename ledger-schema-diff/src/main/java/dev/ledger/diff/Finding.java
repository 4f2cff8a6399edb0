package dev.ledger.diff;

/**
 * One piece of advice about the head's schema or its new migrations: non-blocking (it never fails
 * the diff nor changes its exit code), silenced per statement with a comment {@code -- ledger:allow
 * RULE} in the head's migration.
 *
 * @param rule the stable rule id, e.g. {@code prefer-bigint}
 * @param severity always {@code advice} (kept in the JSON for pipelines that sort by it)
 * @param message what was found, naming the object, one sentence
 * @param alternative what to write instead, one sentence
 */
public record Finding(String rule, String severity, String message, String alternative) {

  /** The severity of every rule: advice, never blocking. */
  public static final String ADVICE = "advice";
}

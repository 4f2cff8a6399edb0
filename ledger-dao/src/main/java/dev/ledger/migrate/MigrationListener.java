package dev.ledger.migrate;

/**
 * Hears a run's progress, for a progress line on long runs. Called from the run's worker threads:
 * implementations are thread-safe and return quickly. Every method does nothing by default.
 */
public interface MigrationListener {

  /**
   * The run knows how many schemas it will work on.
   *
   * @param operation what the run does
   * @param schemas how many schemas need a Flyway run (zero when everything is current)
   */
  default void started(Operation operation, int schemas) {}

  /**
   * A schema's Flyway run starts.
   *
   * @param schema the schema, unquoted
   */
  default void schemaStarted(String schema) {}

  /**
   * A schema's Flyway run ended (before the run's final verification).
   *
   * @param schema the schema, unquoted
   * @param failed whether Flyway failed on it
   */
  default void schemaFinished(String schema, boolean failed) {}
}

package dev.ledger.migrate;

/** Where a schema stands after a run (or, for plan and status, before one). */
public enum SchemaState {
  /** At the current version, checksums matching, catalog as expected: nothing was done. */
  CURRENT,
  /**
   * Held no ledger before this run (the schema did not exist, or was empty, as a new database's
   * {@code public} is): made and brought to the current version.
   */
  CREATED,
  /** Had a Flyway history with applied migrations; the pending ones were applied. */
  MIGRATED,
  /** Made by the reference stack (no Flyway history): baselined at its shape, then migrated. */
  ADOPTED,
  /** Plan and status only: something would be applied. */
  PENDING,
  /** Could not be brought to, or verified at, the current version; see the error. */
  FAILED,
  /**
   * Exists and holds tables that are not a ledger's (no Flyway history, not the reference stack's
   * {@code events} and {@code tasks}): left alone, never adopted; see the error.
   */
  FOREIGN
}

package dev.ledger.migrate;

/** How the checksums recorded in a schema's history compare with the migrations of this build. */
public enum ChecksumState {
  /** Every applied migration's recorded checksum equals its script's. */
  MATCH,
  /** Some applied migration's script was edited after it was applied (the error names it). */
  MISMATCH,
  /** The history records a migration this build does not have: the schema is ahead of the code. */
  UNKNOWN_MIGRATION,
  /** No history yet (a new schema, or one the reference stack made). */
  NO_HISTORY
}

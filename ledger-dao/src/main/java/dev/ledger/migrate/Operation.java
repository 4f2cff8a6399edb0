package dev.ledger.migrate;

/** What a run did: apply, say what it would apply, or only describe. */
public enum Operation {
  /** Brought schemas to the current version ({@code ledger-app migrate}). */
  MIGRATE,
  /** Said what {@link #MIGRATE} would apply, under the same lock, applying nothing. */
  PLAN,
  /** Described each schema's version, pending migrations and checksums, without a lock. */
  STATUS
}

package dev.ledger.migrate;

/** Which migration set a schema follows. */
public enum SchemaKind {
  /** The directory schema (routing tables), history {@code ledger_directory_history}. */
  DIRECTORY,
  /** A domain schema ({@code events}, {@code tasks}, {@code promotions}). */
  DOMAIN
}

package dev.ledger.migrate;

import dev.ledger.schema.DomainSchemas;

/**
 * The advisory-lock keys of migration runs (ports the reference reconciler's {@code
 * tenant_lock_key}).
 *
 * <p>A key is the first 60 bits (15 hex digits) of the SHA-256 of a text, as a {@code long}: stable
 * across versions and JVMs (a hash of the text, not of {@link String#hashCode()}), never negative,
 * and zero only for the rare text whose digest starts with 15 zero hex digits.
 */
public final class AdvisoryLocks {

  private AdvisoryLocks() {}

  /**
   * The key a fleet run locks a tenant's database with, inside that database.
   *
   * @param tenant the tenant id, not null, not empty
   * @return the first 60 bits of the SHA-256 of the id's UTF-8 bytes, in {@code [0, 2^60)}
   * @throws IllegalArgumentException when the id is empty
   */
  public static long tenantLockKey(String tenant) {
    if (tenant == null || tenant.isEmpty()) {
      throw new IllegalArgumentException("tenant: must not be empty");
    }
    return Long.parseLong(DomainSchemas.sha256Hex(tenant).substring(0, 15), 16);
  }

  /**
   * The key a single-database run ({@code ledger-app migrate}, {@code plan}) locks a database with:
   * the tenant key of {@code ledger-migrate:} + the directory schema, so two runs over the same
   * directory exclude each other and runs over different directories do not.
   *
   * @param directorySchema the directory schema, unquoted, e.g. {@code public}
   * @return the key
   */
  public static long databaseLockKey(String directorySchema) {
    return tenantLockKey("ledger-migrate:" + directorySchema);
  }

  /**
   * The key {@code Ledger.open} holds while it migrates a directory schema at run time: the tenant
   * key of {@code ledger-directory:} + the schema. Flyway's own lock is taken after it decides
   * whether to create or baseline its history table, so two processes opening a fresh database at
   * once could both try to make it; this lock makes the second wait and find the directory current.
   * It differs from {@link #databaseLockKey} so a migration job that opens a ledger while holding
   * its own lock does not wait for itself.
   *
   * @param directorySchema the directory schema, unquoted, e.g. {@code public}
   * @return the key
   */
  public static long directoryMigrationKey(String directorySchema) {
    return tenantLockKey("ledger-directory:" + directorySchema);
  }
}

package dev.ledger.kernel;

import dev.ledger.LedgerException;
import dev.ledger.LedgerStorageException;
import dev.ledger.SchemaVersionException;
import dev.ledger.migrate.AdvisoryLocks;
import dev.ledger.migrate.RuntimeAdoption;
import dev.ledger.migrate.SessionLock;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.schema.RenderMappedDsl;
import java.sql.SQLException;
import java.util.Optional;
import javax.sql.DataSource;
import org.flywaydb.core.api.MigrationVersion;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;

/**
 * The version checks of the directory schema and of each domain schema against this code's
 * migrations: a schema ahead of this code is refused, one behind is migrated when runtime DDL is
 * allowed (holding the migration lock, adopting a reference-stack schema first) and refused
 * otherwise, with a message that says what to run. Thread-safe.
 */
public final class SchemaVersions {

  private static final MigrationVersion DOMAIN_VERSION =
      MigrationVersion.fromVersion(LedgerMigrations.DOMAIN_VERSION);
  private static final MigrationVersion DIRECTORY_VERSION =
      MigrationVersion.fromVersion(LedgerMigrations.DIRECTORY_VERSION);

  private final DataSource dataSource;
  private final RenderMappedDsl dsl;
  private final boolean runtimeDdl;

  SchemaVersions(DataSource dataSource, RenderMappedDsl dsl, boolean runtimeDdl) {
    this.dataSource = dataSource;
    this.dsl = dsl;
    this.runtimeDdl = runtimeDdl;
  }

  /**
   * Checks the directory schema and, when runtime DDL is allowed, migrates it.
   *
   * @throws SchemaVersionException when the directory is missing or behind and runtime DDL is
   *     forbidden, is ahead of this code, or still holds a reference-stack ledger's shared tables
   */
  void checkDirectory() {
    String schema = dsl.directorySchema();
    DSLContext ctx = dsl.directory();
    if (hasSharedTables(ctx, schema)) {
      throw new SchemaVersionException(
          schema,
          null,
          LedgerMigrations.DIRECTORY_VERSION,
          "schema "
              + schema
              + " holds a reference-stack ledger from before domain schemas (shared tasks and"
              + " events tables): run `ledger-app migrate` to adopt it before using the ledger");
    }
    Optional<MigrationVersion> found =
        latestVersion(ctx, schema, LedgerMigrations.DIRECTORY_HISTORY);
    if (found.isPresent() && found.get().compareTo(DIRECTORY_VERSION) > 0) {
      throw ahead(schema, found.get(), DIRECTORY_VERSION);
    }
    if (found.isEmpty() || found.get().compareTo(DIRECTORY_VERSION) < 0) {
      if (!runtimeDdl) {
        throw behind(schema, found.orElse(null), DIRECTORY_VERSION);
      }
      migrateDirectoryLocked(schema);
    }
  }

  /**
   * Migrates the directory schema holding its migration lock ({@link
   * AdvisoryLocks#directoryMigrationKey}), so processes opening a fresh database at once make it
   * once: the first migrates, the others wait and find it current.
   */
  private void migrateDirectoryLocked(String schema) {
    try (SessionLock lock =
        SessionLock.acquire(
            dataSource::getConnection,
            AdvisoryLocks.directoryMigrationKey(schema),
            Directory.PROVISION_WAIT,
            "the directory schema " + schema)) {
      LedgerMigrations.migrateDirectory(dataSource, schema);
    } catch (SQLException e) {
      throw new LedgerStorageException("open", e.getSQLState(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LedgerException("open: interrupted while waiting to migrate " + schema, e);
    }
  }

  /**
   * Checks a domain schema's version, migrating it when it is behind and that is allowed.
   *
   * @param ctx a context for the directory's tables
   * @param schema the bare schema name
   * @param callersTransaction true when {@code ctx} is on a caller's transaction: a schema behind
   *     is then refused
   * @throws SchemaVersionException when the schema is ahead, or behind and may not be migrated
   */
  void checkDomainSchema(DSLContext ctx, String schema, boolean callersTransaction) {
    Optional<MigrationVersion> found = latestVersion(ctx, schema, LedgerMigrations.DOMAIN_HISTORY);
    if (found.isPresent() && found.get().compareTo(DOMAIN_VERSION) > 0) {
      throw ahead(schema, found.get(), DOMAIN_VERSION);
    }
    if (found.isEmpty() || found.get().compareTo(DOMAIN_VERSION) < 0) {
      if (!runtimeDdl) {
        throw behind(schema, found.orElse(null), DOMAIN_VERSION);
      }
      if (callersTransaction) {
        String what =
            found.isEmpty()
                ? " has no migration history (a schema the reference stack made)"
                : " is at version " + found.get();
        throw new SchemaVersionException(
            schema,
            found.map(MigrationVersion::getVersion).orElse(null),
            DOMAIN_VERSION.getVersion(),
            "schema "
                + schema
                + what
                + ", this code needs version "
                + DOMAIN_VERSION
                + ", and it cannot be migrated inside the caller's transaction: run `ledger-app"
                + " migrate`, or make one ledger call on the domain outside a transaction");
      }
      if (found.isEmpty()) {
        // no history at all: a schema the reference stack made (its ensure_domain), adopted here
        // as the migration job would adopt it
        RuntimeAdoption.adopt(dataSource, dsl.directorySchema(), schema, Directory.PROVISION_WAIT);
      }
      LedgerMigrations.migrateDomain(dataSource, schema);
    }
  }

  private static boolean hasSharedTables(DSLContext ctx, String schema) {
    return ctx.fetchExists(
        DSL.selectOne()
            .from(DSL.table(DSL.name("information_schema", "columns")))
            .where(DSL.field(DSL.name("table_schema"), String.class).eq(schema))
            .and(DSL.field(DSL.name("table_name"), String.class).eq("tasks"))
            .and(DSL.field(DSL.name("column_name"), String.class).eq("domain")));
  }

  /**
   * The latest successfully applied version in a Flyway history table.
   *
   * @param ctx any context
   * @param schema the schema, bare
   * @param table the history table
   * @return the version, or empty when the table is missing or holds no version
   */
  public static Optional<MigrationVersion> latestVersion(
      DSLContext ctx, String schema, String table) {
    boolean exists =
        ctx.fetchValue(
                DSL.field(
                    "to_regclass({0}) is not null",
                    Boolean.class, DSL.val(DSL.name(schema, table).toString())))
            .booleanValue();
    if (!exists) {
      return Optional.empty();
    }
    Field<String> version = DSL.field(DSL.name("version"), String.class);
    return ctx
        .select(version)
        .from(DSL.table(DSL.name(schema, table)))
        .where(DSL.field(DSL.name("success"), Boolean.class).isTrue())
        .and(version.isNotNull())
        .fetch(version)
        .stream()
        .map(MigrationVersion::fromVersion)
        .max(MigrationVersion::compareTo);
  }

  private static SchemaVersionException behind(
      String schema, MigrationVersion found, MigrationVersion expected) {
    return new SchemaVersionException(
        schema,
        found == null ? null : found.getVersion(),
        expected.getVersion(),
        "schema "
            + schema
            + (found == null ? " has no migration history" : " is at version " + found)
            + ", this code needs version "
            + expected
            + ": run `ledger-app migrate`");
  }

  private static SchemaVersionException ahead(
      String schema, MigrationVersion found, MigrationVersion expected) {
    return new SchemaVersionException(
        schema,
        found.getVersion(),
        expected.getVersion(),
        "schema "
            + schema
            + " is at version "
            + found
            + ", newer than this code's "
            + expected
            + ": upgrade ledger-dao");
  }
}

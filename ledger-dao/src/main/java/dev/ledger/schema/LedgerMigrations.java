package dev.ledger.schema;

import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * The two Flyway migration sets of the {@code ledger-migrations} jar and how each is configured.
 *
 * <ul>
 *   <li>the <b>directory</b> set ({@value #DIRECTORY_LOCATION}): the routing tables, in the
 *       directory schema, history in {@value #DIRECTORY_HISTORY} so it never collides with an
 *       application's own {@code flyway_schema_history} in the same schema;
 *   <li>the <b>domain</b> set ({@value #DOMAIN_LOCATION}): one domain's {@code events}, {@code
 *       tasks} and {@code promotions}, templated with {@code ${flyway:defaultSchema}}, applied to
 *       each domain schema, each keeping its own {@value #DOMAIN_HISTORY}.
 * </ul>
 *
 * <p>One Flyway run per schema costs about 40 to 75 ms; the migration job avoids it for schemas
 * already current. Source: Flyway's {@code Flyway.configure()} API (flyway-core 13).
 */
public final class LedgerMigrations {

  /** Classpath location of the directory set. */
  public static final String DIRECTORY_LOCATION = "classpath:db/ledger/directory";

  /** Classpath location of the domain set. */
  public static final String DOMAIN_LOCATION = "classpath:db/ledger/domain";

  /** The directory's history table, in the directory schema. */
  public static final String DIRECTORY_HISTORY = "ledger_directory_history";

  /** Each domain schema's history table. */
  public static final String DOMAIN_HISTORY = "flyway_schema_history";

  /**
   * The latest version of the directory set this code was built with (a test checks it against the
   * scripts on the class path).
   */
  public static final String DIRECTORY_VERSION = "3";

  /**
   * The latest version of the domain set this code was built with (a test checks it against the
   * scripts on the class path).
   */
  public static final String DOMAIN_VERSION = "6";

  private LedgerMigrations() {}

  /**
   * Flyway configured for the directory set on one schema. A schema that holds tables but no
   * history (a reference-stack ledger, or an application's own tables in {@code public}) is
   * baselined at version 0, so every script runs; they are written to be idempotent there.
   *
   * @param dataSource the database, not null
   * @param directorySchema the directory schema, unquoted, e.g. {@code public}
   * @return the configuration, to be loaded
   */
  public static FluentConfiguration directory(DataSource dataSource, String directorySchema) {
    return Flyway.configure(LedgerMigrations.class.getClassLoader())
        .dataSource(dataSource)
        .schemas(directorySchema)
        .defaultSchema(directorySchema)
        .createSchemas(true)
        .table(DIRECTORY_HISTORY)
        .locations(DIRECTORY_LOCATION)
        .baselineOnMigrate(true)
        .baselineVersion("0")
        .validateMigrationNaming(true);
  }

  /**
   * Flyway configured for the domain set on one domain schema.
   *
   * @param dataSource the database, not null
   * @param schema the domain schema, unquoted, e.g. {@code ledger_acme_822b33ad}
   * @return the configuration, to be loaded
   * @throws IllegalArgumentException when {@code schema} is not a domain schema name
   */
  public static FluentConfiguration domain(DataSource dataSource, String schema) {
    if (!DomainSchemas.isDomainSchemaName(schema)) {
      throw new IllegalArgumentException("schema: not a domain schema name: " + schema);
    }
    return Flyway.configure(LedgerMigrations.class.getClassLoader())
        .dataSource(dataSource)
        .schemas(schema)
        .defaultSchema(schema)
        .createSchemas(true)
        .table(DOMAIN_HISTORY)
        .locations(DOMAIN_LOCATION)
        .validateMigrationNaming(true);
  }

  /**
   * Brings the directory schema to the current version.
   *
   * @param dataSource the database
   * @param directorySchema the directory schema, unquoted
   * @return Flyway's result
   * @throws org.flywaydb.core.api.FlywayException when a migration fails or a checksum differs
   */
  public static MigrateResult migrateDirectory(DataSource dataSource, String directorySchema) {
    return directory(dataSource, directorySchema).load().migrate();
  }

  /**
   * Brings one domain schema to the current version, creating it when absent.
   *
   * @param dataSource the database
   * @param schema the domain schema, unquoted
   * @return Flyway's result
   * @throws org.flywaydb.core.api.FlywayException when a migration fails or a checksum differs
   */
  public static MigrateResult migrateDomain(DataSource dataSource, String schema) {
    return domain(dataSource, schema).load().migrate();
  }
}

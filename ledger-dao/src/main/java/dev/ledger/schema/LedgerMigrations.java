package dev.ledger.schema;

import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;
import org.flywaydb.database.postgresql.PostgreSQLConfigurationExtension;

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
 * already current. Source: Flyway's {@code Flyway.configure()} API (flyway-core 11.7 to 13: the
 * oldest is what Spring Boot 3.5 manages).
 *
 * <p>Every set runs with Flyway's PostgreSQL lock in session mode ({@value #SESSION_LOCK}): with
 * the default transactional lock, Flyway keeps a transaction open while it runs a non-transactional
 * script, and a {@code CREATE INDEX CONCURRENTLY} in that script waits for that transaction forever
 * (flyway/flyway#3497, #3682).
 *
 * <p>A third set, the <b>control</b> set ({@value #CONTROL_LOCATION}), is the fleet's tenant
 * registry in a control database, history in {@value #CONTROL_HISTORY}.
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

  /** Classpath location of the control set (the fleet's tenant registry). */
  public static final String CONTROL_LOCATION = "classpath:db/ledger/control";

  /** The control set's history table, in the control schema. */
  public static final String CONTROL_HISTORY = "ledger_control_history";

  /** The Flyway setting that makes its PostgreSQL lock a session lock instead of a transaction. */
  public static final String SESSION_LOCK = "flyway.postgresql.transactional.lock=false";

  /**
   * The latest version of the directory set this code was built with (a test checks it against the
   * scripts on the class path).
   */
  public static final String DIRECTORY_VERSION = "11";

  /**
   * The latest version of the domain set this code was built with (a test checks it against the
   * scripts on the class path).
   */
  public static final String DOMAIN_VERSION = "14";

  private LedgerMigrations() {}

  /**
   * Makes Flyway's PostgreSQL lock a session lock ({@value #SESSION_LOCK}), through the
   * configuration extension (setting it as a property needs Flyway's Jackson-based binding, which
   * is optional from Flyway 12 on).
   *
   * <p>The extension is looked up through {@code getPluginRegister().getPlugin(Class)}, which every
   * Flyway from 10 to 13 has: {@code getConfigurationExtension(Class)} is newer than Flyway 11.7,
   * and Spring Boot 3.5 manages Flyway 11.7 (a library compiled against the newer method fails
   * there with {@code NoSuchMethodError}). Flyway 13 deprecates {@code getPlugin(Class)} in favour
   * of {@code getExact(Class)}, which 11.7 lacks; both return the same instance for this exact
   * class.
   *
   * @param configuration a configuration being built
   * @return the same configuration
   * @throws IllegalStateException when {@code flyway-database-postgresql} is not on the class path
   */
  private static FluentConfiguration withSessionLock(FluentConfiguration configuration) {
    PostgreSQLConfigurationExtension extension =
        configuration.getPluginRegister().getPlugin(PostgreSQLConfigurationExtension.class);
    if (extension == null) {
      throw new IllegalStateException(
          "Flyway has no PostgreSQL support: add org.flywaydb:flyway-database-postgresql");
    }
    extension.setTransactionalLock(false);
    return configuration;
  }

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
    return withSessionLock(
        Flyway.configure(LedgerMigrations.class.getClassLoader())
            .dataSource(dataSource)
            .schemas(directorySchema)
            .defaultSchema(directorySchema)
            .createSchemas(true)
            .table(DIRECTORY_HISTORY)
            .locations(DIRECTORY_LOCATION)
            .baselineOnMigrate(true)
            .baselineVersion("0")
            .validateMigrationNaming(true));
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
    return withSessionLock(
        Flyway.configure(LedgerMigrations.class.getClassLoader())
            .dataSource(dataSource)
            .schemas(schema)
            .defaultSchema(schema)
            .createSchemas(true)
            .table(DOMAIN_HISTORY)
            .locations(DOMAIN_LOCATION)
            .validateMigrationNaming(true));
  }

  /**
   * Flyway configured for the control set (the fleet's tenant registry) on one schema of the
   * control database.
   *
   * @param dataSource the control database, not null
   * @param controlSchema the schema of the registry, unquoted, e.g. {@code public}
   * @return the configuration, to be loaded
   */
  public static FluentConfiguration control(DataSource dataSource, String controlSchema) {
    return withSessionLock(
        Flyway.configure(LedgerMigrations.class.getClassLoader())
            .dataSource(dataSource)
            .schemas(controlSchema)
            .defaultSchema(controlSchema)
            .createSchemas(true)
            .table(CONTROL_HISTORY)
            .locations(CONTROL_LOCATION)
            .baselineOnMigrate(true)
            .baselineVersion("0")
            .validateMigrationNaming(true));
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

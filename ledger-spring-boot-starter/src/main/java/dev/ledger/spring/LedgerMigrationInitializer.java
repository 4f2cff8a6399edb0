package dev.ledger.spring;

import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.beans.factory.InitializingBean;

/**
 * The startup migration of the ledger's own schema: brings the directory schema current (under the
 * ledger's directory-migration advisory lock, so replicas starting together migrate it once) and
 * makes or brings current the schema of each domain in {@code ledger.migration.domains}. Runs when
 * the bean initializes; Spring Boot's database-initialization ordering puts it after (or, with
 * {@code ledger.migration.order=before-flyway}, before) the service's own Flyway, see {@link
 * LedgerMigrationDetectors}.
 *
 * <p>It runs on the service's plain {@code DataSource} (never inside a Spring transaction), with
 * runtime DDL allowed whatever {@code ledger.runtime-ddl} says: the startup migration is the DDL
 * the service asked for. Thread-safe after construction; {@link #migrate()} may run again.
 */
public class LedgerMigrationInitializer implements InitializingBean {

  private final DataSource dataSource;
  private final LedgerConfig config;
  private final List<String> domains;

  /**
   * Creates the initializer; nothing runs before {@link #afterPropertiesSet()}.
   *
   * @param dataSource the service's data source, not null
   * @param config the ledger's configuration (its directory schema, clock and listeners are used),
   *     not null
   * @param domains the domains to provision, not null, possibly empty
   */
  public LedgerMigrationInitializer(
      DataSource dataSource, LedgerConfig config, List<String> domains) {
    this.dataSource = dataSource;
    this.config =
        new LedgerConfig(
            config.directorySchema(),
            true,
            config.clock(),
            config.executeListeners(),
            config.timeouts());
    this.domains = List.copyOf(domains);
  }

  /**
   * Runs {@link #migrate()} as the bean initializes.
   *
   * @throws dev.ledger.SchemaVersionException when the directory is ahead of this code or holds a
   *     reference-stack ledger the migration job must adopt first
   * @throws dev.ledger.LedgerStorageException when the database fails; the context does not start
   */
  @Override
  public void afterPropertiesSet() {
    migrate();
  }

  /**
   * Migrates the directory schema and provisions the configured domains.
   *
   * @throws dev.ledger.InvalidInputException naming {@code domain} when a configured domain is not
   *     a valid domain name
   * @throws dev.ledger.SchemaVersionException see {@link #afterPropertiesSet()}
   * @throws dev.ledger.LedgerStorageException when the database fails
   */
  public void migrate() {
    Ledger ledger = Ledger.open(dataSource, config);
    for (String domain : domains) {
      ledger.provision(domain);
    }
  }

  /**
   * The domains this initializer provisions.
   *
   * @return unmodifiable, in the configured order
   */
  public List<String> domains() {
    return domains;
  }
}

package dev.ledger.migrate;

import dev.ledger.schema.SchemaInstaller;
import java.sql.Connection;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ledger's own domain set, resolved once, for making a new domain's schema at run time inside
 * the provisioning transaction ({@code Ledger.provision}, a domain's first {@code file}): the
 * {@link SchemaInstaller}, and the latest version and migration digest the directory's {@code
 * ledger_schema_state} row of the new schema records. The same resolution as the migration job's
 * ({@link MigrationSets}), without extra locations.
 */
public final class Provisioning {

  private static final Logger LOG = LoggerFactory.getLogger(Provisioning.class);

  private final SchemaInstaller installer;
  private final String latest;
  private final String digest;

  private Provisioning(SchemaInstaller installer, String latest, String digest) {
    this.installer = installer;
    this.latest = latest;
    this.digest = digest;
  }

  /**
   * Resolves the ledger's domain set through Flyway (its {@code info()} on a schema that does not
   * exist, about 20 to 50 ms) and prepares its installer.
   *
   * @param dataSource the database Flyway may read while resolving
   * @return the provisioning; empty when the set cannot be installed in one transaction (the reason
   *     is logged), and Flyway makes new schemas
   * @throws org.flywaydb.core.api.FlywayException when the migrations cannot be resolved
   */
  public static Optional<Provisioning> resolve(DataSource dataSource) {
    MigrationSets sets = new MigrationSets(List.of());
    MigrationSet domain = sets.domain(dataSource);
    MigrationSets.NewSchemas how = sets.newSchemas(dataSource);
    if (how.installer() == null) {
      LOG.info("new domain schemas are made by Flyway: {}", how.flywayReason());
      return Optional.empty();
    }
    return Optional.of(new Provisioning(how.installer(), domain.latest(), domain.digest()));
  }

  /**
   * Makes a new domain schema inside the caller's transaction ({@link
   * SchemaInstaller#installWithin}).
   *
   * @param connection the provisioning transaction's connection
   * @param schema the new schema, a domain schema name that does not exist
   * @return the versions applied
   * @throws SchemaInstaller.InstallException naming the step that failed; the caller rolls back
   */
  public List<String> installWithin(Connection connection, String schema)
      throws SchemaInstaller.InstallException {
    return installer.installWithin(connection, schema);
  }

  /**
   * The set's latest version: what a new schema is at.
   *
   * @return e.g. {@code 6}
   */
  public String latest() {
    return latest;
  }

  /**
   * The set's migration digest ({@link dev.ledger.schema.MigrationDigest}), what the new schema's
   * state row records.
   *
   * @return 64 hex digits
   */
  public String digest() {
    return digest;
  }
}

package dev.ledger.migrate;

import dev.ledger.schema.LedgerMigrations;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * The directory and domain migration sets of a job's locations, resolved through Flyway on first
 * use and kept: the resolved scripts and checksums are a property of the class path, so a fleet run
 * resolves once for all its tenants.
 */
final class MigrationSets {

  private final List<String> directoryLocations;
  private final List<String> domainLocations;
  private MigrationSet directory;
  private MigrationSet domain;

  /**
   * Creates the holder.
   *
   * @param extraDomainLocations Flyway locations added to the domain set, may be empty
   */
  MigrationSets(List<String> extraDomainLocations) {
    this(List.of(LedgerMigrations.DIRECTORY_LOCATION), withMain(extraDomainLocations));
  }

  /**
   * Creates the holder for other locations than the ledger's (a test's build with an edited set).
   *
   * @param directoryLocations the directory set's Flyway locations
   * @param domainLocations the domain set's Flyway locations, the main one first
   */
  MigrationSets(List<String> directoryLocations, List<String> domainLocations) {
    this.directoryLocations = List.copyOf(directoryLocations);
    this.domainLocations = List.copyOf(domainLocations);
  }

  private static List<String> withMain(List<String> extraDomainLocations) {
    List<String> domainAll = new ArrayList<>();
    domainAll.add(LedgerMigrations.DOMAIN_LOCATION);
    domainAll.addAll(extraDomainLocations);
    return domainAll;
  }

  /**
   * The directory set, resolved on first call.
   *
   * @param dataSource a database Flyway may read while resolving
   * @return the set
   */
  synchronized MigrationSet directory(DataSource dataSource) {
    if (directory == null) {
      directory = MigrationSet.resolve(SchemaKind.DIRECTORY, dataSource, directoryLocations);
    }
    return directory;
  }

  /**
   * The domain set, resolved on first call.
   *
   * @param dataSource a database Flyway may read while resolving
   * @return the set
   */
  synchronized MigrationSet domain(DataSource dataSource) {
    if (domain == null) {
      domain = MigrationSet.resolve(SchemaKind.DOMAIN, dataSource, domainLocations);
    }
    return domain;
  }

  /**
   * The directory set's locations.
   *
   * @return the locations
   */
  List<String> directoryLocations() {
    return directoryLocations;
  }

  /**
   * The domain set's locations, the main one first.
   *
   * @return the locations
   */
  List<String> domainLocations() {
    return domainLocations;
  }
}

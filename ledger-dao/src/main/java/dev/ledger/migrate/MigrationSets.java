package dev.ledger.migrate;

import dev.ledger.schema.LedgerMigrations;
import dev.ledger.schema.SchemaInstaller;
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
  private NewSchemas newSchemas;

  /**
   * How new domain schemas are made and pending domain migrations applied: by a {@link
   * SchemaInstaller} (one transaction per schema), or by Flyway for the reason given.
   *
   * @param installer the installer; null when Flyway makes them
   * @param flywayReason why Flyway makes them; null when the installer does
   */
  record NewSchemas(SchemaInstaller installer, String flywayReason) {}

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

  /**
   * Checks extra domain locations before any run: each is non-blank, and a {@code classpath:} or
   * {@code filesystem:} one names a folder that exists (Flyway only logs a missing location and
   * runs without it, so a typo would go unnoticed).
   *
   * @param locations the extra locations
   * @param field how the caller's input names them, for the message (e.g. {@code
   *     extraDomainLocations}, {@code --domain-location})
   * @throws IllegalArgumentException naming the field and the location
   */
  static void checkExtraLocations(List<String> locations, String field) {
    for (String location : locations) {
      if (location == null || location.isBlank()) {
        throw new IllegalArgumentException(field + ": must not be blank");
      }
      String folder = null;
      boolean exists = true;
      if (location.startsWith("filesystem:")) {
        folder = location.substring("filesystem:".length());
        exists = java.nio.file.Files.isDirectory(java.nio.file.Path.of(folder));
      } else if (location.startsWith("classpath:") || !location.contains(":")) {
        folder =
            (location.startsWith("classpath:")
                    ? location.substring("classpath:".length())
                    : location)
                .replaceAll("^/+|/+$", "");
        exists = LedgerMigrations.class.getClassLoader().getResource(folder) != null;
      }
      if (!exists) {
        throw new IllegalArgumentException(
            field
                + ": "
                + location
                + " is no folder"
                + (location.startsWith("filesystem:") ? "" : " on the class path")
                + "; give an existing classpath:FOLDER or filesystem:/PATH");
      }
    }
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
   * How this build makes new domain schemas, decided on first call: the {@link SchemaInstaller}
   * when the domain set is the ledger's own location only and every script of it can be installed
   * in one transaction; otherwise Flyway, with the reason (extra locations may hold callbacks, Java
   * migrations or script configuration this class does not read).
   *
   * @param dataSource a database Flyway may read while resolving
   * @return the decision
   */
  synchronized NewSchemas newSchemas(DataSource dataSource) {
    if (newSchemas == null) {
      newSchemas = decideNewSchemas(domain(dataSource));
    }
    return newSchemas;
  }

  private NewSchemas decideNewSchemas(MigrationSet set) {
    if (!set.repeatables().isEmpty()) {
      return new NewSchemas(null, "the domain set holds repeatable migrations");
    }
    try {
      return new NewSchemas(
          SchemaInstaller.prepare(
              LedgerMigrations.class.getClassLoader(),
              domainLocations,
              LedgerMigrations.DOMAIN_HISTORY,
              set.versioned().values().stream()
                  .map(
                      r ->
                          new SchemaInstaller.Migration(
                              r.version(), r.description(), r.script(), r.checksum()))
                  .toList()),
          null);
    } catch (SchemaInstaller.NotInstallableException e) {
      return new NewSchemas(null, e.getMessage());
    }
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

package dev.ledger.migrate;

import dev.ledger.schema.LedgerMigrations;
import dev.ledger.schema.MigrationDigest;
import dev.ledger.schema.SchemaInstaller;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import javax.sql.DataSource;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationVersion;
import org.flywaydb.core.api.configuration.FluentConfiguration;

/**
 * The migrations of one set (directory or domain) as Flyway resolves them from the classpath:
 * version, description, script and checksum of each. Taken from Flyway's {@code
 * MigrationInfoService} of a schema that does not exist ({@value #PROBE_SCHEMA}), where every
 * resolved migration shows as pending with its resolved checksum, so the expected checksums are
 * Flyway's own and no checksum is computed here.
 */
final class MigrationSet {

  /**
   * The schema Flyway's {@code info()} is asked about to list the resolved migrations; it is never
   * created (info creates nothing). Flyway logs at INFO that its history table "does not exist
   * yet": the name says why, in the service's log. Should it exist, only its history is read, and
   * the resolved checksums do not depend on it.
   */
  static final String PROBE_SCHEMA = "ledger_listing_its_migrations_00000000";

  private final SchemaKind kind;
  private final List<String> locations;
  private final Map<String, Resolved> byVersion;
  private final List<Resolved> repeatables;
  private final String latest;
  private final String digest;

  /**
   * One resolved migration.
   *
   * @param version the version, e.g. {@code 3}; null for a repeatable migration
   * @param description e.g. {@code promotions new digest and why erased}, as Flyway writes it in
   *     its history
   * @param script e.g. {@code V3__promotions_new_digest_and_why_erased.sql}
   * @param checksum Flyway's checksum of the script (for a repeatable migration: as applied to
   *     {@value #PROBE_SCHEMA}, see {@link #checksumIn})
   * @param text a repeatable migration's text, for its checksum in each schema; null for a
   *     versioned one, or when its location could not be read
   */
  record Resolved(
      String version, String description, String script, Integer checksum, String text) {

    /**
     * How a message names the migration.
     *
     * @return e.g. {@code V3 (V3__promotions_new_digest_and_why_erased.sql)}
     */
    String label() {
      return (version == null ? "R" : "V" + version) + " (" + script + ")";
    }
  }

  private MigrationSet(
      SchemaKind kind,
      List<String> locations,
      List<Resolved> resolved,
      List<MigrationDigest.Entry> digestEntries) {
    this.kind = kind;
    this.locations = List.copyOf(locations);
    Map<String, Resolved> versioned = new LinkedHashMap<>();
    List<Resolved> repeatable = new ArrayList<>();
    for (Resolved r : resolved) {
      if (r.version() == null) {
        repeatable.add(r);
      } else {
        versioned.put(r.version(), r);
      }
    }
    this.byVersion = Collections.unmodifiableMap(versioned);
    this.repeatables = List.copyOf(repeatable);
    this.latest =
        versioned.keySet().stream()
            .map(MigrationVersion::fromVersion)
            .max(MigrationVersion::compareTo)
            .map(MigrationVersion::getVersion)
            .orElse(null);
    this.digest = MigrationDigest.of(digestEntries);
  }

  /**
   * Resolves a set through Flyway.
   *
   * @param kind which set
   * @param dataSource a database Flyway may read (it reads {@value #PROBE_SCHEMA}'s history, if
   *     any)
   * @param locations the set's locations, its main one first
   * @return the resolved set
   */
  static MigrationSet resolve(SchemaKind kind, DataSource dataSource, List<String> locations) {
    BiFunction<DataSource, String, FluentConfiguration> configure =
        kind == SchemaKind.DIRECTORY ? LedgerMigrations::directory : LedgerMigrations::domain;
    MigrationInfo[] infos =
        configure
            .apply(dataSource, PROBE_SCHEMA)
            .locations(locations.toArray(String[]::new))
            .load()
            .info()
            .all();
    List<Resolved> resolved = new ArrayList<>();
    List<MigrationDigest.Entry> digestEntries = new ArrayList<>();
    boolean anyRepeatable = false;
    for (MigrationInfo info : infos) {
      anyRepeatable |= info.getState().isResolved() && info.getVersion() == null;
    }
    Map<String, String> texts = anyRepeatable ? repeatableTexts(locations) : Map.of();
    for (MigrationInfo info : infos) {
      if (!info.getState().isResolved()) {
        continue;
      }
      // the digest's entries are what Directory records for a schema it provisions (entryOf)
      MigrationDigest.Entry entry = MigrationDigest.entryOf(info);
      digestEntries.add(entry);
      resolved.add(
          new Resolved(
              entry.version(),
              info.getDescription(),
              info.getScript(),
              entry.checksum(),
              entry.version() == null ? texts.get(info.getScript()) : null));
    }
    return new MigrationSet(kind, locations, resolved, digestEntries);
  }

  /** The scripts' texts, for repeatable migrations' checksums; empty when unreadable. */
  private static Map<String, String> repeatableTexts(List<String> locations) {
    try {
      return SchemaInstaller.scriptTexts(LedgerMigrations.class.getClassLoader(), locations);
    } catch (SchemaInstaller.NotInstallableException e) {
      return Map.of();
    }
  }

  /**
   * The checksum Flyway records for a migration of this set applied to a schema: the resolved one
   * for a versioned migration; for a repeatable one, taken over its text with the schema's
   * placeholder values ({@link SchemaInstaller#repeatableChecksum}).
   *
   * @param r a migration of this set
   * @param schema the schema, bare
   * @return the checksum; null for a repeatable migration whose checksum in that schema is not
   *     known here (its text unreadable, or a placeholder this build does not replace)
   */
  Integer checksumIn(Resolved r, String schema) {
    if (r.version() != null) {
      return r.checksum();
    }
    if (r.text() == null) {
      return null;
    }
    String table =
        kind == SchemaKind.DIRECTORY
            ? LedgerMigrations.DIRECTORY_HISTORY
            : LedgerMigrations.DOMAIN_HISTORY;
    return SchemaInstaller.repeatableChecksum(r.text(), schema, table, r.script());
  }

  /**
   * Which set this is.
   *
   * @return directory or domain
   */
  SchemaKind kind() {
    return kind;
  }

  /**
   * The locations the set was resolved from.
   *
   * @return Flyway locations, e.g. {@code classpath:db/ledger/domain}
   */
  List<String> locations() {
    return locations;
  }

  /**
   * The versioned migrations, by version, in version order.
   *
   * @return the map, unmodifiable
   */
  Map<String, Resolved> versioned() {
    return byVersion;
  }

  /**
   * The repeatable migrations.
   *
   * @return the list, possibly empty
   */
  List<Resolved> repeatables() {
    return repeatables;
  }

  /**
   * The latest version.
   *
   * @return e.g. {@code 5}; null for an empty set
   */
  String latest() {
    return latest;
  }

  /**
   * The set's digest ({@link MigrationDigest}), what the directory's {@code ledger_schema_state}
   * records for a schema found current with this set.
   *
   * @return 64 hex digits
   */
  String digest() {
    return digest;
  }
}

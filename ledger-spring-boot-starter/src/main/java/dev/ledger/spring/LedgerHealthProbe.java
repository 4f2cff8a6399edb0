package dev.ledger.spring;

import dev.ledger.Ledger;
import dev.ledger.schema.LedgerMigrations;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.flywaydb.core.api.MigrationVersion;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * What the ledger's health indicator checks, apart from Spring's health API (the Boot 3 and Boot 4
 * indicators both delegate here): the directory schema's migration version against the one this
 * code was built with ({@link LedgerMigrations#DIRECTORY_VERSION}), and the number of domains with
 * a schema. Two queries on one pooled connection. Thread-safe.
 */
public final class LedgerHealthProbe {

  /** The outcome: up or not, and the details shown under {@code components.ledger.details}. */
  public record Result(boolean up, Map<String, Object> details) {}

  private final Ledger ledger;
  private final DataSource dataSource;
  private final String directorySchema;

  /**
   * Creates the probe.
   *
   * @param ledger the ledger, not null
   * @param dataSource the database the ledger runs on, not null
   * @param directorySchema the ledger's directory schema, unquoted
   */
  public LedgerHealthProbe(Ledger ledger, DataSource dataSource, String directorySchema) {
    this.ledger = ledger;
    this.dataSource = dataSource;
    this.directorySchema = directorySchema;
  }

  /**
   * Checks the ledger. Up when the directory is at this code's version; down when it is behind
   * (someone dropped or rolled back migrations) or ahead (a newer release migrated it: this replica
   * should be replaced).
   *
   * @return the result; details {@code directorySchema}, {@code directoryVersion} (null when the
   *     directory has no history), {@code expectedDirectoryVersion}, {@code domains} (when up)
   * @throws SQLException when the database cannot be reached (the indicator reports it as down)
   * @throws dev.ledger.LedgerStorageException when listing the domains fails
   */
  public Result check() throws SQLException {
    Map<String, Object> details = new LinkedHashMap<>();
    details.put("directorySchema", directorySchema);
    Optional<MigrationVersion> found;
    try (Connection c = dataSource.getConnection()) {
      found = directoryVersion(DSL.using(c, SQLDialect.POSTGRES));
    }
    MigrationVersion expected = MigrationVersion.fromVersion(LedgerMigrations.DIRECTORY_VERSION);
    details.put("directoryVersion", found.map(MigrationVersion::getVersion).orElse(null));
    details.put("expectedDirectoryVersion", expected.getVersion());
    if (found.isEmpty() || found.get().compareTo(expected) != 0) {
      details.put(
          "reason",
          found.isEmpty() || found.get().compareTo(expected) < 0
              ? "the directory schema is behind this code: run the ledger's migration"
              : "the directory schema is ahead of this code: a newer release migrated it");
      return new Result(false, details);
    }
    details.put("domains", ledger.domains().size());
    return new Result(true, details);
  }

  private Optional<MigrationVersion> directoryVersion(DSLContext ctx) {
    Field<String> version = DSL.field(DSL.name("version"), String.class);
    Field<Boolean> success = DSL.field(DSL.name("success"), Boolean.class);
    boolean exists =
        ctx.fetchExists(
            DSL.selectOne()
                .from(DSL.table(DSL.name("information_schema", "tables")))
                .where(DSL.field(DSL.name("table_schema"), String.class).eq(directorySchema))
                .and(
                    DSL.field(DSL.name("table_name"), String.class)
                        .eq(LedgerMigrations.DIRECTORY_HISTORY)));
    if (!exists) {
      return Optional.empty();
    }
    List<String> versions =
        ctx.select(version)
            .from(DSL.table(DSL.name(directorySchema, LedgerMigrations.DIRECTORY_HISTORY)))
            .where(success.isTrue())
            .and(version.isNotNull())
            .fetch(version);
    return versions.stream().map(MigrationVersion::fromVersion).max(MigrationVersion::compareTo);
  }
}

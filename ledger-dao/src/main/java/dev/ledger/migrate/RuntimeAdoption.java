package dev.ledger.migrate;

import dev.ledger.LedgerException;
import dev.ledger.LedgerStorageException;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.schema.RenderMappedDsl;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.flywaydb.core.api.MigrationVersion;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Adoption of one domain schema at run time: a schema the reference stack made while this ledger
 * runs (its {@code ensure_domain} creates a new domain's schema with no Flyway history) is detected
 * by its shape ({@link AdoptedShape}, the migration job's detection), baselined at that shape's
 * version and brought to this build's version by Flyway, as {@code ledger-app migrate} would adopt
 * it. The ledger calls it the first time it routes such a domain, when runtime DDL is allowed.
 *
 * <pre>{@code
 * Optional<AdoptedShape> shape = RuntimeAdoption.adopt(dataSource, "public", "ledger_x_1a2b3c4d");
 * }</pre>
 *
 * <p>Two processes adopting one schema at once are serialised by a session advisory lock ({@link
 * #lockKey}); the second finds the history the first wrote and adopts nothing. Thread-safe.
 */
public final class RuntimeAdoption {

  private static final Logger LOG = LoggerFactory.getLogger(RuntimeAdoption.class);

  private RuntimeAdoption() {}

  /**
   * Adopts a domain schema that has no Flyway history.
   *
   * @param dataSource the database, not null
   * @param directorySchema the directory schema, unquoted
   * @param schema the domain schema, unquoted, a domain schema name
   * @param wait how long to wait for another process adopting the same schema
   * @return the shape it was adopted from; empty when it had a history by the time the lock was
   *     held (another process adopted it)
   * @throws LedgerException when the schema is no shape the reference stack made (nothing is
   *     changed), when Flyway fails, or when another process held the adoption lock for {@code
   *     wait}
   * @throws LedgerStorageException when the database cannot be used
   */
  public static Optional<AdoptedShape> adopt(
      DataSource dataSource, String directorySchema, String schema, Duration wait) {
    if (!DomainSchemas.isDomainSchemaName(schema)) {
      throw new IllegalArgumentException("schema: not a domain schema name: " + schema);
    }
    try (SessionLock lock =
        SessionLock.acquire(
            dataSource::getConnection, lockKey(schema), wait, "adoption of schema " + schema)) {
      var ctx = DSL.using(dataSource, SQLDialect.POSTGRES);
      boolean hasHistory =
          ctx.fetchValue(
              DSL.field(
                  "to_regclass({0}) is not null",
                  Boolean.class,
                  DSL.val(DSL.name(schema, LedgerMigrations.DOMAIN_HISTORY).toString())));
      if (hasHistory) {
        return Optional.empty();
      }
      Catalog catalog =
          new Catalog(
              ctx, new RenderMappedDsl(dataSource, directorySchema, List.of()), directorySchema, 1);
      Set<String> lines = catalog.details(List.of(schema)).getOrDefault(schema, Set.of());
      AdoptedShape shape = Analysis.shapeOf(lines);
      if (shape == null) {
        throw new LedgerException(
            "schema "
                + schema
                + " has no Flyway history and is no shape the reference stack made (events and"
                + " tasks are needed); nothing was changed: inspect it");
      }
      LOG.info(
          "adopting schema {} at run time: reference-stack shape {}, baselined at {}",
          schema,
          shape,
          shape.baselineVersion());
      LedgerMigrations.domain(dataSource, schema)
          .baselineOnMigrate(true)
          .baselineVersion(MigrationVersion.fromVersion(shape.baselineVersion()))
          .baselineDescription("adopted " + shape.name().toLowerCase(Locale.ROOT))
          .load()
          .migrate();
      return Optional.of(shape);
    } catch (SQLException e) {
      throw new LedgerStorageException("adopt " + schema, e.getSQLState(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LedgerException("adopt " + schema + ": interrupted while waiting for its lock", e);
    }
  }

  /**
   * The session advisory-lock key of a schema's adoption: the tenant key of {@code ledger-adopt:} +
   * the schema.
   *
   * @param schema the domain schema, unquoted
   * @return the key
   */
  static long lockKey(String schema) {
    return AdvisoryLocks.tenantLockKey("ledger-adopt:" + schema);
  }
}

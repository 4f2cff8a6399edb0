package dev.ledger.migrate;

import dev.ledger.schema.LedgerMigrations;
import dev.ledger.schema.SchemaInstaller;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.MigrationVersion;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;
import org.jooq.Field;
import org.jooq.Record3;
import org.jooq.Table;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Script execution of a migration run: runs each schema's work, {@code parallelism} at a time on
 * threads of its own, each on its own connection, either in one transaction by the {@link
 * SchemaInstaller} (a new domain schema, or pending migrations the installer can apply) or by one
 * Flyway run; checks the directory schema's CREATE privilege before its run. A failure is recorded
 * on the work ({@link Work#error}), never thrown; each work run lands in {@link RunContext#ran}.
 */
final class SchemaRunner {

  /** The job's logger: a run's lines keep the category they always had. */
  private static final Logger LOG = LoggerFactory.getLogger(MigrationJob.class);

  private final RunContext ctx;
  private final AtomicBoolean newSchemasReasonLogged = new AtomicBoolean();

  SchemaRunner(RunContext ctx) {
    this.ctx = ctx;
  }

  /**
   * Runs the directory schema's work, or fails it at once when this run's role may not create
   * objects there (Flyway would retry creating its history table for 10 s first).
   *
   * @param directory the directory schema's work, whose action runs
   */
  void runDirectory(Work directory) {
    String refused = mayNotCreateIn(ctx.directorySchema);
    if (refused != null) {
      directory.error = refused;
      directory.ran = true;
      ctx.ran.put(directory.schema, directory);
    } else {
      runOne(directory);
    }
  }

  /**
   * Whether this run's role may create objects in a schema (or, when the schema does not exist,
   * create it): one statement, {@code has_schema_privilege} or {@code has_database_privilege}.
   *
   * @return null when it may; else the error naming the role, the schema and the privilege needed
   */
  private String mayNotCreateIn(String schema) {
    Table<?> ns = DSL.table(DSL.name("pg_catalog", "pg_namespace")).as("n");
    Field<Object> oid = DSL.field(DSL.name("n", "oid"));
    Field<Boolean> onSchema =
        DSL.field(
            DSL.select(
                    DSL.function("has_schema_privilege", Boolean.class, oid, DSL.inline("CREATE")))
                .from(ns)
                .where(DSL.field(DSL.name("n", "nspname"), String.class).eq(schema)));
    Field<Boolean> exists =
        DSL.field(
            DSL.exists(
                DSL.selectOne()
                    .from(ns)
                    .where(DSL.field(DSL.name("n", "nspname"), String.class).eq(schema))));
    Field<Boolean> onDatabase =
        DSL.function(
            "has_database_privilege",
            Boolean.class,
            DSL.function("current_database", String.class),
            DSL.inline("CREATE"));
    Record3<Boolean, Boolean, String> r =
        ctx.plain.select(exists, DSL.coalesce(onSchema, onDatabase), DSL.currentUser()).fetchOne();
    if (r == null || Boolean.TRUE.equals(r.value2())) {
      return null;
    }
    return "role "
        + r.value3()
        + (Boolean.TRUE.equals(r.value1())
            ? " may not create objects in schema " + schema + " (needs CREATE on that schema)"
            : " may not create schema " + schema + " (needs CREATE on the database)")
        + "; nothing was changed. Run the migration with a role that may, or grant it";
  }

  /** Runs Flyway on each work, {@code parallelism} at a time, each on its own connection. */
  void runAll(List<Work> todo) throws InterruptedException {
    if (todo.isEmpty()) {
      return;
    }
    if (todo.size() == 1 || ctx.parallelism == 1) {
      for (Work w : todo) {
        runOne(w);
      }
      return;
    }
    AtomicInteger thread = new AtomicInteger();
    ExecutorService pool =
        Executors.newFixedThreadPool(
            Math.min(ctx.parallelism, todo.size()),
            r -> {
              Thread t = new Thread(r, "ledger-migrate-" + thread.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (Work w : todo) {
        futures.add(pool.submit(() -> runOne(w)));
      }
      for (Future<?> f : futures) {
        try {
          f.get();
        } catch (ExecutionException e) {
          throw new IllegalStateException("a migration worker failed unexpectedly", e.getCause());
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Makes or migrates one schema: a new domain schema by the {@link SchemaInstaller} when this
   * build's set allows it (one transaction; when the schema turns out to exist already, Flyway runs
   * instead), anything else by one Flyway run. A failure is recorded on the work, never thrown.
   */
  private void runOne(Work w) {
    ctx.listener.schemaStarted(w.schema);
    long t0 = System.nanoTime();
    if (w.kind == SchemaKind.DOMAIN
        && (w.action == Work.Action.CREATE || appliesInOneTransaction(w))
        && install(w)) {
      finish(w, t0);
      return;
    }
    try {
      FluentConfiguration configuration =
          w.kind == SchemaKind.DIRECTORY
              ? LedgerMigrations.directory(ctx.dataSource, ctx.directorySchema)
                  .locations(ctx.sets.directoryLocations().toArray(String[]::new))
              : LedgerMigrations.domain(ctx.dataSource, w.schema)
                  .locations(ctx.sets.domainLocations().toArray(String[]::new));
      if (w.action == Work.Action.ADOPT && w.kind == SchemaKind.DOMAIN) {
        configuration
            .baselineOnMigrate(true)
            .baselineVersion(w.shape.baselineVersion())
            .baselineDescription("adopted " + w.shape.name().toLowerCase(java.util.Locale.ROOT));
      }
      ctx.flywayRuns.incrementAndGet();
      MigrateResult result = configuration.load().migrate();
      w.applied =
          result.migrations.stream()
              .map(m -> m.version)
              .filter(v -> v != null && !v.isEmpty())
              .toList();
      LOG.info("schema {}: applied {}", w.schema, w.applied);
    } catch (FlywayException | DataAccessException e) {
      w.error = "Flyway failed on " + w.schema + ": " + MigrationJob.condense(e.getMessage());
      LOG.warn("schema {} failed: {}", w.schema, w.error);
    } catch (RuntimeException e) {
      w.error =
          "failed on " + w.schema + ": " + MigrationJob.condense(String.valueOf(e.getMessage()));
      LOG.warn("schema {} failed: {}", w.schema, w.error);
    }
    finish(w, t0);
  }

  private void finish(Work w, long t0) {
    w.ran = true;
    w.elapsed = Duration.ofNanos(System.nanoTime() - t0);
    ctx.ran.put(w.schema, w);
    ctx.listener.schemaFinished(w.schema, w.error != null);
  }

  /**
   * Whether a domain schema that is behind may get its pending migrations from the {@link
   * SchemaInstaller}: its Flyway history (read by this run) matches the set's checksums and ends at
   * a version, and what is pending is exactly the set's versions after it (no repeatable, none out
   * of order).
   */
  private boolean appliesInOneTransaction(Work w) {
    if (w.action != Work.Action.MIGRATE
        || w.checksums != ChecksumState.MATCH
        || w.versionBefore == null
        || w.pending.isEmpty()) {
      return false;
    }
    MigrationVersion from = MigrationVersion.fromVersion(w.versionBefore);
    List<String> after =
        ctx.sets.domain(ctx.dataSource).versioned().keySet().stream()
            .filter(v -> MigrationVersion.fromVersion(v).compareTo(from) > 0)
            .toList();
    return after.equals(w.pending);
  }

  /**
   * Makes a new domain schema, or applies a schema's pending migrations, in one transaction.
   *
   * @return true when the work is settled (done, or failed with its error); false when Flyway
   *     should run instead: the set cannot be installed, the new schema exists by now, or the
   *     schema's history moved on since it was read
   */
  private boolean install(Work w) {
    MigrationSets.NewSchemas how = ctx.sets.newSchemas(ctx.dataSource);
    if (how.installer() == null) {
      if (newSchemasReasonLogged.compareAndSet(false, true)) {
        String why =
            "domain schemas were changed by Flyway, not in one transaction each: "
                + how.flywayReason();
        LOG.info(why);
        synchronized (ctx.warnings) {
          ctx.warnings.add(why);
        }
      }
      return false;
    }
    try (Connection connection = ctx.dataSource.getConnection()) {
      w.applied =
          w.action == Work.Action.CREATE
              ? how.installer().install(connection, w.schema)
              : how.installer().migrate(connection, w.schema, w.versionBefore);
      ctx.installs.incrementAndGet();
      LOG.info("schema {}: applied {} in one transaction", w.schema, w.applied);
      return true;
    } catch (SchemaInstaller.StaleHistoryException e) {
      LOG.info("{}; Flyway brings it forward", e.getMessage());
      return false;
    } catch (SchemaInstaller.InstallException e) {
      if ("42P06".equals(e.sqlState())) {
        LOG.info("schema {} exists by now; Flyway brings it forward", w.schema);
        return false;
      }
      w.error = MigrationJob.condense(e.getMessage());
      LOG.warn("schema {} failed: {}", w.schema, w.error);
      return true;
    } catch (SQLException e) {
      w.error =
          "failed on " + w.schema + ": no connection: " + MigrationJob.condense(e.getMessage());
      LOG.warn("schema {} failed: {}", w.schema, w.error);
      return true;
    }
  }
}

package dev.ledger.migrate;

import dev.ledger.schema.RenderMappedDsl;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.jooq.SQLDialect;
import org.jooq.conf.Settings;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultConfiguration;
import org.jooq.impl.DefaultExecuteListenerProvider;

/**
 * One invocation of a {@link MigrationJob}: the job's settings it needs, the jOOQ contexts (with
 * the statement counter), the readers of the catalog, the shared tables and the state table, and
 * what the run learns on its way (warnings, the works it ran, the shared-tables outcome, its
 * counters). Shared by the pieces of a run ({@link SchemaPlanner}, {@link SchemaRunner}, {@link
 * StateRecorder}, {@link RunReporter}, {@link MigrationRun}); holds no logic of its own.
 */
final class RunContext {

  final Operation operation;
  final Instant startedAt;
  final long started;
  final DataSource dataSource;
  final String directorySchema;
  final int parallelism;
  final MigrationListener listener;
  final MigrationSets sets;
  final boolean verifyAll;

  /** Statements the job itself sent (not Flyway's). */
  final AtomicInteger statements = new AtomicInteger();

  final AtomicInteger flywayRuns = new AtomicInteger();
  final AtomicInteger installs = new AtomicInteger();
  final DSLContext plain;
  final RenderMappedDsl mapped;
  final Catalog catalog;
  final SharedTables shared;
  final SchemaStates states;

  /** What the report warns about; synchronized where written from a migration worker. */
  final Set<String> warnings = new LinkedHashSet<>();

  /** The works this run ran, by schema. */
  final Map<String, Work> ran = new ConcurrentHashMap<>();

  /** The shared tables' outcome, when the database has a ledger's shared tables. */
  SharedTablesReport sharedReport;

  /** State rows written by this run. */
  int recorded;

  RunContext(
      Operation operation,
      Instant startedAt,
      long started,
      DataSource dataSource,
      String directorySchema,
      int parallelism,
      MigrationListener listener,
      MigrationSets sets,
      boolean verifyAll,
      List<ExecuteListener> executeListeners) {
    this.operation = operation;
    this.startedAt = startedAt;
    this.started = started;
    this.dataSource = dataSource;
    this.directorySchema = directorySchema;
    this.parallelism = parallelism;
    this.listener = listener;
    this.sets = sets;
    this.verifyAll = verifyAll;
    List<ExecuteListener> listeners = new ArrayList<>();
    listeners.add(
        new ExecuteListener() {
          private static final long serialVersionUID = 1L;

          @Override
          public void executeStart(ExecuteContext ctx) {
            statements.incrementAndGet();
          }
        });
    listeners.addAll(executeListeners);
    DefaultConfiguration configuration = new DefaultConfiguration();
    configuration.set(dataSource);
    configuration.set(SQLDialect.POSTGRES);
    configuration.set(new Settings().withExecuteLogging(false));
    configuration.set(
        listeners.stream()
            .map(DefaultExecuteListenerProvider::new)
            .toArray(DefaultExecuteListenerProvider[]::new));
    this.plain = DSL.using(configuration);
    this.mapped = new RenderMappedDsl(dataSource, directorySchema, listeners);
    this.catalog = new Catalog(plain, mapped, directorySchema, parallelism);
    this.shared = new SharedTables(directorySchema);
    this.states = new SchemaStates(plain, mapped.directory(), directorySchema);
  }
}

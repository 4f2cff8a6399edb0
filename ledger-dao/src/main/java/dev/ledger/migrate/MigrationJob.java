package dev.ledger.migrate;

import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.schema.RenderMappedDsl;
import dev.ledger.schema.SchemaInstaller;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.MigrationVersion;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;
import org.jooq.DSLContext;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.jooq.Field;
import org.jooq.Record3;
import org.jooq.SQLDialect;
import org.jooq.Table;
import org.jooq.conf.Settings;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultConfiguration;
import org.jooq.impl.DefaultExecuteListenerProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The migration job: brings one database's directory schema, then every domain schema its routing
 * table names, to the current version (DESIGN section 5; ports the reference backend's {@code
 * connect}: {@code migrate_shared_tables}, {@code add_promotion_tables}).
 *
 * <pre>{@code
 * MigrationReport report =
 *     MigrationJob.builder()
 *         .dataSource(pool)                       // queries and Flyway runs
 *         .lockConnections(dsn::connect)          // the lock's dedicated connection
 *         .parallelism(4)
 *         .build()
 *         .migrate();
 * if (!report.ok()) { ... report.schemas() names what failed and why ... }
 * }</pre>
 *
 * <p>A run, under a session advisory lock on a dedicated connection ({@link
 * AdvisoryLocks#databaseLockKey(String)} unless set):
 *
 * <ol>
 *   <li>reads what the directory records ({@link SchemaStates}, directory V4's {@code
 *       ledger_schema_state}) in two statements whatever the number of schemas: one catalog probe,
 *       then the routing table joined to the state table. A schema whose row holds this build's
 *       latest version and migration digest ({@link dev.ledger.schema.MigrationDigest}: every
 *       version and Flyway checksum of the set) is taken as current without reading it. When the
 *       directory's own row and every route's match, that is the whole run: two statements, no
 *       Flyway run;
 *   <li>checks the other schemas in full (all of them when the directory's row is missing or
 *       differs, the directory holds tables named {@code tasks} and {@code events}, or {@link
 *       Builder#verifyAll(boolean)} is set): {@link Catalog} reads their catalog fingerprints (one
 *       query) and their Flyway histories ({@code UNION ALL}s of {@value Catalog#HISTORY_BATCH}
 *       schemas) and compares them with what this build expects: Flyway's resolved migrations and
 *       checksums, and the catalog of the generated jOOQ classes;
 *   <li>runs Flyway on the directory schema when it is behind (a directory without history is
 *       baselined at 0);
 *   <li>moves a ledger from before domain schemas (shared {@code tasks}/{@code events}) into one
 *       schema per domain ({@link SharedTablesReport});
 *   <li>runs Flyway on each domain schema that is behind, {@code parallelism} at a time, each run
 *       on its own connection; a schema the reference stack made (no history) is baselined at its
 *       detected shape ({@link AdoptedShape}) first. A domain schema that does not exist yet is
 *       made by the {@link SchemaInstaller} instead, in one transaction (every script, then the
 *       history Flyway would have written), when this build's domain set is the ledger's own
 *       location and every script of it can be installed that way; otherwise Flyway makes it;
 *   <li>reads the state of every schema it ran again and fails any that is not current, checksums
 *       matching, catalog as expected: a half-built schema is never reported as success;
 *   <li>(migrate only) records each schema it checked or ran and found current in {@code
 *       ledger_schema_state}, and deletes the row of each it found failed, so the next run checks
 *       it again.
 * </ol>
 *
 * <p>Trust: like Flyway's history table, a recorded row is believed. A build whose migrations
 * differ in any version or checksum has another digest, so every schema recorded by an earlier
 * build is checked in full once (an edited migration is found there and is fatal for its schema).
 * What the recorded state cannot show is a change made by hand in a schema after it was recorded (a
 * history row edited, an index dropped); {@link Builder#verifyAll(boolean)} ({@code ledger-app
 * migrate --verify}) checks every schema regardless.
 *
 * <p>A schema whose history records an edited migration (checksum differs), a migration this build
 * does not have, or a failed migration is failed with a message naming the migration (and both
 * checksums), never repaired, and the others proceed.
 */
public final class MigrationJob {

  private static final Logger LOG = LoggerFactory.getLogger(MigrationJob.class);
  private static final int MAX_PARALLELISM = 64;
  private static final int MAX_ERROR_CHARS = 2000;

  private final DataSource dataSource;
  private final ConnectionSource lockConnections;
  private final String directorySchema;
  private final int parallelism;
  private final long lockKey;
  private final String lockSubject;
  private final Duration lockTimeout;
  private final MigrationListener listener;
  private final List<ExecuteListener> executeListeners;
  private final MigrationSets sets;
  private final boolean verifyAll;

  private MigrationJob(Builder b) {
    this.dataSource = b.dataSource;
    this.lockConnections =
        b.lockConnections != null ? b.lockConnections : b.dataSource::getConnection;
    this.directorySchema = b.directorySchema;
    this.parallelism = b.parallelism;
    this.lockKey = b.lockKey != null ? b.lockKey : AdvisoryLocks.databaseLockKey(b.directorySchema);
    this.lockSubject = b.lockSubject != null ? b.lockSubject : "directory " + b.directorySchema;
    this.lockTimeout = b.lockTimeout;
    this.listener = b.listener;
    this.executeListeners = List.copyOf(b.executeListeners);
    this.sets = b.sets != null ? b.sets : new MigrationSets(b.extraDomainLocations);
    this.verifyAll = b.verifyAll;
  }

  /**
   * A builder with the defaults: directory schema {@code public}, parallelism 4, lock timeout 10
   * minutes.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Brings the database to the current version, under the job's lock.
   *
   * @return the report; {@link MigrationReport#ok()} is false when some schema failed
   * @throws MigrationException when the database cannot be reached or read ({@link
   *     MigrationException.Reason#DATABASE_UNAVAILABLE}), the lock stays taken ({@link
   *     MigrationException.Reason#LOCK_TIMEOUT}), or the database is reached through a
   *     transaction-mode pooler ({@link MigrationException.Reason#TRANSACTION_POOLER}, nothing
   *     locked)
   */
  public MigrationReport migrate() {
    return run(Operation.MIGRATE);
  }

  /**
   * Says what {@link #migrate()} would apply, per schema, under the same lock, applying nothing.
   *
   * @return the report, schemas with something to do in state {@link SchemaState#PENDING}
   * @throws MigrationException as {@link #migrate()}
   */
  public MigrationReport plan() {
    return run(Operation.PLAN);
  }

  /**
   * Describes each schema's version, pending migrations and checksum state, without the lock.
   *
   * @return the report
   * @throws MigrationException when the database cannot be reached or read
   */
  public MigrationReport status() {
    return run(Operation.STATUS);
  }

  private MigrationReport run(Operation operation) {
    Instant startedAt = Instant.now();
    long started = System.nanoTime();
    SessionLock lock = null;
    try {
      if (operation != Operation.STATUS) {
        lock = SessionLock.acquire(lockConnections, lockKey, lockTimeout, lockSubject);
      } else {
        refuseTransactionPooling();
      }
      MigrationReport report = new Run(operation, startedAt, started).execute();
      LOG.info(
          "{} {}: {} schemas, {} current, {} created, {} migrated, {} adopted, {} pending, {} failed;"
              + " {} checked, {} recorded; {} Flyway runs, {} installs, {} statements, {} ms",
          operation.name().toLowerCase(java.util.Locale.ROOT),
          lockSubject,
          report.counts().schemas(),
          report.counts().current(),
          report.counts().created(),
          report.counts().migrated(),
          report.counts().adopted(),
          report.counts().pending(),
          report.counts().failed(),
          report.counts().checked(),
          report.counts().recorded(),
          report.counts().flywayRuns(),
          report.counts().installs(),
          report.counts().catalogQueries(),
          report.elapsed().toMillis());
      return report;
    } catch (SQLException e) {
      throw unavailable(e.getMessage(), e.getSQLState());
    } catch (DataAccessException e) {
      throw unavailable(e.getMessage(), e.sqlState());
    } catch (FlywayException e) {
      throw new MigrationException(
          MigrationException.Reason.INVALID_MIGRATIONS,
          "the migrations of this build could not be resolved: "
              + condense(e.getMessage())
              + " (fix the scripts or the --domain-location given)",
          null);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new MigrationException(
          MigrationException.Reason.DATABASE_UNAVAILABLE, "interrupted while migrating", null);
    } finally {
      if (lock != null) {
        try {
          lock.close();
        } catch (SQLException | DataAccessException e) {
          LOG.warn("could not release the lock of {} (closed with its connection)", lockSubject);
        }
      }
    }
  }

  /**
   * What {@link SessionLock#acquire} checks before it locks, for {@link #status()}, which takes no
   * lock: a connection through a transaction-mode pooler is refused there too (its Flyway reads
   * would fail on pgjdbc's prepared statements with the pooler's other clients).
   */
  private void refuseTransactionPooling() throws SQLException {
    try (Connection c = lockConnections.open()) {
      c.setAutoCommit(true);
      int pid = Poolers.backendPid(c);
      if (pid != Poolers.announcedPid(c)) {
        Poolers.refuseTransactionPooling(c, pid, lockConnections, lockSubject);
      }
    } catch (SQLException | DataAccessException e) {
      if (Poolers.preparedStatementCollision(e)) {
        throw Poolers.refusal(lockSubject);
      }
      throw e;
    }
  }

  /**
   * Checks extra domain locations as {@link Builder#build()} does, for a caller that names them
   * otherwise (a command-line flag) and wants them checked before it opens a database.
   *
   * @param locations the locations, e.g. {@code classpath:db/extra}, {@code
   *     filesystem:/opt/ledger/extra}
   * @param field how the caller's input names them, e.g. {@code --domain-location}
   * @throws IllegalArgumentException naming the field and the location, when one is blank or a
   *     {@code classpath:} or {@code filesystem:} location is no existing folder
   */
  public static void checkDomainLocations(List<String> locations, String field) {
    MigrationSets.checkExtraLocations(locations, field);
  }

  private MigrationException unavailable(String message, String sqlState) {
    return new MigrationException(
        MigrationException.Reason.DATABASE_UNAVAILABLE,
        "database of " + lockSubject + " unreachable or unusable: " + condense(message),
        sqlState);
  }

  /**
   * An error text on one line: blank and ruler lines dropped, the rest joined by {@code ; }, cut to
   * 2,000 characters.
   *
   * @param message a message (Flyway's span several lines), may be null
   * @return the condensed text
   */
  static String condense(String message) {
    if (message == null) {
      return "(no message)";
    }
    StringBuilder out = new StringBuilder();
    for (String line : message.split("\\R")) {
      String t = line.strip().replaceAll("\\s+", " ");
      if (t.isEmpty() || t.chars().allMatch(ch -> ch == '-')) {
        continue;
      }
      if (out.length() > 0) {
        out.append("; ");
      }
      out.append(t);
    }
    return out.length() > MAX_ERROR_CHARS
        ? out.substring(0, MAX_ERROR_CHARS) + "..."
        : out.toString();
  }

  /** One invocation's state. */
  private final class Run {

    private final Operation operation;
    private final Instant startedAt;
    private final long started;
    private final AtomicInteger statements = new AtomicInteger();
    private final AtomicInteger flywayRuns = new AtomicInteger();
    private final AtomicInteger installs = new AtomicInteger();
    private final AtomicBoolean newSchemasReasonLogged = new AtomicBoolean();
    private final DSLContext plain;
    private final RenderMappedDsl mapped;
    private final Catalog catalog;
    private final SharedTables shared;
    private final SchemaStates states;
    private final Set<String> warnings = new LinkedHashSet<>();
    private final Map<String, Work> ran = new ConcurrentHashMap<>();
    private SharedTablesReport sharedReport;
    private int recorded;

    /** The rows of ledger_schema_state read at the start, by schema (unquoted). */
    private final Map<String, SchemaStates.Row> rows = new HashMap<>();

    Run(Operation operation, Instant startedAt, long started) {
      this.operation = operation;
      this.startedAt = startedAt;
      this.started = started;
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

    MigrationReport execute() throws SQLException, InterruptedException {
      MigrationSet directorySet = sets.directory(dataSource);
      MigrationSet domainSet = sets.domain(dataSource);
      SchemaStates.Probe probe = states.probe();
      SchemaStates.Recorded recorded = probe.stateTable() ? states.read() : null;
      if (recorded != null) {
        remember(recorded);
      }
      Trusted trusted =
          verifyAll || recorded == null || probe.sharedTables()
              ? null
              : trusted(recorded, directorySet, domainSet);
      Observation first;
      if (trusted == null) {
        first = observe(directorySet, domainSet, null);
      } else if (trusted.stale().isEmpty()) {
        first = trusted.with(trusted.directory(), List.of());
      } else {
        Observation scoped = observe(directorySet, domainSet, trusted.stale());
        first = trusted.with(scoped.directory(), scoped.domains());
      }
      if (operation != Operation.MIGRATE) {
        if (first.census() != null) {
          sharedReport = sharedReport(first.census(), false, null);
        }
        listener.started(operation, 0);
        return report(first);
      }
      int planned =
          (first.directory().action.runs() ? 1 : 0)
              + (int) first.domains().stream().filter(w -> w.action.runs()).count()
              + (int) first.moveTargets().stream().filter(w -> w.action.runs()).count();
      listener.started(operation, planned);

      Work directory = first.directory();
      boolean changed = false;
      if (directory.action.runs()) {
        String refused = mayNotCreateIn(directorySchema);
        if (refused != null) {
          // fail at once: Flyway would retry creating its history table for 10 s first
          directory.error = refused;
          directory.ran = true;
          ran.put(directory.schema, directory);
        } else {
          runOne(directory);
        }
        changed = true;
      }
      if (first.census() != null) {
        if (directory.error != null) {
          sharedReport =
              sharedReport(
                  first.census(),
                  false,
                  "not moved: the directory schema " + directorySchema + " failed to migrate");
        } else {
          moveShared(first);
          changed = true;
        }
      }
      Observation current = changed ? observe(directorySet, domainSet, null) : first;
      List<Work> todo =
          current.domains().stream()
              .filter(w -> w.action.runs() && !ran.containsKey(w.schema))
              .toList();
      runAll(todo);
      verify(directorySet, domainSet);
      record(current, directorySet, domainSet);
      return report(current);
    }

    /**
     * The common no-op path: what the directory's {@code ledger_schema_state} says (read in two
     * statements, {@link SchemaStates#probe} and {@link SchemaStates#read}, whatever the number of
     * schemas). A route whose row matches this build's set (latest version and digest) and whose
     * schema exists is taken as current; the others are stale and get the full check.
     *
     * @param recorded what the state table holds
     * @return what the record says; null when every schema must be checked because the directory's
     *     own row is missing or differs
     */
    private Trusted trusted(
        SchemaStates.Recorded recorded, MigrationSet directorySet, MigrationSet domainSet) {
      if (recorded.directory() == null || !recorded.directory().matches(directorySet)) {
        return null;
      }
      List<Work> known = new ArrayList<>();
      Map<String, String> stale = new TreeMap<>();
      for (SchemaStates.Row row : recorded.routes()) {
        String schema = routedSchema(row.domain(), row.stored(), known);
        if (schema == null) {
          continue;
        }
        if (row.matches(domainSet)) {
          known.add(fromRecord(schema, row.domain(), SchemaKind.DOMAIN, row));
        } else {
          stale.put(schema, row.domain());
        }
      }
      return new Trusted(
          fromRecord(directorySchema, null, SchemaKind.DIRECTORY, recorded.directory()),
          known,
          stale);
    }

    /** Keeps the rows read, by schema (routes that name no domain schema left out). */
    private void remember(SchemaStates.Recorded recorded) {
      if (recorded.directory() != null) {
        rows.put(directorySchema, recorded.directory());
      }
      for (SchemaStates.Row row : recorded.routes()) {
        if (row.version() == null) {
          continue;
        }
        try {
          rows.put(DomainSchemas.unquote(row.stored()), row);
        } catch (IllegalStateException e) {
          // refused when the routes are read: no schema of this name is ever recorded
        }
      }
    }

    /** A schema taken as current from its recorded row: nothing read, nothing to do. */
    private Work fromRecord(String schema, String domain, SchemaKind kind, SchemaStates.Row row) {
      Work w = new Work(schema, domain, kind);
      w.versionBefore = row.version();
      w.versionAfter = row.version();
      w.checksums = ChecksumState.MATCH;
      w.extras = row.extras();
      return w;
    }

    /**
     * Checks a route: the bare schema name, or null after adding a failed work for a route whose
     * stored schema is no domain schema name; warns when the schema is not the naming rule's.
     */
    private String routedSchema(String domain, String stored, List<Work> refused) {
      try {
        String schema = DomainSchemas.unquote(stored);
        if (!schema.equals(DomainSchemas.schemaName(domain))) {
          warnings.add(
              "domain "
                  + domain
                  + " is routed to "
                  + schema
                  + ", not to "
                  + DomainSchemas.schemaName(domain)
                  + " as the naming rule says; its routed schema is migrated");
        }
        return schema;
      } catch (IllegalStateException | IllegalArgumentException e) {
        Work bad = new Work(stored, domain, SchemaKind.DOMAIN);
        bad.action = Work.Action.FAIL;
        bad.error = e.getMessage() + "; the routing row of domain " + domain;
        refused.add(bad);
        return null;
      }
    }

    /**
     * Writes what a migrate found: a state row for each schema this run checked (or ran) and found
     * current with this build's set, and deletes the rows that say current with this build's set of
     * schemas it found failed. When the directory itself is not current, only its own row is
     * deleted (the state table may be missing, or another build's).
     */
    private void record(Observation o, MigrationSet directorySet, MigrationSet domainSet) {
      Work directory = ran.getOrDefault(directorySchema, o.directory());
      boolean sharedOk = sharedReport == null || sharedReport.error() == null;
      boolean directoryOk = settled(directory, directorySet);
      if (!directoryOk || !sharedOk) {
        if (directory.checked && saysCurrent(directorySchema, directorySet)) {
          states.forget(List.of(directorySchema), SchemaStates.DIRECTORY, directorySet);
        }
        if (!directoryOk) {
          LOG.info("directory {} is not current: no schema state recorded", directorySchema);
          return;
        }
      }
      List<SchemaStates.Entry> entries = new ArrayList<>();
      List<String> failedDomains = new ArrayList<>();
      if (directory.checked && sharedOk && !recordedAs(directorySchema, directorySet, directory)) {
        entries.add(
            new SchemaStates.Entry(
                directorySchema,
                SchemaStates.DIRECTORY,
                directorySet.latest(),
                directorySet.digest(),
                directory.extras));
      }
      for (Work w : settledDomains(o).values()) {
        if (!w.checked) {
          continue;
        }
        if (settled(w, domainSet)) {
          if (!recordedAs(w.schema, domainSet, w)) {
            entries.add(
                new SchemaStates.Entry(
                    w.schema,
                    SchemaStates.DOMAIN,
                    domainSet.latest(),
                    domainSet.digest(),
                    w.extras));
          }
        } else if (saysCurrent(w.schema, domainSet)) {
          failedDomains.add(w.schema);
        }
      }
      if (!entries.isEmpty()) {
        recorded += states.record(entries, Instant.now());
      }
      if (!failedDomains.isEmpty()) {
        states.forget(failedDomains, SchemaStates.DOMAIN, domainSet);
      }
    }

    /** Whether the row read at the start says the schema is current with the set. */
    private boolean saysCurrent(String schema, MigrationSet set) {
      SchemaStates.Row row = rows.get(schema);
      return row != null && row.matches(set);
    }

    /** Whether the row read at the start already says what a work found (no write needed). */
    private boolean recordedAs(String schema, MigrationSet set, Work w) {
      SchemaStates.Row row = rows.get(schema);
      return row != null && row.matches(set) && row.extras().equals(w.extras);
    }

    /** Whether a checked schema ended current with a set: what its state row may then say. */
    private boolean settled(Work w, MigrationSet set) {
      return w.error == null
          && w.action != Work.Action.FAIL
          && (w.action == Work.Action.NONE || w.ran)
          && w.pending.isEmpty()
          && w.checksums == ChecksumState.MATCH
          && set.latest() != null
          && set.latest().equals(w.versionAfter);
    }

    /** Moves the shared tables: makes each domain's schema, then the one data transaction. */
    private void moveShared(Observation observation) throws InterruptedException {
      SharedTables.Census census = observation.census();
      List<Work> targets = observation.moveTargets().stream().filter(w -> w.action.runs()).toList();
      runAll(targets);
      List<String> failed =
          observation.moveTargets().stream()
              .filter(w -> w.error != null || w.action == Work.Action.FAIL)
              .map(w -> w.schema)
              .toList();
      if (!failed.isEmpty()) {
        sharedReport =
            sharedReport(census, false, "not moved: schemas " + failed + " could not be made");
        return;
      }
      try {
        boolean moved = shared.move(dataSource, plain, mapped, census);
        sharedReport = sharedReport(census, moved, null);
        if (!moved) {
          warnings.add("another run moved the shared tables first; nothing was moved by this run");
        } else {
          LOG.info(
              "moved {} domains from {}.tasks/events into their schemas",
              census.domains().size(),
              directorySchema);
        }
      } catch (SharedTables.MoveRefusedException e) {
        sharedReport = sharedReport(census, false, e.getMessage());
      } catch (SQLException | DataAccessException e) {
        sharedReport =
            sharedReport(
                census, false, "the move failed and was rolled back: " + condense(e.getMessage()));
      }
    }

    private SharedTablesReport sharedReport(
        SharedTables.Census census, boolean moved, String error) {
      return new SharedTablesReport(
          moved,
          census.domains(),
          directorySchema + "." + SharedTables.TASKS_KEPT,
          directorySchema + "." + SharedTables.EVENTS_KEPT,
          census.orphanEvents(),
          error);
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
                      DSL.function(
                          "has_schema_privilege", Boolean.class, oid, DSL.inline("CREATE")))
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
          plain.select(exists, DSL.coalesce(onSchema, onDatabase), DSL.currentUser()).fetchOne();
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
    private void runAll(List<Work> todo) throws InterruptedException {
      if (todo.isEmpty()) {
        return;
      }
      if (todo.size() == 1 || parallelism == 1) {
        for (Work w : todo) {
          runOne(w);
        }
        return;
      }
      AtomicInteger thread = new AtomicInteger();
      ExecutorService pool =
          Executors.newFixedThreadPool(
              Math.min(parallelism, todo.size()),
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
     * build's set allows it (one transaction; when the schema turns out to exist already, Flyway
     * runs instead), anything else by one Flyway run. A failure is recorded on the work, never
     * thrown.
     */
    private void runOne(Work w) {
      listener.schemaStarted(w.schema);
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
                ? LedgerMigrations.directory(dataSource, directorySchema)
                    .locations(sets.directoryLocations().toArray(String[]::new))
                : LedgerMigrations.domain(dataSource, w.schema)
                    .locations(sets.domainLocations().toArray(String[]::new));
        if (w.action == Work.Action.ADOPT && w.kind == SchemaKind.DOMAIN) {
          configuration
              .baselineOnMigrate(true)
              .baselineVersion(w.shape.baselineVersion())
              .baselineDescription("adopted " + w.shape.name().toLowerCase(java.util.Locale.ROOT));
        }
        flywayRuns.incrementAndGet();
        MigrateResult result = configuration.load().migrate();
        w.applied =
            result.migrations.stream()
                .map(m -> m.version)
                .filter(v -> v != null && !v.isEmpty())
                .toList();
        LOG.info("schema {}: applied {}", w.schema, w.applied);
      } catch (FlywayException | DataAccessException e) {
        w.error = "Flyway failed on " + w.schema + ": " + condense(e.getMessage());
        LOG.warn("schema {} failed: {}", w.schema, w.error);
      } catch (RuntimeException e) {
        w.error = "failed on " + w.schema + ": " + condense(String.valueOf(e.getMessage()));
        LOG.warn("schema {} failed: {}", w.schema, w.error);
      }
      finish(w, t0);
    }

    private void finish(Work w, long t0) {
      w.ran = true;
      w.elapsed = Duration.ofNanos(System.nanoTime() - t0);
      ran.put(w.schema, w);
      listener.schemaFinished(w.schema, w.error != null);
    }

    /**
     * Whether a domain schema that is behind may get its pending migrations from the {@link
     * SchemaInstaller}: its Flyway history (read by this run) matches the set's checksums and ends
     * at a version, and what is pending is exactly the set's versions after it (no repeatable, none
     * out of order).
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
          sets.domain(dataSource).versioned().keySet().stream()
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
      MigrationSets.NewSchemas how = sets.newSchemas(dataSource);
      if (how.installer() == null) {
        if (newSchemasReasonLogged.compareAndSet(false, true)) {
          String why =
              "domain schemas were changed by Flyway, not in one transaction each: "
                  + how.flywayReason();
          LOG.info(why);
          synchronized (warnings) {
            warnings.add(why);
          }
        }
        return false;
      }
      try (Connection connection = dataSource.getConnection()) {
        w.applied =
            w.action == Work.Action.CREATE
                ? how.installer().install(connection, w.schema)
                : how.installer().migrate(connection, w.schema, w.versionBefore);
        installs.incrementAndGet();
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
        w.error = condense(e.getMessage());
        LOG.warn("schema {} failed: {}", w.schema, w.error);
        return true;
      } catch (SQLException e) {
        w.error = "failed on " + w.schema + ": no connection: " + condense(e.getMessage());
        LOG.warn("schema {} failed: {}", w.schema, w.error);
        return true;
      }
    }

    /**
     * Reads every schema the job ran again and fails those not current, checksums matching and
     * catalog as expected.
     */
    private void verify(MigrationSet directorySet, MigrationSet domainSet) {
      if (ran.isEmpty()) {
        return;
      }
      Map<String, String> scope = new LinkedHashMap<>();
      for (Work w : ran.values()) {
        if (w.kind == SchemaKind.DOMAIN) {
          scope.put(w.schema, w.domain);
        }
      }
      Observation check = observe(directorySet, domainSet, scope);
      Map<String, Work> bySchema = new HashMap<>();
      bySchema.put(directorySchema, check.directory());
      check.domains().forEach(w -> bySchema.put(w.schema, w));
      for (Work w : ran.values()) {
        Work v = bySchema.get(w.schema);
        if (v == null) {
          w.error = w.error != null ? w.error : "after migrating, schema " + w.schema + " is gone";
          continue;
        }
        w.versionAfter = v.versionBefore;
        w.checksums = v.checksums;
        w.pending = v.pending;
        w.extras = v.extras;
        if (w.error == null && v.action != Work.Action.NONE) {
          w.error =
              "after migrating, "
                  + (v.error != null
                      ? v.error
                      : "schema "
                          + w.schema
                          + " is not at the current version (still pending: "
                          + v.pending
                          + ")");
        }
        if (w.error == null) {
          w.pending = List.of();
        }
      }
    }

    /**
     * Reads the state of the directory schema and of the domain schemas in scope and decides what
     * each needs.
     *
     * @param scope the domain schemas to look at (schema to domain), or null for every routed one
     *     (and, with shared tables, the schemas they would move to)
     */
    private Observation observe(
        MigrationSet directorySet, MigrationSet domainSet, Map<String, String> scope) {
      Map<String, Catalog.Fingerprint> prints =
          catalog.fingerprints(scope == null ? null : scope.keySet());
      Catalog.Fingerprint directoryPrint = prints.get(directorySchema);
      List<Work> refused = new ArrayList<>();
      Map<String, String> domains = new TreeMap<>();
      SharedTables.Census census = null;
      Map<String, Set<String>> details = new HashMap<>();
      Map<String, String> targets = new TreeMap<>();
      if (scope != null) {
        domains.putAll(scope);
      } else if (directoryPrint != null) {
        if (directoryPrint.tables().contains("ledger_domains")) {
          for (Catalog.Route route : catalog.routes()) {
            String schema = routedSchema(route.domain(), route.stored(), refused);
            if (schema != null) {
              domains.put(schema, route.domain());
            }
          }
        }
        if (directoryPrint.tables().contains(SharedTables.TASKS)
            && directoryPrint.tables().contains(SharedTables.EVENTS)) {
          details.putAll(catalog.details(List.of(directorySchema)));
          if (SharedTables.shapeMatches(details.getOrDefault(directorySchema, Set.of()))) {
            census = shared.census(plain, details.get(directorySchema));
            for (SharedTablesReport.MovedDomain d : census.domains()) {
              if (!domains.containsKey(d.schema())) {
                targets.put(d.schema(), d.domain());
              }
            }
          } else {
            warnings.add(
                directorySchema
                    + ".tasks and "
                    + directorySchema
                    + ".events exist but are not a ledger's (their columns differ from the"
                    + " reference's); left alone");
          }
        }
      }
      Map<String, String> historyTables = new LinkedHashMap<>();
      if (directoryPrint != null
          && directoryPrint.tables().contains(LedgerMigrations.DIRECTORY_HISTORY)) {
        historyTables.put(directorySchema, LedgerMigrations.DIRECTORY_HISTORY);
      }
      Set<String> domainSchemas = new HashSet<>(domains.keySet());
      domainSchemas.addAll(targets.keySet());
      for (String schema : domainSchemas) {
        Catalog.Fingerprint p = prints.get(schema);
        if (p != null && p.tables().contains(LedgerMigrations.DOMAIN_HISTORY)) {
          historyTables.put(schema, LedgerMigrations.DOMAIN_HISTORY);
        }
      }
      Map<String, List<Catalog.HistoryRow>> histories =
          historyTables.isEmpty() ? Map.of() : catalog.histories(historyTables);

      Set<String> needDetails = new HashSet<>();
      decide(directorySet, domainSet, prints, histories, details, domains, targets, needDetails);
      needDetails.removeAll(details.keySet());
      if (!needDetails.isEmpty()) {
        details.putAll(catalog.details(needDetails));
        for (String schema : needDetails) {
          details.putIfAbsent(schema, Set.of());
        }
      }
      Observation o =
          decide(
              directorySet,
              domainSet,
              prints,
              histories,
              details,
              domains,
              targets,
              new HashSet<>());
      List<Work> all = new ArrayList<>(o.domains());
      all.addAll(refused);
      all.sort(Comparator.comparing(w -> w.schema));
      return new Observation(o.directory(), all, census, o.moveTargets());
    }

    private Observation decide(
        MigrationSet directorySet,
        MigrationSet domainSet,
        Map<String, Catalog.Fingerprint> prints,
        Map<String, List<Catalog.HistoryRow>> histories,
        Map<String, Set<String>> details,
        Map<String, String> domains,
        Map<String, String> targets,
        Set<String> needDetails) {
      Work directory =
          Analysis.analyze(
              SchemaKind.DIRECTORY,
              directorySchema,
              null,
              prints.get(directorySchema),
              histories.get(directorySchema),
              details.get(directorySchema),
              directorySet,
              needDetails);
      List<Work> works = new ArrayList<>();
      domains.forEach(
          (schema, domain) ->
              works.add(
                  Analysis.analyze(
                      SchemaKind.DOMAIN,
                      schema,
                      domain,
                      prints.get(schema),
                      histories.get(schema),
                      details.get(schema),
                      domainSet,
                      needDetails)));
      List<Work> moveTargets = new ArrayList<>();
      targets.forEach(
          (schema, domain) ->
              moveTargets.add(
                  Analysis.analyze(
                      SchemaKind.DOMAIN,
                      schema,
                      domain,
                      prints.get(schema),
                      histories.get(schema),
                      details.get(schema),
                      domainSet,
                      needDetails)));
      return new Observation(directory, works, null, moveTargets);
    }

    /**
     * The domain schemas' works at the end of a run, by schema: those observed, each replaced by
     * the work that ran it, and the schemas the run made that were not observed.
     */
    private Map<String, Work> settledDomains(Observation observation) {
      Map<String, Work> domains = new TreeMap<>();
      for (Work w : observation.domains()) {
        domains.put(w.schema, ran.getOrDefault(w.schema, w));
      }
      // plan, or a move that failed: the schemas the move makes or would make
      for (Work w : observation.moveTargets()) {
        domains.putIfAbsent(w.schema, ran.getOrDefault(w.schema, w));
      }
      for (Work w : ran.values()) {
        if (w.kind == SchemaKind.DOMAIN) {
          domains.putIfAbsent(w.schema, w);
        }
      }
      return domains;
    }

    private MigrationReport report(Observation observation) {
      Work directory = ran.getOrDefault(directorySchema, observation.directory());
      Map<String, Work> domains = settledDomains(observation);
      int checked = directory.checked ? 1 : 0;
      for (Work w : domains.values()) {
        checked += w.checked ? 1 : 0;
      }
      List<SchemaReport> domainReports =
          domains.values().stream().map(w -> w.report(operation)).toList();
      SchemaReport directoryReport = directory.report(operation);
      int[] byState = new int[SchemaState.values().length];
      int applied = 0;
      List<SchemaReport> all = new ArrayList<>();
      all.add(directoryReport);
      all.addAll(domainReports);
      for (SchemaReport r : all) {
        byState[r.state().ordinal()]++;
        applied += r.applied().size();
      }
      int failed = byState[SchemaState.FAILED.ordinal()] + byState[SchemaState.FOREIGN.ordinal()];
      boolean ok = failed == 0 && (sharedReport == null || sharedReport.error() == null);
      return new MigrationReport(
          operation,
          directorySchema,
          startedAt,
          Duration.ofNanos(System.nanoTime() - started),
          ok,
          directoryReport,
          domainReports,
          sharedReport,
          List.copyOf(warnings),
          new MigrationReport.Counts(
              all.size(),
              byState[SchemaState.CURRENT.ordinal()],
              byState[SchemaState.CREATED.ordinal()],
              byState[SchemaState.MIGRATED.ordinal()],
              byState[SchemaState.ADOPTED.ordinal()],
              byState[SchemaState.PENDING.ordinal()],
              failed,
              applied,
              checked,
              recorded,
              flywayRuns.get(),
              installs.get(),
              statements.get()));
    }
  }

  /**
   * What one reading of the database found.
   *
   * @param directory the directory schema's decision
   * @param domains the routed domain schemas' decisions, by schema
   * @param census the shared tables' content, when the database has a ledger's shared tables
   * @param moveTargets the schemas the shared tables would move to that are not routed yet
   */
  private record Observation(
      Work directory, List<Work> domains, SharedTables.Census census, List<Work> moveTargets) {}

  /**
   * What the directory's state table says, when the job may trust it.
   *
   * @param directory the directory, current by its row
   * @param known the domain schemas current by their rows, and the routes refused outright
   * @param stale the routed schemas whose row is missing or differs, schema to domain: these get
   *     the full check
   */
  private record Trusted(Work directory, List<Work> known, Map<String, String> stale) {

    /**
     * The observation: the known works plus the checked ones.
     *
     * @param directory the directory's work (the recorded one, or a checked one)
     * @param checked the works of the stale schemas
     */
    Observation with(Work directory, List<Work> checked) {
      List<Work> all = new ArrayList<>(known);
      all.addAll(checked);
      all.sort(Comparator.comparing(w -> w.schema));
      return new Observation(directory, all, null, List.of());
    }
  }

  /** Builds a {@link MigrationJob}; validates in {@link #build()}. */
  public static final class Builder {

    private DataSource dataSource;
    private ConnectionSource lockConnections;
    private String directorySchema = "public";
    private int parallelism = 4;
    private Long lockKey;
    private String lockSubject;
    private Duration lockTimeout = Duration.ofMinutes(10);
    private List<String> extraDomainLocations = List.of();
    private MigrationListener listener = new MigrationListener() {};
    private List<ExecuteListener> executeListeners = List.of();
    private MigrationSets sets;
    private boolean verifyAll;

    private Builder() {}

    /**
     * The database (required): catalog reads, the shared-tables move, and each Flyway run take a
     * connection from it; give it at least {@code parallelism + 1} connections.
     *
     * @param dataSource the data source
     * @return this builder
     */
    public Builder dataSource(DataSource dataSource) {
      this.dataSource = dataSource;
      return this;
    }

    /**
     * Where the lock's dedicated connection comes from. Default: the data source (pass a non-pooled
     * source, e.g. {@link Dsn#connect()}, so the connection is never a pool's).
     *
     * @param lockConnections the source
     * @return this builder
     */
    public Builder lockConnections(ConnectionSource lockConnections) {
      this.lockConnections = lockConnections;
      return this;
    }

    /**
     * The directory schema (routing tables). Default {@code public}.
     *
     * @param directorySchema unquoted, 1 to 63 bytes, not a domain schema name
     * @return this builder
     */
    public Builder directorySchema(String directorySchema) {
      this.directorySchema = directorySchema;
      return this;
    }

    /**
     * How many domain schemas are migrated at once, each on its own connection. Default 4.
     *
     * @param parallelism 1 to 64
     * @return this builder
     */
    public Builder parallelism(int parallelism) {
      this.parallelism = parallelism;
      return this;
    }

    /**
     * The advisory-lock key of migrate and plan runs. Default {@link
     * AdvisoryLocks#databaseLockKey(String)} of the directory schema; the fleet uses {@link
     * AdvisoryLocks#tenantLockKey(String)}.
     *
     * @param lockKey the key
     * @param subject what the lock protects, for messages (e.g. {@code tenant acme}); no
     *     credentials
     * @return this builder
     */
    public Builder lock(long lockKey, String subject) {
      this.lockKey = lockKey;
      this.lockSubject = subject;
      return this;
    }

    /**
     * How long to keep trying to take the lock. Default 10 minutes.
     *
     * @param lockTimeout positive
     * @return this builder
     */
    public Builder lockTimeout(Duration lockTimeout) {
      this.lockTimeout = lockTimeout;
      return this;
    }

    /**
     * Flyway locations whose migrations join the domain set (e.g. a deployment's own indexes).
     *
     * @param locations e.g. {@code classpath:db/extra}, {@code filesystem:/opt/ledger/extra}
     * @return this builder
     */
    public Builder extraDomainLocations(List<String> locations) {
      this.extraDomainLocations = List.copyOf(locations);
      return this;
    }

    /**
     * Hears progress. Default: nothing.
     *
     * @param listener thread-safe
     * @return this builder
     */
    public Builder listener(MigrationListener listener) {
      this.listener = listener;
      return this;
    }

    /**
     * jOOQ listeners added to every statement the job itself sends (not Flyway's), e.g. to count
     * them.
     *
     * @param listeners the listeners
     * @return this builder
     */
    public Builder executeListeners(List<ExecuteListener> listeners) {
      this.executeListeners = List.copyOf(listeners);
      return this;
    }

    /**
     * Whether to check every schema in full, whatever the directory's {@code ledger_schema_state}
     * records: each schema's catalog fingerprint and Flyway history are read and compared with this
     * build (one catalog query, plus one history read per {@value Catalog#HISTORY_BATCH} schemas),
     * as before the state table existed. Finds what was changed by hand in the database since a
     * schema was recorded (an edited history row, a dropped index), which the recorded state cannot
     * show; a migrate then records what it found (and forgets the rows of schemas it failed).
     * Default false: a schema whose recorded version and migration digest match this build's is
     * taken as current without reading it.
     *
     * @param verifyAll true for the full check of every schema
     * @return this builder
     */
    public Builder verifyAll(boolean verifyAll) {
      this.verifyAll = verifyAll;
      return this;
    }

    /** A fleet's shared resolution of the migration sets. */
    Builder sets(MigrationSets sets) {
      this.sets = sets;
      return this;
    }

    /**
     * Checks the settings and builds the job.
     *
     * @return the job, immutable
     * @throws IllegalArgumentException naming the setting and what is allowed, when one is not
     */
    public MigrationJob build() {
      if (dataSource == null) {
        throw new IllegalArgumentException("dataSource: required");
      }
      if (directorySchema == null
          || directorySchema.isEmpty()
          || directorySchema.getBytes(StandardCharsets.UTF_8).length > 63
          || directorySchema.indexOf('\0') >= 0) {
        throw new IllegalArgumentException(
            "directorySchema: must be 1 to 63 bytes without NUL, was "
                + (directorySchema == null ? "null" : "'" + directorySchema + "'"));
      }
      if (DomainSchemas.isDomainSchemaName(directorySchema)) {
        throw new IllegalArgumentException(
            "directorySchema: '"
                + directorySchema
                + "' is named like a domain schema; choose another");
      }
      if (parallelism < 1 || parallelism > MAX_PARALLELISM) {
        throw new IllegalArgumentException(
            "parallelism: must be between 1 and " + MAX_PARALLELISM + ", was " + parallelism);
      }
      if (lockTimeout == null || lockTimeout.isNegative() || lockTimeout.isZero()) {
        throw new IllegalArgumentException("lockTimeout: must be positive, was " + lockTimeout);
      }
      MigrationSets.checkExtraLocations(extraDomainLocations, "extraDomainLocations");
      if (listener == null) {
        throw new IllegalArgumentException("listener: must not be null");
      }
      return new MigrationJob(this);
    }
  }
}

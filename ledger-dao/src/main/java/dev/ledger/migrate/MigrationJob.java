package dev.ledger.migrate;

import dev.ledger.schema.DomainSchemas;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import javax.sql.DataSource;
import org.flywaydb.core.api.FlywayException;
import org.jooq.ExecuteListener;
import org.jooq.exception.DataAccessException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The migration job: brings one database's directory schema, then every domain schema its routing
 * table names, to the current version (docs/migration-job.md; ports the reference backend's {@code
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
 *       made by the {@link dev.ledger.schema.SchemaInstaller} instead, in one transaction (every
 *       script, then the history Flyway would have written), when this build's domain set is the
 *       ledger's own location and every script of it can be installed that way; otherwise Flyway
 *       makes it;
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
    JobLock lock = null;
    try {
      lock = JobLock.take(operation, lockConnections, lockKey, lockTimeout, lockSubject);
      RunContext context =
          new RunContext(
              operation,
              startedAt,
              started,
              dataSource,
              directorySchema,
              parallelism,
              listener,
              sets,
              verifyAll,
              executeListeners);
      MigrationReport report = new MigrationRun(context).execute();
      RunReporter.log(report, lockSubject);
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
        lock.close();
      }
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

package dev.ledger.kernel;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_DOMAINS;
import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_SCHEMA_STATE;
import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;

import dev.ledger.LedgerException;
import dev.ledger.LedgerStorageException;
import dev.ledger.SchemaVersionException;
import dev.ledger.migrate.AdvisoryLocks;
import dev.ledger.migrate.Provisioning;
import dev.ledger.migrate.RuntimeAdoption;
import dev.ledger.migrate.SessionLock;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.schema.MigrationDigest;
import dev.ledger.schema.RenderMappedDsl;
import dev.ledger.schema.SchemaInstaller;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationVersion;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routing: which schema a domain's or a task's rows live in, read from the directory's routing
 * tables and cached per domain; and provisioning, the making of a domain's schema the first time it
 * is used (ports the reference's {@code schema}, {@code schema_of_task_in}, {@code ensure_domain}).
 * Each domain schema's version is checked once per process, the first time the domain is routed.
 */
public final class Directory {

  private static final Logger LOG = LoggerFactory.getLogger(Directory.class);
  private static final MigrationVersion DOMAIN_VERSION =
      MigrationVersion.fromVersion(LedgerMigrations.DOMAIN_VERSION);
  private static final MigrationVersion DIRECTORY_VERSION =
      MigrationVersion.fromVersion(LedgerMigrations.DIRECTORY_VERSION);

  /** How long {@link #ensure} waits for another holder of a domain's provisioning lock. */
  public static final Duration PROVISION_WAIT = Duration.ofMinutes(2);

  private static final RenderedStatement.Slot<String> ROUTE_ID =
      RenderedStatement.Slot.of("id", LEDGER_TASKS.ID.getDataType());

  /** {@code ledger_schema_state.kind} of a domain schema. */
  private static final String STATE_KIND_DOMAIN = "domain";

  /** {@code ledger_schema_state.recorded_by} of a schema made at run time. */
  private static final String STATE_RECORDED_BY = "provision";

  private static final long RETRY_MIN_MS = 20;
  private static final long RETRY_MAX_MS = 80;

  private final DataSource dataSource;
  private final RenderMappedDsl dsl;
  private final RenderedStatement.Cache statements;
  private final boolean runtimeDdl;

  /** The domain set for provisioning; null until first needed. */
  private volatile Optional<Provisioning> provisioning;

  /**
   * Domains this ledger provisioned inside a caller's transaction, by the id of that transaction
   * ({@code txid_current()}), until a lookup sees it ended: their routes are not cached before.
   */
  private final Map<String, Long> pending = new ConcurrentHashMap<>();

  /** Domains whose schema is known to exist at the current version, and the bare schema name. */
  private final Map<String, String> known = new ConcurrentHashMap<>();

  /**
   * Creates the router.
   *
   * @param dataSource the database
   * @param dsl the render-mapped contexts
   * @param statements the ledger's rendered statements, shared with it
   * @param runtimeDdl whether schemas may be made or migrated at run time
   */
  public Directory(
      DataSource dataSource,
      RenderMappedDsl dsl,
      RenderedStatement.Cache statements,
      boolean runtimeDdl) {
    this.dataSource = dataSource;
    this.statements = statements;
    this.dsl = dsl;
    this.runtimeDdl = runtimeDdl;
  }

  /**
   * Checks the directory schema and, when runtime DDL is allowed, migrates it.
   *
   * @throws SchemaVersionException when the directory is missing or behind and runtime DDL is
   *     forbidden, is ahead of this code, or still holds a reference-stack ledger's shared tables
   */
  public void checkDirectory() {
    String schema = dsl.directorySchema();
    DSLContext ctx = dsl.directory();
    if (hasSharedTables(ctx, schema)) {
      throw new SchemaVersionException(
          schema,
          null,
          LedgerMigrations.DIRECTORY_VERSION,
          "schema "
              + schema
              + " holds a reference-stack ledger from before domain schemas (shared tasks and"
              + " events tables): run `ledger-app migrate` to adopt it before using the ledger");
    }
    Optional<MigrationVersion> found =
        latestVersion(ctx, schema, LedgerMigrations.DIRECTORY_HISTORY);
    if (found.isPresent() && found.get().compareTo(DIRECTORY_VERSION) > 0) {
      throw ahead(schema, found.get(), DIRECTORY_VERSION);
    }
    if (found.isEmpty() || found.get().compareTo(DIRECTORY_VERSION) < 0) {
      if (!runtimeDdl) {
        throw behind(schema, found.orElse(null), DIRECTORY_VERSION);
      }
      migrateDirectoryLocked(schema);
    }
  }

  /**
   * Migrates the directory schema holding its migration lock ({@link
   * AdvisoryLocks#directoryMigrationKey}), so processes opening a fresh database at once make it
   * once: the first migrates, the others wait and find it current.
   */
  private void migrateDirectoryLocked(String schema) {
    try (SessionLock lock =
        SessionLock.acquire(
            dataSource::getConnection,
            AdvisoryLocks.directoryMigrationKey(schema),
            PROVISION_WAIT,
            "the directory schema " + schema)) {
      LedgerMigrations.migrateDirectory(dataSource, schema);
    } catch (SQLException e) {
      throw new LedgerStorageException("open", e.getSQLState(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LedgerException("open: interrupted while waiting to migrate " + schema, e);
    }
  }

  /**
   * The schema of a domain that has one, checked against this code's version.
   *
   * @param domain the domain
   * @return its bare schema name, or empty when the domain has none
   * @throws SchemaVersionException when the schema is ahead, or behind and runtime DDL is forbidden
   */
  public Optional<String> schemaOf(String domain) {
    return schemaOf(dsl.directory(), domain, false);
  }

  /**
   * The schema of a domain that has one, read on a given context (a transaction's, so the lookup
   * runs on its connection), checked against this code's version.
   *
   * <p>A route is cached unless a caller's transaction this ledger provisioned the domain in has
   * not been seen committed ({@link #provisionWithin}): a route read inside that transaction may
   * still be rolled back.
   *
   * @param ctx a context for the directory's tables, e.g. {@code Tx.directory()}
   * @param domain the domain
   * @param callersTransaction true when {@code ctx} is on a caller's transaction: a schema behind
   *     this code is then refused rather than migrated (Flyway would commit the caller's work)
   * @return its bare schema name, or empty when the domain has none
   * @throws SchemaVersionException when the schema is ahead, or behind and runtime DDL is forbidden
   *     or the lookup is in a caller's transaction
   */
  public Optional<String> schemaOf(DSLContext ctx, String domain, boolean callersTransaction) {
    String cached = known.get(domain);
    if (cached != null) {
      return Optional.of(cached);
    }
    String stored =
        ctx.select(LEDGER_DOMAINS.SCHEMA)
            .from(LEDGER_DOMAINS)
            .where(LEDGER_DOMAINS.DOMAIN.eq(domain))
            .fetchOne(LEDGER_DOMAINS.SCHEMA);
    if (stored == null) {
      return Optional.empty();
    }
    String schema = DomainSchemas.unquote(stored);
    checkDomainSchema(ctx, schema, callersTransaction);
    if (seenCommitted(ctx, domain)) {
      known.put(domain, schema);
    }
    return Optional.of(schema);
  }

  /**
   * The schema of the domain a task belongs to.
   *
   * @param id the task id
   * @return the bare schema name, or empty when no task has the id
   */
  public Optional<String> schemaOfTask(String id) {
    return schemaOfTask(dsl.directory(), id, false);
  }

  /**
   * The schema of the domain a task belongs to, read on a given context (a transaction's).
   *
   * @param ctx a context for the directory's tables, e.g. {@code Tx.directory()}
   * @param id the task id
   * @param callersTransaction true when {@code ctx} is on a caller's transaction, see {@link
   *     #schemaOf(DSLContext, String, boolean)}
   * @return the bare schema name, or empty when no task has the id
   */
  public Optional<String> schemaOfTask(DSLContext ctx, String id, boolean callersTransaction) {
    String domain =
        statements
            .get(
                ctx,
                "route of task",
                () ->
                    DSL.select(LEDGER_TASKS.DOMAIN)
                        .from(LEDGER_TASKS)
                        .where(LEDGER_TASKS.ID.eq(ROUTE_ID.field())),
                List.of(ROUTE_ID))
            .fetch(ctx, new Field<?>[] {LEDGER_TASKS.DOMAIN}, id)
            .stream()
            .findFirst()
            .map(r -> r.get(LEDGER_TASKS.DOMAIN))
            .orElse(null);
    return domain == null ? Optional.empty() : schemaOf(ctx, domain, callersTransaction);
  }

  /** PostgreSQL's {@code insufficient_privilege}. */
  private static final String INSUFFICIENT_PRIVILEGE = "42501";

  /**
   * The error of runtime DDL under a role that may not create the domain's schema: says what to do
   * instead, naming the domain, and keeps the database's error as the cause.
   */
  private static SchemaVersionException noPrivilege(
      String schema, String domain, org.jooq.exception.DataAccessException cause) {
    SchemaVersionException e =
        new SchemaVersionException(
            schema,
            null,
            LedgerMigrations.DOMAIN_VERSION,
            "domain '"
                + domain
                + "' has no schema, and this ledger's database role may not create one"
                + " (permission denied, SQLState 42501): provision it ahead with `ledger-app"
                + " migrate --provision '"
                + domain.replace("'", "'\\''")
                + "'` as a role that may (or grant this role CREATE on the database), and open the"
                + " ledger with runtimeDdl(false) so that it never tries");
    e.initCause(cause);
    return e;
  }

  /**
   * The refusal to make a domain's schema in a ledger opened with {@code runtimeDdl(false)} (its
   * {@code provision} included: such a ledger never runs DDL): says how to make it instead, naming
   * the domain.
   */
  private static SchemaVersionException noRuntimeDdl(String schema, String domain) {
    return new SchemaVersionException(
        schema,
        null,
        LedgerMigrations.DOMAIN_VERSION,
        "domain '"
            + domain
            + "' has no schema, and this ledger was opened with runtimeDdl(false), so it runs no"
            + " DDL: run `ledger-app migrate --provision '"
            + domain.replace("'", "'\\''")
            + "'` with a role that may, or call provision on a ledger opened with runtimeDdl(true)"
            + " (the default)");
  }

  /**
   * The schema of a domain, made first when the domain has none (ports {@code ensure_domain}):
   * under the domain's advisory lock (the reference's key, {@code hashtext('ledger_domain:' ||
   * domain)}), the routing table is read again, the schema is migrated with Flyway and the route
   * inserted, so two processes filing a domain's first task make one schema and one route. The new
   * schema's row of {@code ledger_schema_state} is written with the route (its version and
   * migration digest, when its history is exactly this build's migrations), so the next migration
   * job takes it as current without reading it.
   *
   * <p>The lock is only tried ({@code pg_try_advisory_xact_lock}); while another thread or process
   * holds it, this one gives its connection back to the pool, waits {@value #RETRY_MIN_MS} to
   * {@value #RETRY_MAX_MS} ms and looks again (Flyway's {@code PostgreSQLAdvisoryLockTemplate} does
   * the same). Waiting inside {@code pg_advisory_xact_lock} instead would hold one pooled
   * connection per waiting thread while the holder needs more of them for Flyway: with enough
   * threads filing a new domain's first task at once, the pool runs dry and provisioning fails on a
   * connection timeout.
   *
   * @param domain the domain, already validated
   * @return the bare schema name
   * @throws SchemaVersionException when the domain has no schema and runtime DDL is forbidden
   * @throws LedgerException when another holder kept the domain's lock for {@link #PROVISION_WAIT},
   *     or the thread was interrupted while waiting
   */
  public String ensure(String domain) {
    Optional<String> existing = schemaOf(domain);
    if (existing.isPresent()) {
      return existing.get();
    }
    String schema = DomainSchemas.schemaName(domain);
    if (!runtimeDdl) {
      throw noRuntimeDdl(schema, domain);
    }
    long deadline = System.nanoTime() + PROVISION_WAIT.toNanos();
    while (true) {
      boolean locked;
      try {
        locked =
            dsl.directory()
                .transactionResult(
                    cfg -> {
                      DSLContext tx = cfg.dsl();
                      if (!tryLockDomain(tx, domain)) {
                        return false;
                      }
                      boolean routed =
                          tx.fetchExists(
                              DSL.selectOne()
                                  .from(LEDGER_DOMAINS)
                                  .where(LEDGER_DOMAINS.DOMAIN.eq(domain)));
                      if (!routed) {
                        provisionSchema(tx, domain, schema);
                      }
                      return true;
                    });
      } catch (org.jooq.exception.DataAccessException e) {
        if (INSUFFICIENT_PRIVILEGE.equals(e.sqlState())) {
          throw noPrivilege(schema, domain, e);
        }
        throw e;
      }
      if (locked) {
        break;
      }
      Optional<String> madeByOther = schemaOf(domain);
      if (madeByOther.isPresent()) {
        return madeByOther.get();
      }
      if (System.nanoTime() - deadline > 0) {
        throw new LedgerException(
            "domain '"
                + domain
                + "': another session has held its provisioning lock for over "
                + PROVISION_WAIT.toSeconds()
                + " s; check for a stuck migration (pg_locks, advisory locks) and try again");
      }
      try {
        Thread.sleep(ThreadLocalRandom.current().nextLong(RETRY_MIN_MS, RETRY_MAX_MS + 1));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new LedgerException(
            "domain '" + domain + "': interrupted while waiting to provision it", e);
      }
    }
    return schemaOf(domain)
        .orElseThrow(() -> new IllegalStateException("route of domain vanished: " + domain));
  }

  /**
   * Makes a new domain's schema and inserts its route and state row, in the provisioning
   * transaction. The schema is installed in that same transaction ({@link Provisioning}: every
   * script and the Flyway history, in one transaction with the route), so a failure anywhere leaves
   * neither schema nor route. Flyway makes it instead, on its own connections before the route is
   * inserted, when the set cannot be installed that way or a schema of that name exists already
   * (made by hand, or by a run that left no route).
   */
  private void provisionSchema(DSLContext tx, String domain, String schema) {
    Optional<Provisioning> provisioning = provisioning();
    boolean exists =
        tx.fetchExists(
            DSL.selectOne()
                .from(DSL.table(DSL.name("pg_catalog", "pg_namespace")))
                .where(DSL.field(DSL.name("nspname"), String.class).eq(schema)));
    if (provisioning.isPresent() && !exists) {
      LOG.info("provisioning schema {} for a new domain (one transaction)", schema);
      tx.connection(
          c -> {
            try {
              provisioning.get().installWithin(c, schema);
            } catch (SchemaInstaller.InstallException e) {
              throw new org.jooq.exception.DataAccessException(e.getMessage(), e);
            }
          });
      insertRoute(tx, domain);
      writeState(tx, schema, provisioning.get().latest(), provisioning.get().digest());
      return;
    }
    if (exists) {
      refuseForeign(tx, domain, schema);
    }
    LOG.info("provisioning schema {} for a new domain (Flyway)", schema);
    Flyway flyway = LedgerMigrations.domain(dataSource, schema).load();
    flyway.migrate();
    insertRoute(tx, domain);
    recordState(tx, schema, flyway);
  }

  /**
   * Refuses a schema of a new domain's name that holds tables but no ledger history and is not the
   * reference stack's ({@code events} and {@code tasks}): Flyway would stop there with a hint to
   * baseline it, which would adopt a schema that is not a ledger's.
   *
   * @throws dev.ledger.ForeignSchemaException naming the schema, the domain and the tables
   */
  private static void refuseForeign(DSLContext tx, String domain, String schema) {
    List<String> tables =
        tx.select(DSL.field(DSL.name("tablename"), String.class))
            .from(DSL.table(DSL.name("pg_catalog", "pg_tables")))
            .where(DSL.field(DSL.name("schemaname"), String.class).eq(schema))
            .fetch(0, String.class);
    if (!tables.isEmpty()
        && !tables.contains(LedgerMigrations.DOMAIN_HISTORY)
        && !(tables.contains("events") && tables.contains("tasks"))) {
      throw new dev.ledger.ForeignSchemaException(schema, domain, tables);
    }
  }

  /**
   * The schema of a domain, made first inside a caller's transaction when the domain has none: the
   * domain's advisory lock is taken and held until the caller's transaction ends ({@code
   * pg_advisory_xact_lock(hashtext('ledger_domain:' || domain))}, waiting for another provisioner
   * of the domain), the route is read again, and the schema is installed, routed and recorded in
   * that transaction ({@link Provisioning}), so the caller's rollback removes it all. Other
   * sessions provisioning or locking the same domain (a first filing, a promotion, a scrub) wait
   * for the caller's commit or rollback.
   *
   * @param ctx a context for the directory's tables on the caller's transaction
   * @param domain the domain, already validated
   * @return the bare schema name
   * @throws SchemaVersionException when the domain has no schema and runtime DDL is off, or its
   *     schema cannot be made in one transaction (the domain set needs Flyway, or a schema of that
   *     name exists without a route): the message says to provision the domain ahead
   */
  public String provisionWithin(DSLContext ctx, String domain) {
    Optional<String> existing = schemaOf(ctx, domain, true);
    if (existing.isPresent()) {
      return existing.get();
    }
    String schema = DomainSchemas.schemaName(domain);
    if (!runtimeDdl) {
      throw noRuntimeDdl(schema, domain);
    }
    lockDomain(ctx, domain);
    existing = schemaOf(ctx, domain, true);
    if (existing.isPresent()) {
      return existing.get();
    }
    Optional<Provisioning> p = provisioning;
    boolean exists =
        ctx.fetchExists(
            DSL.selectOne()
                .from(DSL.table(DSL.name("pg_catalog", "pg_namespace")))
                .where(DSL.field(DSL.name("nspname"), String.class).eq(schema)));
    if (p == null || p.isEmpty() || exists) {
      throw new SchemaVersionException(
          schema,
          null,
          LedgerMigrations.DOMAIN_VERSION,
          "domain '"
              + domain
              + "' has no schema, and it cannot be made inside the caller's transaction ("
              + (exists
                  ? "a schema " + schema + " exists without a route"
                  : "its migrations need Flyway")
              + "): provision it ahead with Ledger.provision(domain) or `ledger-app migrate"
              + " --provision <domain>`, or file its first task outside a transaction");
    }
    LOG.info("provisioning schema {} for a new domain in the caller's transaction", schema);
    ctx.connection(
        c -> {
          try {
            p.get().installWithin(c, schema);
          } catch (SchemaInstaller.InstallException e) {
            org.jooq.exception.DataAccessException failure =
                new org.jooq.exception.DataAccessException(e.getMessage(), e);
            if (INSUFFICIENT_PRIVILEGE.equals(failure.sqlState())) {
              throw noPrivilege(schema, domain, failure);
            }
            throw failure;
          }
        });
    insertRoute(ctx, domain);
    writeState(ctx, schema, p.get().latest(), p.get().digest());
    pending.put(domain, ctx.fetchValue(DSL.field("txid_current()", Long.class)).longValue());
    return schema;
  }

  /**
   * Resolves the domain set for provisioning now (when runtime DDL is allowed), so that a first
   * filing inside a caller's transaction never runs Flyway on the caller's connection. Call once,
   * outside any transaction, when the ledger opens.
   */
  public void prepareProvisioning() {
    if (runtimeDdl) {
      provisioning();
    }
  }

  /**
   * Whether a route read now may be cached: unless this ledger provisioned the domain in a caller's
   * transaction that is still in progress ({@code txid_status}).
   */
  private boolean seenCommitted(DSLContext ctx, String domain) {
    Long txid = pending.get(domain);
    if (txid == null) {
      return true;
    }
    String status =
        ctx.fetchValue(DSL.field("txid_status({0})", String.class, DSL.val(txid.longValue())));
    if ("in progress".equals(status)) {
      return false;
    }
    pending.remove(domain, txid);
    return true;
  }

  private static void insertRoute(DSLContext tx, String domain) {
    tx.insertInto(LEDGER_DOMAINS)
        .set(LEDGER_DOMAINS.DOMAIN, domain)
        .set(LEDGER_DOMAINS.SCHEMA, DomainSchemas.quotedSchemaName(domain))
        .execute();
  }

  /**
   * The ledger's domain set for provisioning, resolved on first use and kept (empty when Flyway
   * makes new schemas).
   */
  private Optional<Provisioning> provisioning() {
    Optional<Provisioning> p = provisioning;
    if (p == null) {
      synchronized (this) {
        if (provisioning == null) {
          provisioning = Provisioning.resolve(dataSource);
        }
        p = provisioning;
      }
    }
    return p;
  }

  /**
   * Records a schema this ledger has just made in the directory's {@code ledger_schema_state}, as
   * the migration job would after checking it, so the next {@code ledger-app migrate} takes it as
   * current without reading it. Only when its history holds exactly the migrations Flyway resolved
   * ({@link MigrationDigest#ofCompleteHistory}); otherwise nothing is recorded and the job checks
   * the schema in full.
   *
   * @param tx the provisioning transaction (the route is inserted in it)
   * @param schema the schema just migrated, bare
   * @param flyway the Flyway that migrated it
   */
  private static void recordState(DSLContext tx, String schema, Flyway flyway) {
    Optional<MigrationDigest.Applied> applied =
        MigrationDigest.ofCompleteHistory(flyway.info().all());
    if (applied.isEmpty()) {
      LOG.info("schema {}: history is not exactly this build's migrations; not recorded", schema);
      return;
    }
    writeState(tx, schema, applied.get().version(), applied.get().digest());
  }

  /** Inserts or replaces a domain schema's state row: its version and migration digest. */
  private static void writeState(DSLContext tx, String schema, String version, String digest) {
    tx.insertInto(LEDGER_SCHEMA_STATE)
        .set(LEDGER_SCHEMA_STATE.SCHEMA_NAME, schema)
        .set(LEDGER_SCHEMA_STATE.KIND, STATE_KIND_DOMAIN)
        .set(LEDGER_SCHEMA_STATE.VERSION, version)
        .set(LEDGER_SCHEMA_STATE.MIGRATIONS_DIGEST, digest)
        .set(LEDGER_SCHEMA_STATE.CATALOG_EXTRAS, new String[0])
        .set(LEDGER_SCHEMA_STATE.RECORDED_BY, STATE_RECORDED_BY)
        .set(LEDGER_SCHEMA_STATE.RECORDED_AT, Instant.now())
        .onConflict(LEDGER_SCHEMA_STATE.SCHEMA_NAME)
        .doUpdate()
        .set(LEDGER_SCHEMA_STATE.KIND, STATE_KIND_DOMAIN)
        .set(LEDGER_SCHEMA_STATE.VERSION, version)
        .set(LEDGER_SCHEMA_STATE.MIGRATIONS_DIGEST, digest)
        .set(LEDGER_SCHEMA_STATE.CATALOG_EXTRAS, new String[0])
        .set(LEDGER_SCHEMA_STATE.RECORDED_BY, STATE_RECORDED_BY)
        .set(LEDGER_SCHEMA_STATE.RECORDED_AT, Instant.now())
        .execute();
  }

  /**
   * Takes a domain's transaction-scoped advisory lock, the reference's {@code lock_domain}, waiting
   * for it as long as another transaction holds it.
   *
   * @param tx a context inside a transaction
   * @param domain the domain
   */
  public static void lockDomain(DSLContext tx, String domain) {
    tx.select(DSL.function("pg_advisory_xact_lock", Object.class, domainLockKey(domain))).fetch();
  }

  /**
   * Tries to take a domain's transaction-scoped advisory lock (the key of {@link #lockDomain}),
   * without waiting.
   *
   * @param tx a context inside a transaction
   * @param domain the domain
   * @return true when this transaction holds the lock now
   */
  public static boolean tryLockDomain(DSLContext tx, String domain) {
    return tx.select(
            DSL.function("pg_try_advisory_xact_lock", Boolean.class, domainLockKey(domain)))
        .fetchSingle()
        .value1();
  }

  private static Field<Integer> domainLockKey(String domain) {
    return DSL.function(
        "hashtext", Integer.class, DSL.inline("ledger_domain:").concat(DSL.val(domain)));
  }

  /** Forgets what is cached about domains (after a replay or a migration by another process). */
  public void forget() {
    known.clear();
  }

  private void checkDomainSchema(DSLContext ctx, String schema, boolean callersTransaction) {
    Optional<MigrationVersion> found = latestVersion(ctx, schema, LedgerMigrations.DOMAIN_HISTORY);
    if (found.isPresent() && found.get().compareTo(DOMAIN_VERSION) > 0) {
      throw ahead(schema, found.get(), DOMAIN_VERSION);
    }
    if (found.isEmpty() || found.get().compareTo(DOMAIN_VERSION) < 0) {
      if (!runtimeDdl) {
        throw behind(schema, found.orElse(null), DOMAIN_VERSION);
      }
      if (callersTransaction) {
        String what =
            found.isEmpty()
                ? " has no migration history (a schema the reference stack made)"
                : " is at version " + found.get();
        throw new SchemaVersionException(
            schema,
            found.map(MigrationVersion::getVersion).orElse(null),
            DOMAIN_VERSION.getVersion(),
            "schema "
                + schema
                + what
                + ", this code needs version "
                + DOMAIN_VERSION
                + ", and it cannot be migrated inside the caller's transaction: run `ledger-app"
                + " migrate`, or make one ledger call on the domain outside a transaction");
      }
      if (found.isEmpty()) {
        // no history at all: a schema the reference stack made (its ensure_domain), adopted here
        // as the migration job would adopt it
        RuntimeAdoption.adopt(dataSource, dsl.directorySchema(), schema, PROVISION_WAIT);
      }
      LedgerMigrations.migrateDomain(dataSource, schema);
    }
  }

  private static boolean hasSharedTables(DSLContext ctx, String schema) {
    return ctx.fetchExists(
        DSL.selectOne()
            .from(DSL.table(DSL.name("information_schema", "columns")))
            .where(DSL.field(DSL.name("table_schema"), String.class).eq(schema))
            .and(DSL.field(DSL.name("table_name"), String.class).eq("tasks"))
            .and(DSL.field(DSL.name("column_name"), String.class).eq("domain")));
  }

  /**
   * The latest successfully applied version in a Flyway history table.
   *
   * @param ctx any context
   * @param schema the schema, bare
   * @param table the history table
   * @return the version, or empty when the table is missing or holds no version
   */
  public static Optional<MigrationVersion> latestVersion(
      DSLContext ctx, String schema, String table) {
    boolean exists =
        ctx.fetchValue(
                DSL.field(
                    "to_regclass({0}) is not null",
                    Boolean.class, DSL.val(DSL.name(schema, table).toString())))
            .booleanValue();
    if (!exists) {
      return Optional.empty();
    }
    Field<String> version = DSL.field(DSL.name("version"), String.class);
    return ctx
        .select(version)
        .from(DSL.table(DSL.name(schema, table)))
        .where(DSL.field(DSL.name("success"), Boolean.class).isTrue())
        .and(version.isNotNull())
        .fetch(version)
        .stream()
        .map(MigrationVersion::fromVersion)
        .max(MigrationVersion::compareTo);
  }

  private static SchemaVersionException behind(
      String schema, MigrationVersion found, MigrationVersion expected) {
    return new SchemaVersionException(
        schema,
        found == null ? null : found.getVersion(),
        expected.getVersion(),
        "schema "
            + schema
            + (found == null ? " has no migration history" : " is at version " + found)
            + ", this code needs version "
            + expected
            + ": run `ledger-app migrate`");
  }

  private static SchemaVersionException ahead(
      String schema, MigrationVersion found, MigrationVersion expected) {
    return new SchemaVersionException(
        schema,
        found.getVersion(),
        expected.getVersion(),
        "schema "
            + schema
            + " is at version "
            + found
            + ", newer than this code's "
            + expected
            + ": upgrade ledger-dao");
  }
}

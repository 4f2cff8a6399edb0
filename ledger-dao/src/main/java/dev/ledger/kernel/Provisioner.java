package dev.ledger.kernel;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_DOMAINS;
import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_SCHEMA_STATE;

import dev.ledger.LedgerException;
import dev.ledger.SchemaVersionException;
import dev.ledger.codegen.db.ledger_directory.tables.records.LedgerSchemaStateRecord;
import dev.ledger.migrate.Provisioning;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.schema.MigrationDigest;
import dev.ledger.schema.RenderMappedDsl;
import dev.ledger.schema.SchemaInstaller;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Provisioning: the making of a domain's schema the first time it is used (ports the reference's
 * {@code ensure_domain}), in a transaction of its own ({@link #ensure}) or inside a caller's
 * ({@link #provisionWithin}), under the domain's lock ({@link DomainLock}), with its route and its
 * row of {@code ledger_schema_state}. Reads routes through the {@link Directory} it serves.
 * Thread-safe.
 */
final class Provisioner {

  private static final Logger LOG = LoggerFactory.getLogger(Provisioner.class);

  /** {@code ledger_schema_state.kind} of a domain schema. */
  private static final String STATE_KIND_DOMAIN = "domain";

  /** {@code ledger_schema_state.recorded_by} of a schema made at run time. */
  private static final String STATE_RECORDED_BY = "provision";

  private static final long RETRY_MIN_MS = 20;
  private static final long RETRY_MAX_MS = 80;

  /** PostgreSQL's {@code insufficient_privilege}. */
  private static final String INSUFFICIENT_PRIVILEGE = "42501";

  private final DataSource dataSource;
  private final Duration wait;
  private final RenderMappedDsl dsl;
  private final boolean runtimeDdl;
  private final Directory routes;

  /** The domain set for provisioning; null until first needed. */
  private volatile Optional<Provisioning> provisioning;

  Provisioner(
      DataSource dataSource,
      RenderMappedDsl dsl,
      boolean runtimeDdl,
      Directory routes,
      Duration wait) {
    this.wait = wait;
    this.dataSource = dataSource;
    this.dsl = dsl;
    this.runtimeDdl = runtimeDdl;
    this.routes = routes;
  }

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
   * holds it, this one gives its connection back to the pool, waits 20 to 80 ms and looks again
   * (Flyway's {@code PostgreSQLAdvisoryLockTemplate} does the same). Waiting inside {@code
   * pg_advisory_xact_lock} instead would hold one pooled connection per waiting thread while the
   * holder needs more of them for Flyway: with enough threads filing a new domain's first task at
   * once, the pool runs dry and provisioning fails on a connection timeout.
   *
   * @param domain the domain, already validated
   * @return the bare schema name
   * @throws SchemaVersionException when the domain has no schema and runtime DDL is forbidden
   * @throws dev.ledger.LedgerTimeoutException ({@code LOCK}) when another session kept the domain's
   *     lock for longer than the lock bound
   * @throws LedgerException when the thread was interrupted while waiting
   */
  String ensure(String domain) {
    Optional<String> existing = routes.schemaOf(domain);
    if (existing.isPresent()) {
      return existing.get();
    }
    String schema = DomainSchemas.schemaName(domain);
    if (!runtimeDdl) {
      throw noRuntimeDdl(schema, domain);
    }
    long deadline = System.nanoTime() + wait.toNanos();
    while (true) {
      boolean locked;
      try {
        locked =
            dsl.directory()
                .transactionResult(
                    cfg -> {
                      DSLContext ctx = cfg.dsl();
                      if (!DomainLock.tryLock(ctx, domain)) {
                        return false;
                      }
                      boolean routed =
                          ctx.fetchExists(
                              DSL.selectOne()
                                  .from(LEDGER_DOMAINS)
                                  .where(LEDGER_DOMAINS.DOMAIN.eq(domain)));
                      if (!routed) {
                        provisionSchema(ctx, domain, schema);
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
      Optional<String> madeByOther = routes.schemaOf(domain);
      if (madeByOther.isPresent()) {
        return madeByOther.get();
      }
      if (System.nanoTime() - deadline > 0) {
        // another session holds the domain's lock (provisioning it, a replay, the reference
        // stack): the same bound as any lock wait
        throw new dev.ledger.LedgerTimeoutException(
            "provision domain '" + domain + "'",
            dev.ledger.LedgerTimeoutException.Bound.LOCK,
            wait,
            "55P03",
            null,
            false);
      }
      try {
        Thread.sleep(ThreadLocalRandom.current().nextLong(RETRY_MIN_MS, RETRY_MAX_MS + 1));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new LedgerException(
            "domain '" + domain + "': interrupted while waiting to provision it", e);
      }
    }
    return routes
        .schemaOf(domain)
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
  private void provisionSchema(DSLContext ctx, String domain, String schema) {
    Optional<Provisioning> provisioning = provisioning();
    boolean exists = schemaExists(ctx, schema);
    if (provisioning.isPresent() && !exists) {
      LOG.info("provisioning schema {} for a new domain (one transaction)", schema);
      installRouted(ctx, provisioning.get(), domain, schema);
      return;
    }
    if (exists) {
      refuseForeign(ctx, domain, schema);
    }
    LOG.info("provisioning schema {} for a new domain (Flyway)", schema);
    Flyway flyway = LedgerMigrations.domain(dataSource, schema).load();
    flyway.migrate();
    if (Citus.installed(ctx)) {
      // Flyway made the schema on its own connections: local when the database does not turn
      // schema-based sharding on (docs/scale-out.md), distributed here with its triggers
      Citus.distribute(ctx, schema);
    }
    insertRoute(ctx, domain);
    recordState(ctx, schema, flyway);
  }

  /**
   * Refuses a schema of a new domain's name that holds tables but no ledger history and is not the
   * reference stack's ({@code events} and {@code tasks}): Flyway would stop there with a hint to
   * baseline it, which would adopt a schema that is not a ledger's.
   *
   * @throws dev.ledger.ForeignSchemaException naming the schema, the domain and the tables
   */
  private static void refuseForeign(DSLContext ctx, String domain, String schema) {
    List<String> tables =
        ctx.select(DSL.field(DSL.name("tablename"), String.class))
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
  String provisionWithin(DSLContext ctx, String domain) {
    Optional<String> existing = routes.schemaOf(ctx, domain, true);
    if (existing.isPresent()) {
      return existing.get();
    }
    String schema = DomainSchemas.schemaName(domain);
    if (!runtimeDdl) {
      throw noRuntimeDdl(schema, domain);
    }
    DomainLock.lock(ctx, domain);
    existing = routes.schemaOf(ctx, domain, true);
    if (existing.isPresent()) {
      return existing.get();
    }
    Optional<Provisioning> p = provisioning;
    boolean exists = schemaExists(ctx, schema);
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
    installRouted(ctx, p.get(), domain, schema);
    routes.provisionedIn(
        domain, ctx.fetchValue(DSL.field("txid_current()", Long.class)).longValue());
    return schema;
  }

  /**
   * Resolves the domain set for provisioning now (when runtime DDL is allowed), so that a first
   * filing inside a caller's transaction never runs Flyway on the caller's connection. Call once,
   * outside any transaction, when the ledger opens.
   */
  void prepareProvisioning() {
    if (runtimeDdl) {
      provisioning();
    }
  }

  private static boolean schemaExists(DSLContext ctx, String schema) {
    return ctx.fetchExists(
        DSL.selectOne()
            .from(DSL.table(DSL.name("pg_catalog", "pg_namespace")))
            .where(DSL.field(DSL.name("nspname"), String.class).eq(schema)));
  }

  /**
   * Installs a new domain's schema in the provisioning transaction ({@link Provisioning}: every
   * script and the Flyway history) and inserts its route and state row there too.
   *
   * @throws SchemaVersionException when the role may not create the schema ({@link #noPrivilege})
   */
  private static void installRouted(
      DSLContext ctx, Provisioning provisioning, String domain, String schema) {
    boolean citus = Citus.installed(ctx);
    if (citus) {
      Citus.keepLocal(ctx);
    }
    ctx.connection(
        c -> {
          try {
            provisioning.installWithin(c, schema);
          } catch (SchemaInstaller.InstallException e) {
            org.jooq.exception.DataAccessException failure =
                new org.jooq.exception.DataAccessException(e.getMessage(), e);
            if (INSUFFICIENT_PRIVILEGE.equals(failure.sqlState())) {
              throw noPrivilege(schema, domain, failure);
            }
            throw failure;
          }
        });
    if (citus) {
      Citus.distribute(ctx, schema);
    }
    insertRoute(ctx, domain);
    writeState(ctx, schema, provisioning.latest(), provisioning.digest());
  }

  private static void insertRoute(DSLContext ctx, String domain) {
    ctx.insertInto(LEDGER_DOMAINS)
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
   * @param ctx the provisioning transaction (the route is inserted in it)
   * @param schema the schema just migrated, bare
   * @param flyway the Flyway that migrated it
   */
  private static void recordState(DSLContext ctx, String schema, Flyway flyway) {
    Optional<MigrationDigest.Applied> applied =
        MigrationDigest.ofCompleteHistory(flyway.info().all());
    if (applied.isEmpty()) {
      LOG.info("schema {}: history is not exactly this build's migrations; not recorded", schema);
      return;
    }
    writeState(ctx, schema, applied.get().version(), applied.get().digest());
  }

  /** Inserts or replaces a domain schema's state row: its version and migration digest. */
  private static void writeState(DSLContext ctx, String schema, String version, String digest) {
    LedgerSchemaStateRecord row =
        new LedgerSchemaStateRecord()
            .setSchemaName(schema)
            .setKind(STATE_KIND_DOMAIN)
            .setVersion(version)
            .setMigrationsDigest(digest)
            .setCatalogExtras(new String[0])
            .setRecordedBy(STATE_RECORDED_BY)
            .setRecordedAt(Instant.now());
    ctx.insertInto(LEDGER_SCHEMA_STATE)
        .set(row)
        .onConflict(LEDGER_SCHEMA_STATE.SCHEMA_NAME)
        .doUpdate()
        .set(row)
        .execute();
  }
}

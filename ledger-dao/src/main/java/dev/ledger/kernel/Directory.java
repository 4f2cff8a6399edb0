package dev.ledger.kernel;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_DOMAINS;
import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;

import dev.ledger.LedgerException;
import dev.ledger.SchemaVersionException;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.RenderMappedDsl;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;

/**
 * Routing: which schema a domain's or a task's rows live in, read from the directory's routing
 * tables and cached per domain (ports the reference's {@code schema} and {@code
 * schema_of_task_in}). Each domain schema's version is checked once per process, the first time the
 * domain is routed ({@link SchemaVersions}); a domain with no schema is made by the {@link
 * Provisioner} ({@link #ensure}, {@link #provisionWithin}); the domain lock is {@link DomainLock}.
 * Thread-safe.
 */
public final class Directory {

  /**
   * How long the ledger's own schema checks wait for another holder of a domain's lock while they
   * adopt or migrate a schema at run time ({@link SchemaVersions}); a first filing waits the lock
   * bound instead.
   */
  public static final Duration PROVISION_WAIT = Duration.ofMinutes(2);

  private static final RenderedStatement.Slot<String> ROUTE_ID =
      RenderedStatement.Slot.of("id", LEDGER_TASKS.ID.getDataType());

  private final RenderMappedDsl dsl;
  private final RenderedStatement.Cache statements;
  private final SchemaVersions versions;
  private final Provisioner provisioner;

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
   * @param provisionWait how long a first filing waits for another session provisioning the same
   *     domain (the ledger's lock bound)
   */
  public Directory(
      DataSource dataSource,
      RenderMappedDsl dsl,
      RenderedStatement.Cache statements,
      boolean runtimeDdl,
      Duration provisionWait) {
    this.statements = statements;
    this.dsl = dsl;
    this.versions = new SchemaVersions(dataSource, dsl, runtimeDdl);
    this.provisioner = new Provisioner(dataSource, dsl, runtimeDdl, this, provisionWait);
  }

  /**
   * Checks the directory schema and, when runtime DDL is allowed, migrates it.
   *
   * @throws SchemaVersionException when the directory is missing or behind and runtime DDL is
   *     forbidden, is ahead of this code, or still holds a reference-stack ledger's shared tables
   */
  public void checkDirectory() {
    versions.checkDirectory();
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
   * Whether a domain's schema is cached, so that {@link #schemaOf(DSLContext, String, boolean)}
   * sends no statement for it.
   *
   * @param domain the domain
   * @return true when its route is cached
   */
  public boolean cached(String domain) {
    return known.containsKey(domain);
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
    versions.checkDomainSchema(ctx, schema, callersTransaction);
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

  /**
   * The schema of a domain, made first in a transaction of its own when the domain has none (see
   * {@link Provisioner#ensure}).
   *
   * @param domain the domain, already validated
   * @return the bare schema name
   * @throws SchemaVersionException when the domain has no schema and runtime DDL is forbidden
   * @throws dev.ledger.LedgerTimeoutException ({@code LOCK}) when another session kept the domain's
   *     lock past the lock bound
   * @throws LedgerException when the thread was interrupted while waiting
   */
  public String ensure(String domain) {
    return provisioner.ensure(domain);
  }

  /**
   * The schema of a domain, made first inside a caller's transaction when the domain has none (see
   * {@link Provisioner#provisionWithin}).
   *
   * @param ctx a context for the directory's tables on the caller's transaction
   * @param domain the domain, already validated
   * @return the bare schema name
   * @throws SchemaVersionException when the domain has no schema and runtime DDL is off, or its
   *     schema cannot be made in one transaction
   */
  public String provisionWithin(DSLContext ctx, String domain) {
    return provisioner.provisionWithin(ctx, domain);
  }

  /**
   * Resolves the domain set for provisioning now (when runtime DDL is allowed), so that a first
   * filing inside a caller's transaction never runs Flyway on the caller's connection. Call once,
   * outside any transaction, when the ledger opens.
   */
  public void prepareProvisioning() {
    provisioner.prepareProvisioning();
  }

  /**
   * Notes that this ledger provisioned a domain inside a caller's transaction: its route is not
   * cached until a lookup sees that transaction ended.
   */
  void provisionedIn(String domain, long txid) {
    pending.put(domain, txid);
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

  /** Forgets what is cached about domains (after a replay or a migration by another process). */
  public void forget() {
    known.clear();
  }
}

package dev.ledger.migrate;

import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Planning and validation of a migration run: reads what the directory's state table records and,
 * for the schemas it cannot trust, their catalog fingerprints and Flyway histories ({@link
 * Catalog}), and decides per schema what a run must do ({@link Analysis}, one {@link Work} each);
 * after the run, reads every schema it ran again and fails those not current ({@link #verify}).
 */
final class SchemaPlanner {

  private final RunContext ctx;

  SchemaPlanner(RunContext ctx) {
    this.ctx = ctx;
  }

  /**
   * The run's first observation: from the state table's record where it may be trusted (schemas
   * whose row matches this build taken as current unread, the stale ones checked in full), else
   * every schema checked in full ({@link RunContext#verifyAll}, no record, or shared tables).
   *
   * @param probe what the catalog probe found
   * @param recorded what the state table holds, or null when it does not exist
   * @param directorySet this build's directory set
   * @param domainSet this build's domain set
   * @return what the run starts from
   */
  Observation first(
      SchemaStates.Probe probe,
      SchemaStates.Recorded recorded,
      MigrationSet directorySet,
      MigrationSet domainSet) {
    Trusted trusted =
        ctx.verifyAll || recorded == null || probe.sharedTables()
            ? null
            : trusted(recorded, directorySet, domainSet);
    if (trusted == null) {
      return observe(directorySet, domainSet, null);
    } else if (trusted.stale().isEmpty()) {
      return trusted.with(trusted.directory(), List.of());
    } else {
      Observation scoped = observe(directorySet, domainSet, trusted.stale());
      return trusted.with(scoped.directory(), scoped.domains());
    }
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
        fromRecord(ctx.directorySchema, null, SchemaKind.DIRECTORY, recorded.directory()),
        known,
        stale);
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
        ctx.warnings.add(
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
   * Reads every schema the job ran again and fails those not current, checksums matching and
   * catalog as expected.
   */
  void verify(MigrationSet directorySet, MigrationSet domainSet) {
    if (ctx.ran.isEmpty()) {
      return;
    }
    Map<String, String> scope = new LinkedHashMap<>();
    for (Work w : ctx.ran.values()) {
      if (w.kind == SchemaKind.DOMAIN) {
        scope.put(w.schema, w.domain);
      }
    }
    Observation check = observe(directorySet, domainSet, scope);
    Map<String, Work> bySchema = new HashMap<>();
    bySchema.put(ctx.directorySchema, check.directory());
    check.domains().forEach(w -> bySchema.put(w.schema, w));
    for (Work w : ctx.ran.values()) {
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
  Observation observe(
      MigrationSet directorySet, MigrationSet domainSet, Map<String, String> scope) {
    Map<String, Catalog.Fingerprint> prints =
        ctx.catalog.fingerprints(scope == null ? null : scope.keySet());
    Catalog.Fingerprint directoryPrint = prints.get(ctx.directorySchema);
    List<Work> refused = new ArrayList<>();
    Map<String, String> domains = new TreeMap<>();
    SharedTables.Census census = null;
    Map<String, Set<String>> details = new HashMap<>();
    Map<String, String> targets = new TreeMap<>();
    if (scope != null) {
      domains.putAll(scope);
    } else if (directoryPrint != null) {
      if (directoryPrint.tables().contains("ledger_domains")) {
        for (Catalog.Route route : ctx.catalog.routes()) {
          String schema = routedSchema(route.domain(), route.stored(), refused);
          if (schema != null) {
            domains.put(schema, route.domain());
          }
        }
      }
      if (directoryPrint.tables().contains(SharedTables.TASKS)
          && directoryPrint.tables().contains(SharedTables.EVENTS)) {
        details.putAll(ctx.catalog.details(List.of(ctx.directorySchema)));
        if (SharedTables.shapeMatches(details.getOrDefault(ctx.directorySchema, Set.of()))) {
          census = ctx.shared.census(ctx.plain, details.get(ctx.directorySchema));
          for (SharedTablesReport.MovedDomain d : census.domains()) {
            if (!domains.containsKey(d.schema())) {
              targets.put(d.schema(), d.domain());
            }
          }
        } else {
          ctx.warnings.add(
              ctx.directorySchema
                  + ".tasks and "
                  + ctx.directorySchema
                  + ".events exist but are not a ledger's (their columns differ from the"
                  + " reference's); left alone");
        }
      }
    }
    Map<String, String> historyTables = new LinkedHashMap<>();
    if (directoryPrint != null
        && directoryPrint.tables().contains(LedgerMigrations.DIRECTORY_HISTORY)) {
      historyTables.put(ctx.directorySchema, LedgerMigrations.DIRECTORY_HISTORY);
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
        historyTables.isEmpty() ? Map.of() : ctx.catalog.histories(historyTables);

    Set<String> needDetails = new HashSet<>();
    decide(directorySet, domainSet, prints, histories, details, domains, targets, needDetails);
    needDetails.removeAll(details.keySet());
    if (!needDetails.isEmpty()) {
      details.putAll(ctx.catalog.details(needDetails));
      for (String schema : needDetails) {
        details.putIfAbsent(schema, Set.of());
      }
    }
    Observation o =
        decide(
            directorySet, domainSet, prints, histories, details, domains, targets, new HashSet<>());
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
            ctx.directorySchema,
            null,
            prints.get(ctx.directorySchema),
            histories.get(ctx.directorySchema),
            details.get(ctx.directorySchema),
            directorySet,
            needDetails);
    List<Work> works = analyzeDomains(domains, domainSet, prints, histories, details, needDetails);
    List<Work> moveTargets =
        analyzeDomains(targets, domainSet, prints, histories, details, needDetails);
    return new Observation(directory, works, null, moveTargets);
  }

  /** The decisions for domain schemas (schema to domain), in the map's order. */
  private static List<Work> analyzeDomains(
      Map<String, String> schemas,
      MigrationSet domainSet,
      Map<String, Catalog.Fingerprint> prints,
      Map<String, List<Catalog.HistoryRow>> histories,
      Map<String, Set<String>> details,
      Set<String> needDetails) {
    List<Work> works = new ArrayList<>();
    schemas.forEach(
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
    return works;
  }

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
}

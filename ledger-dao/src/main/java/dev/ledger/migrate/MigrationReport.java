package dev.ledger.migrate;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * What one run over one database found and did.
 *
 * @param operation migrate, plan or status
 * @param directorySchema the directory schema, unquoted
 * @param startedAt when the run started
 * @param elapsed how long it took, lock wait included
 * @param ok true when no schema failed and the shared-tables move (if any) did not fail
 * @param directory the directory schema's report
 * @param domains one report per domain schema, by schema name
 * @param sharedTables the move from shared tables; null when the database has none
 * @param warnings things worth knowing that failed nothing (e.g. a {@code tasks} table in the
 *     directory schema that is not the reference's and was left alone); empty when none
 * @param counts totals
 */
public record MigrationReport(
    Operation operation,
    String directorySchema,
    Instant startedAt,
    Duration elapsed,
    boolean ok,
    SchemaReport directory,
    List<SchemaReport> domains,
    SharedTablesReport sharedTables,
    List<String> warnings,
    Counts counts) {

  /** Copies the lists. */
  public MigrationReport {
    domains = List.copyOf(domains);
    warnings = List.copyOf(warnings);
  }

  /**
   * Every schema's report, the directory first.
   *
   * @return the directory's report, then the domains'
   */
  public List<SchemaReport> schemas() {
    return java.util.stream.Stream.concat(java.util.stream.Stream.of(directory), domains.stream())
        .toList();
  }

  /**
   * Totals of a run.
   *
   * @param schemas schemas looked at, the directory included
   * @param current schemas that needed nothing
   * @param created schemas made by this run
   * @param migrated schemas brought forward from an earlier version
   * @param adopted reference-stack schemas baselined and brought forward
   * @param pending plan and status: schemas with something to apply
   * @param failed schemas that failed
   * @param appliedMigrations migrations applied, over all schemas
   * @param checked schemas whose catalog and Flyway history this run read; the others were taken as
   *     current from their row in the directory's {@code ledger_schema_state} (or, a route that
   *     names no domain schema, refused outright). Zero on the common no-op path
   * @param recorded rows of {@code ledger_schema_state} this run inserted or changed (migrate only)
   * @param flywayRuns Flyway {@code migrate} runs made (zero when everything was current)
   * @param installs new domain schemas made in one transaction each by {@link
   *     dev.ledger.schema.SchemaInstaller} instead of a Flyway run (their history as Flyway writes
   *     it)
   * @param catalogQueries statements the job itself sent (the state table, catalog, routing and
   *     history reads, state writes, the shared-tables move), Flyway's own and the advisory-lock
   *     calls not counted: 2 on the common no-op path, whatever the number of schemas
   */
  public record Counts(
      int schemas,
      int current,
      int created,
      int migrated,
      int adopted,
      int pending,
      int failed,
      int appliedMigrations,
      int checked,
      int recorded,
      int flywayRuns,
      int installs,
      int catalogQueries) {}
}

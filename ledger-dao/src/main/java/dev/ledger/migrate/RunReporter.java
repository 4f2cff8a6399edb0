package dev.ledger.migrate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Result building of a migration run: turns the works a run ended with into its {@link
 * MigrationReport} (one {@link SchemaReport} each, the counts by state, the run's counters), and
 * logs the report's one summary line.
 */
final class RunReporter {

  /** The job's logger: the summary line keeps the category it always had. */
  private static final Logger LOG = LoggerFactory.getLogger(MigrationJob.class);

  private RunReporter() {}

  /**
   * The report of a run.
   *
   * @param ctx the run
   * @param observation the observation the run ended on
   * @return the report
   */
  static MigrationReport report(RunContext ctx, Observation observation) {
    Work directory = ctx.ran.getOrDefault(ctx.directorySchema, observation.directory());
    Map<String, Work> domains = observation.settledDomains(ctx.ran);
    int checked = directory.checked ? 1 : 0;
    for (Work w : domains.values()) {
      checked += w.checked ? 1 : 0;
    }
    List<SchemaReport> domainReports =
        domains.values().stream().map(w -> w.report(ctx.operation)).toList();
    SchemaReport directoryReport = directory.report(ctx.operation);
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
    boolean ok = failed == 0 && (ctx.sharedReport == null || ctx.sharedReport.error() == null);
    return new MigrationReport(
        ctx.operation,
        ctx.directorySchema,
        ctx.startedAt,
        Duration.ofNanos(System.nanoTime() - ctx.started),
        ok,
        directoryReport,
        domainReports,
        ctx.sharedReport,
        List.copyOf(ctx.warnings),
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
            ctx.recorded,
            ctx.flywayRuns.get(),
            ctx.installs.get(),
            ctx.statements.get()));
  }

  /**
   * Logs a report's summary on one line (INFO).
   *
   * @param report the report
   * @param subject what the run locked, e.g. {@code directory public}
   */
  static void log(MigrationReport report, String subject) {
    MigrationReport.Counts c = report.counts();
    LOG.info(
        "{} {}: {} schemas, {} current, {} created, {} migrated, {} adopted, {} pending, {} failed;"
            + " {} checked, {} recorded; {} Flyway runs, {} installs, {} statements, {} ms",
        report.operation().name().toLowerCase(Locale.ROOT),
        subject,
        c.schemas(),
        c.current(),
        c.created(),
        c.migrated(),
        c.adopted(),
        c.pending(),
        c.failed(),
        c.checked(),
        c.recorded(),
        c.flywayRuns(),
        c.installs(),
        c.catalogQueries(),
        report.elapsed().toMillis());
  }
}

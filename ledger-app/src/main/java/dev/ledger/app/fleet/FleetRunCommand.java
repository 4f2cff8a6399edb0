package dev.ledger.app.fleet;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.app.Durations;
import dev.ledger.app.ExitCodes;
import dev.ledger.app.migrate.Json;
import dev.ledger.app.migrate.Progress;
import dev.ledger.app.migrate.RedactingCommand;
import dev.ledger.app.migrate.ReportText;
import dev.ledger.migrate.Fleet;
import dev.ledger.migrate.FleetReport;
import dev.ledger.migrate.MigrationException;
import dev.ledger.migrate.MigrationJob;
import dev.ledger.migrate.Operation;
import dev.ledger.migrate.TenantReport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** What {@code fleet plan} and {@code fleet migrate} share. */
abstract class FleetRunCommand extends RedactingCommand {

  @Mixin ControlOptions control;

  @Option(
      names = "--parallelism",
      paramLabel = "N",
      defaultValue = "8",
      description = "Tenants migrated at once (default: ${DEFAULT-VALUE}).")
  int parallelism;

  @Option(
      names = "--schema-parallelism",
      paramLabel = "N",
      defaultValue = "2",
      description = "Domain schemas of one tenant migrated at once (default: ${DEFAULT-VALUE}).")
  int schemaParallelism;

  @Option(
      names = "--lock-timeout",
      paramLabel = "DURATION",
      defaultValue = "10m",
      converter = Durations.class,
      description =
          "How long to wait for a tenant's lock held by another run, e.g. 30s, 5m or PT5M"
              + " (default: ${DEFAULT-VALUE}).")
  Duration lockTimeout;

  @Option(
      names = "--domain-location",
      paramLabel = "LOCATION",
      description = "An extra Flyway location joining every domain schema's set (repeatable).")
  List<String> domainLocations = new ArrayList<>();

  @Option(names = "--json", description = "Print the report as JSON on stdout.")
  boolean json;

  @Option(
      names = "--verify",
      description =
          "Check every schema of every tenant in full, whatever its ledger_schema_state records.")
  boolean verify;

  /**
   * Which operation.
   *
   * @return migrate or plan
   */
  abstract Operation operation();

  /**
   * Whether degraded tenants are retried.
   *
   * @return true to retry them
   */
  boolean retryDegraded() {
    return false;
  }

  /**
   * Whether a control database without a registry gets an empty one (else it is refused, exit
   * {@value ExitCodes#NO_REGISTRY}).
   *
   * @return true to make it
   */
  boolean createRegistry() {
    return false;
  }

  /**
   * The exit code of a finished run.
   *
   * @param report the report
   * @return the code
   */
  abstract int exitCode(FleetReport report);

  @Override
  protected boolean reportsInterruption() {
    return true;
  }

  @Override
  protected int run() {
    MigrationJob.checkDomainLocations(domainLocations, "--domain-location");
    FleetReport report;
    try (HikariDataSource ds = control.open(this::secret);
        Progress progress = track(Progress.on(err(), commandName(), "tenants"))) {
      Fleet fleet =
          Fleet.builder()
              .control(ds)
              .controlSchema(control.schema())
              .parallelism(parallelism)
              .schemaParallelism(schemaParallelism)
              .lockTimeout(lockTimeout)
              .retryDegraded(retryDegraded())
              .extraDomainLocations(domainLocations)
              .verifyAll(verify)
              .createRegistry(createRegistry())
              .listener(progress)
              .build();
      report = operation() == Operation.MIGRATE ? fleet.migrate() : fleet.plan();
    } catch (MigrationException e) {
      throw e.reason() == MigrationException.Reason.NO_REGISTRY ? control.noRegistry(e) : e;
    }
    int exit = report.controlError() != null ? ExitCodes.DATABASE : exitCode(report);
    if (json) {
      printResult(
          redact(Json.document(commandName(), exit, exit == ExitCodes.OK, report))
              + System.lineSeparator());
    } else {
      printResult(redact(text(report)));
    }
    return exit;
  }

  private String text(FleetReport report) {
    StringBuilderWriter text = new StringBuilderWriter();
    List<String[]> rows = new ArrayList<>();
    boolean plan = report.operation() == Operation.PLAN;
    rows.add(
        new String[] {
          "TENANT", "STATUS", plan ? "PENDING" : "APPLIED", "SCHEMAS", "TIME", "REASON"
        });
    for (TenantReport t : report.tenants()) {
      rows.add(
          new String[] {
            t.tenant(),
            t.status().stored()
                + (t.locked() ? " (skipped: locked)" : t.skipped() ? " (skipped)" : ""),
            Integer.toString(plan ? t.pending() : t.applied()),
            Integer.toString(t.schemas()),
            ReportText.seconds(t.elapsed()),
            t.error() == null ? "" : t.error()
          });
    }
    ReportText.table(text.writer(), rows);
    text.writer()
        .println(
            report.tenants().size()
                + " tenants: "
                + report.active()
                + " active, "
                + report.degraded()
                + " degraded ("
                + report.skipped()
                + " skipped"
                + (report.locked() == 0 ? "" : ", " + report.locked() + " locked")
                + ") | "
                + ReportText.seconds(report.elapsed()));
    if (report.controlError() != null) {
      text.writer().println("stopped: " + report.controlError());
    }
    return text.toString();
  }
}

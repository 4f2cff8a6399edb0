package dev.ledger.app.migrate;

import dev.ledger.InvalidInputException;
import dev.ledger.Ledger;
import dev.ledger.Validation;
import dev.ledger.app.DatabaseOptions;
import dev.ledger.app.ExitCodes;
import dev.ledger.migrate.AdvisoryLocks;
import dev.ledger.migrate.MigrationJob;
import dev.ledger.migrate.MigrationReport;
import dev.ledger.migrate.Operation;
import dev.ledger.migrate.SchemaState;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine.Mixin;

/** What {@code migrate}, {@code plan} and {@code status} share: open, run the job, render. */
abstract class JobCommand extends RedactingCommand {

  @Mixin DatabaseOptions database;

  @Mixin JobOptions options;

  /**
   * Which operation the command runs.
   *
   * @return migrate, plan or status
   */
  abstract Operation operation();

  /**
   * How many schemas at once.
   *
   * @return 1 to 64
   */
  int parallelism() {
    return 1;
  }

  /**
   * The domains to provision once the job has run (only {@code migrate} has any).
   *
   * @return the domains, in the order given; empty for none
   */
  List<String> provision() {
    return List.of();
  }

  @Override
  protected boolean reportsInterruption() {
    return true;
  }

  /** A domain provisioned after the run: its schema, and whether this run made it. */
  record Provisioned(String domain, String schema, boolean created) {}

  @Override
  protected int run() throws Exception {
    MigrationJob.checkDomainLocations(options.domainLocations(), "--domain-location");
    for (String domain : provision()) {
      try {
        Validation.domain(domain); // refused before any database is opened
      } catch (InvalidInputException e) {
        throw new InvalidInputException(
            "--provision", e.getMessage().substring(e.field().length() + 2));
      }
    }
    int parallelism = parallelism();
    try (DatabaseOptions.OpenDatabase db = database.open(parallelism + 2);
        Progress progress = track(Progress.on(err(), commandName(), "schemas"))) {
      secret(db.dsn());
      MigrationJob job =
          MigrationJob.builder()
              .dataSource(db.dataSource())
              .lockConnections(db.dsn()::connect)
              .directorySchema(db.directorySchema())
              .lock(
                  AdvisoryLocks.databaseLockKey(db.directorySchema()),
                  "directory " + db.directorySchema() + " of " + db.description())
              .parallelism(parallelism)
              .lockTimeout(options.lockTimeout())
              .extraDomainLocations(options.domainLocations())
              .verifyAll(options.verify())
              .listener(progress)
              .build();
      MigrationReport report =
          switch (operation()) {
            case MIGRATE -> job.migrate();
            case PLAN -> job.plan();
            case STATUS -> job.status();
          };
      progress.close();
      int exit =
          report.ok()
              ? ExitCodes.OK
              : report.schemas().stream().anyMatch(s -> s.state() == SchemaState.FOREIGN)
                  ? ExitCodes.FOREIGN_SCHEMA
                  : ExitCodes.FAILED;
      // new domains are made once the directory is current (a failed run provisions nothing),
      // through the ledger's own provisioning: schema and route in one transaction, under the
      // domain's lock, so an application filing into the domain at the same moment waits
      List<Provisioned> provisioned = new ArrayList<>();
      if (report.ok() && !provision().isEmpty()) {
        Ledger ledger = db.ledger();
        Set<String> before = new HashSet<>(ledger.domains());
        for (String domain : provision()) {
          provisioned.add(
              new Provisioned(domain, ledger.provision(domain), !before.contains(domain)));
        }
      }
      if (options.json()) {
        Map<String, Object> extra = new LinkedHashMap<>();
        if (!provision().isEmpty()) {
          extra.put("provisioned", provisioned);
        }
        printResult(
            redact(Json.document(commandName(), exit, report.ok(), report, extra))
                + System.lineSeparator());
      } else {
        java.io.StringWriter text = new java.io.StringWriter();
        ReportText.print(
            new java.io.PrintWriter(text),
            db.description(),
            report,
            operation() == Operation.STATUS);
        for (Provisioned p : provisioned) {
          text.write(
              "provisioned "
                  + p.domain()
                  + ": schema "
                  + p.schema()
                  + (p.created() ? " created" : " already there")
                  + System.lineSeparator());
        }
        printResult(redact(text.toString()));
      }
      return exit;
    }
  }
}

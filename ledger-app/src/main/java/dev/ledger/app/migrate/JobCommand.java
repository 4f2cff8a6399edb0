package dev.ledger.app.migrate;

import dev.ledger.app.DatabaseOptions;
import dev.ledger.app.ExitCodes;
import dev.ledger.migrate.AdvisoryLocks;
import dev.ledger.migrate.MigrationJob;
import dev.ledger.migrate.MigrationReport;
import dev.ledger.migrate.Operation;
import dev.ledger.migrate.SchemaState;
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

  @Override
  protected int run() throws Exception {
    MigrationJob.checkDomainLocations(options.domainLocations(), "--domain-location");
    int parallelism = parallelism();
    try (DatabaseOptions.OpenDatabase db = database.open(parallelism + 2);
        Progress progress = Progress.on(err(), commandName(), "schemas")) {
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
      if (options.json()) {
        out().println(redact(Json.document(commandName(), exit, report.ok(), report)));
      } else {
        java.io.StringWriter text = new java.io.StringWriter();
        ReportText.print(
            new java.io.PrintWriter(text),
            db.description(),
            report,
            operation() == Operation.STATUS);
        out().print(redact(text.toString()));
      }
      out().flush();
      return exit;
    }
  }
}

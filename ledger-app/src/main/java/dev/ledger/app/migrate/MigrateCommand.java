package dev.ledger.app.migrate;

import dev.ledger.migrate.Operation;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ledger-app migrate}: brings one database (the directory schema, then every domain schema)
 * to the current version, adopting a ledger the reference stack made; see {@link
 * dev.ledger.migrate.MigrationJob}. Exit 0 when every schema is current and verified, 1 when one
 * failed, 4 when the database is unreachable, 5 when another run holds the lock.
 */
@Command(
    name = "migrate",
    footer = {
      "",
      "Examples:",
      "  ledger-app migrate                      # the embedded default in $LEDGER_HOME",
      "  ledger-app migrate --json \\",
      "      --url 'jdbc:postgresql://127.0.0.1:5432/demo?user=postgres'",
      "  ledger-app migrate --provision payments --provision mail  # makes two domains"
    },
    mixinStandardHelpOptions = true,
    description = {
      "Bring the directory schema, then every domain schema, to the current version.",
      "Adopts ledgers the reference stack made (no Flyway history). When everything is current"
          + " it costs two statements (the directory's ledger_schema_state records what each"
          + " schema holds), not one Flyway run per schema; --verify checks every schema in full."
    })
public final class MigrateCommand extends JobCommand {

  @Option(
      names = "--parallelism",
      paramLabel = "N",
      defaultValue = "4",
      description =
          "Domain schemas migrated at once, each on its own connection (default: ${DEFAULT-VALUE}).")
  int parallelism;

  @Option(
      names = "--provision",
      paramLabel = "DOMAIN",
      description =
          "Make this domain's schema once the migration succeeded, so applications can open the"
              + " ledger with runtime DDL off (repeatable; a domain that exists is left as it is).")
  List<String> provision = new ArrayList<>();

  @Override
  List<String> provision() {
    return provision;
  }

  @Override
  Operation operation() {
    return Operation.MIGRATE;
  }

  @Override
  int parallelism() {
    return parallelism;
  }
}

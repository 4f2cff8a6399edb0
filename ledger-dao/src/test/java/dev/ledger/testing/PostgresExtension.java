package dev.ledger.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.UUID;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Gives a test class a database of its own on a real PostgreSQL, and drops it afterwards.
 *
 * <p>The server is chosen once per JVM by {@link TestServer}: the one {@code LEDGER_TEST_JDBC_URL}
 * names (environment variable or system property), else Testcontainers' PostgreSQL when {@code
 * -Dledger.test.postgres=testcontainers} is given and Docker answers, else an embedded PostgreSQL
 * from Maven artifacts (zonky). Use it as a static field:
 *
 * <pre>{@code
 * @RegisterExtension static final PostgresExtension PG = new PostgresExtension();
 * ... PG.dataSource() ...
 * }</pre>
 *
 * <p>Every connection's session time zone is {@code America/Sao_Paulo}, on purpose: nothing in the
 * ledger may depend on the server's or the session's zone.
 */
public final class PostgresExtension implements BeforeAllCallback, AfterAllCallback {

  private final Supplier<TestServer> server;
  private String database;
  private HikariDataSource pool;

  /** A database on the JVM's test server ({@link TestServer#get()}). */
  public PostgresExtension() {
    this(TestServer::get);
  }

  private PostgresExtension(Supplier<TestServer> server) {
    this.server = server;
  }

  /**
   * A database on a server no other test JVM shares ({@link TestServer#ownCluster()}): for tests
   * whose outcome depends on every transaction of the cluster, as the feed's delivery does. Reach
   * it through this instance ({@link #connect()}, {@link #jdbcUrl()}), not the static helpers.
   *
   * @return the extension
   */
  public static PostgresExtension ownCluster() {
    return new PostgresExtension(TestServer::ownCluster);
  }

  @Override
  public void beforeAll(ExtensionContext context) throws SQLException {
    database = newDatabase(server.get());
    pool = pool(jdbcUrl(), 16);
  }

  @Override
  public void afterAll(ExtensionContext context) throws SQLException {
    if (pool != null) {
      pool.close();
    }
    dropDatabase(server.get(), database);
  }

  /**
   * The server this class's database is on.
   *
   * @return the server
   */
  public TestServer server() {
    return server.get();
  }

  /**
   * A plain connection to this class's database (no pool), in the suite's session time zone.
   *
   * @return an open connection; the caller closes it
   * @throws SQLException when the server refuses
   */
  public Connection connect() throws SQLException {
    return open(jdbcUrl());
  }

  /**
   * The pooled data source of this class's database.
   *
   * @return a HikariCP pool of up to 16 connections
   */
  public DataSource dataSource() {
    return pool;
  }

  /**
   * The JDBC URL of this class's database, with user and password as parameters.
   *
   * @return e.g. {@code jdbc:postgresql://localhost:5432/ledger_test_ab12?user=postgres}
   */
  public String jdbcUrl() {
    return server.get().urlFor(database);
  }

  /**
   * The name of this class's database.
   *
   * @return e.g. {@code ledger_test_ab12cd34}
   */
  public String databaseName() {
    return database;
  }

  /**
   * Creates another empty database on the same server; the caller drops it with {@link
   * #dropDatabase(String)}.
   *
   * @return its name
   * @throws SQLException when the server refuses
   */
  public static String newDatabase() throws SQLException {
    return newDatabase(TestServer.get());
  }

  /**
   * Creates an empty database on a given server; the caller drops it with {@link
   * #dropDatabase(TestServer, String)}.
   *
   * @param on the server, e.g. {@link TestServer#ownCluster()}
   * @return its name
   * @throws SQLException when the server refuses
   */
  public static String newDatabase(TestServer on) throws SQLException {
    String name =
        "ledger_test_"
            + UUID.randomUUID()
                .toString()
                .replace("-", "")
                .substring(0, 12)
                .toLowerCase(Locale.ROOT);
    try (Connection c = on.adminConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + name);
    }
    return name;
  }

  /**
   * Drops a database made by {@link #newDatabase()}, closing what still uses it.
   *
   * @param name its name, or null (nothing happens)
   * @throws SQLException when the server refuses
   */
  public static void dropDatabase(String name) throws SQLException {
    dropDatabase(TestServer.get(), name);
  }

  /**
   * Drops a database made by {@link #newDatabase(TestServer)}, closing what still uses it.
   *
   * @param on the server it is on
   * @param name its name, or null (nothing happens)
   * @throws SQLException when the server refuses
   */
  public static void dropDatabase(TestServer on, String name) throws SQLException {
    if (name == null) {
      return;
    }
    try (Connection c = on.adminConnection();
        Statement s = c.createStatement()) {
      s.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }
  }

  /**
   * A plain connection to a database of the test server (no pool).
   *
   * @param database the database name
   * @return an open connection; the caller closes it
   * @throws SQLException when the server refuses
   */
  public static Connection connect(String database) throws SQLException {
    return open(TestServer.get().urlFor(database));
  }

  private static Connection open(String url) throws SQLException {
    Connection c = DriverManager.getConnection(url);
    try (Statement s = c.createStatement()) {
      s.execute("SET TIME ZONE 'America/Sao_Paulo'");
    }
    return c;
  }

  /**
   * A HikariCP pool over a JDBC URL.
   *
   * @param url the JDBC URL, credentials included
   * @param size the most connections
   * @return the pool; the caller closes it
   */
  public static HikariDataSource pool(String url, int size) {
    return pool(url, size, null);
  }

  /**
   * Like {@link #pool(String, int)}, with every connection showing {@code applicationName} in
   * {@code pg_stat_activity}.
   *
   * @param url a JDBC URL
   * @param size the pool's maximum size
   * @param applicationName the application name, or null for the driver's default
   * @return a new pool; the caller closes it
   */
  public static HikariDataSource pool(String url, int size, String applicationName) {
    HikariConfig config = new HikariConfig();
    if (applicationName != null) {
      config.addDataSourceProperty("ApplicationName", applicationName);
    }
    config.setJdbcUrl(url);
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(0);
    config.setConnectionInitSql("SET TIME ZONE 'America/Sao_Paulo'");
    config.setPoolName("test-" + size);
    return new HikariDataSource(config);
  }
}

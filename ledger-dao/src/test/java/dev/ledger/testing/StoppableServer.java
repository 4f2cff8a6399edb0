package dev.ledger.testing;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * An embedded PostgreSQL of a test's own, on its own port, that can be stopped and started again on
 * the same port with the same data (a server that goes away and comes back), or copied while
 * stopped into a new server (a tenant's database moved to another machine). Not the shared {@link
 * TestServer}: stopping this one affects no other test.
 *
 * <pre>{@code
 * try (StoppableServer b = StoppableServer.start()) {
 *   String db = b.createDatabase("t1");
 *   b.stop(); ... b.restart();
 * }
 * }</pre>
 */
public final class StoppableServer implements AutoCloseable {

  private final Path data;
  private final int port;
  private EmbeddedPostgres pg;

  private StoppableServer(Path data, int port) throws IOException {
    this.data = data;
    this.port = port;
    this.pg = builder().start();
  }

  /**
   * Starts a new server on a free port, in a new temporary data directory.
   *
   * @return the running server
   */
  public static StoppableServer start() {
    try {
      return new StoppableServer(Files.createTempDirectory("ledger-pg-"), freePort());
    } catch (IOException e) {
      throw new UncheckedIOException("embedded PostgreSQL did not start", e);
    }
  }

  private EmbeddedPostgres.Builder builder() {
    return TestServer.throwaway(EmbeddedPostgres.builder())
        .setDataDirectory(data)
        .setCleanDataDirectory(false)
        .setPort(port)
        .setServerConfig("max_connections", "300")
        // a small data directory, quick to copy: few WAL segments kept
        .setServerConfig("min_wal_size", "32MB")
        .setServerConfig("max_wal_size", "64MB");
  }

  /**
   * The JDBC URL of a database on this server.
   *
   * @param database the database name
   * @return e.g. {@code jdbc:postgresql://localhost:54012/t1?user=postgres}
   */
  public String urlFor(String database) {
    return "jdbc:postgresql://localhost:" + port + "/" + database + "?user=postgres";
  }

  /**
   * Creates a database.
   *
   * @param name its name, a plain identifier
   * @return the name
   */
  public String createDatabase(String name) {
    try (Connection c = DriverManager.getConnection(urlFor("postgres"));
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + name);
      return name;
    } catch (SQLException e) {
      throw new IllegalStateException("CREATE DATABASE " + name, e);
    }
  }

  /** Stops the server (fast shutdown: sessions are terminated); its data stays. */
  public synchronized void stop() {
    if (pg == null) {
      return;
    }
    try {
      pg.close();
      pg = null;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Starts the stopped server again, same port, same data. */
  public synchronized void restart() {
    if (pg != null) {
      return;
    }
    try {
      pg = builder().start();
    } catch (IOException e) {
      throw new UncheckedIOException("embedded PostgreSQL did not restart", e);
    }
  }

  /**
   * Copies this stopped server's data directory into a new server (a physical copy of every
   * database, as a base backup would make) and starts that on a port of its own.
   *
   * @return the new server, running
   */
  public synchronized StoppableServer copyWhileStopped() {
    if (pg != null) {
      throw new IllegalStateException("stop the server before copying it");
    }
    try {
      Path target = Files.createTempDirectory("ledger-pg-copy-");
      try (Stream<Path> files = Files.walk(data)) {
        for (Path p : (Iterable<Path>) files::iterator) {
          Path to = target.resolve(data.relativize(p).toString());
          if (Files.isDirectory(p)) {
            Files.createDirectories(to);
          } else if (!p.getFileName().toString().equals("postmaster.pid")
              && !p.getFileName().toString().startsWith("epg-lock")) {
            Files.copy(p, to, StandardCopyOption.COPY_ATTRIBUTES);
          }
        }
      }
      return new StoppableServer(target, freePort());
    } catch (IOException e) {
      throw new UncheckedIOException("copying the data directory failed", e);
    }
  }

  /** Stops the server and deletes its data. */
  @Override
  public synchronized void close() {
    stop();
    try (Stream<Path> files = Files.walk(data)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // a temporary directory; nothing else depends on it
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}

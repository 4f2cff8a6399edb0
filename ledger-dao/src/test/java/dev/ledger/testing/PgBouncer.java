package dev.ledger.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A real PgBouncer in front of the test server, started by a test and stopped (its process killed,
 * its temporary directory removed) by {@link #close()}: its configuration in a temporary directory,
 * its own port on 127.0.0.1, {@code auth_type = any} (the test server trusts), one pool mode.
 *
 * <pre>{@code
 * try (PgBouncer bouncer = PgBouncer.start("transaction", 2)) {
 *   String url = bouncer.urlFor(database);   // jdbc:postgresql://127.0.0.1:<port>/<database>?user=...
 * }
 * }</pre>
 *
 * <p>Needs the {@code pgbouncer} binary ({@code sudo apt-get install pgbouncer}; {@code .ci/run}
 * installs it): without it {@link #start} skips the test with the line that installs it, or fails
 * it where {@code -Dledger.test.require} names pgbouncer, as CI does ({@link Tools}). As root
 * (PgBouncer refuses to run as root) it runs as {@code nobody}.
 */
public final class PgBouncer implements AutoCloseable {

  private static final Pattern SERVER =
      Pattern.compile("jdbc:postgresql://([^:/?]+)(?::(\\d+))?/[^?]*(?:\\?(.*))?");

  private final Process process;
  private final Path directory;
  private final int port;
  private final String parameters;

  private PgBouncer(Process process, Path directory, int port, String parameters) {
    this.process = process;
    this.directory = directory;
    this.port = port;
    this.parameters = parameters;
  }

  /**
   * Starts a PgBouncer in front of the test server and waits until it accepts connections.
   *
   * @param poolMode {@code session}, {@code transaction} or {@code statement}
   * @param poolSize server connections per database and user ({@code default_pool_size})
   * @return the running PgBouncer; close it
   * @throws IOException when it cannot be started or does not listen within 10 s
   */
  public static PgBouncer start(String poolMode, int poolSize) throws IOException {
    Path binary = binary();
    Matcher m = SERVER.matcher(TestServer.get().urlFor("postgres"));
    if (!m.matches()) {
      throw new IllegalStateException("unexpected test server URL");
    }
    String host = m.group(1);
    String serverPort = m.group(2) == null ? "5432" : m.group(2);
    String user = "postgres";
    String password = null;
    List<String> kept = new ArrayList<>();
    if (m.group(3) != null) {
      for (String p : m.group(3).split("&")) {
        if (p.startsWith("user=")) {
          user = p.substring(5);
        } else if (p.startsWith("password=")) {
          password = p.substring(9);
        }
        kept.add(p);
      }
    }
    int port = freePort();
    Path dir = Files.createTempDirectory("ledger-pgbouncer-");
    boolean root = "root".equals(System.getProperty("user.name"));
    String config =
        String.join(
            "\n",
            "[databases]",
            "* = host="
                + host
                + " port="
                + serverPort
                + " user="
                + user
                + (password == null ? "" : " password=" + password),
            "[pgbouncer]",
            "listen_addr = 127.0.0.1",
            "listen_port = " + port,
            "unix_socket_dir =",
            "auth_type = any",
            "pool_mode = " + poolMode,
            "default_pool_size = " + poolSize,
            "max_client_conn = 200",
            "server_reset_query = DISCARD ALL",
            "ignore_startup_parameters = extra_float_digits,options",
            "");
    Path ini = dir.resolve("pgbouncer.ini");
    Files.writeString(ini, config, StandardCharsets.UTF_8);
    if (root) {
      Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
      Files.setPosixFilePermissions(ini, PosixFilePermissions.fromString("rw-r--r--"));
    }
    List<String> command = new ArrayList<>(List.of(binary.toString()));
    if (root) {
      command.addAll(List.of("-u", "nobody"));
    }
    command.add(ini.toString());
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("pgbouncer.log").toFile())
            .start();
    PgBouncer bouncer =
        new PgBouncer(process, dir, port, kept.isEmpty() ? "" : "?" + String.join("&", kept));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return bouncer;
      } catch (IOException notYet) {
        if (!process.isAlive() || System.nanoTime() > deadline) {
          String log = Files.readString(dir.resolve("pgbouncer.log"), StandardCharsets.UTF_8);
          bouncer.close();
          throw new IOException("pgbouncer did not start: " + log.strip());
        }
        try {
          Thread.sleep(50);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          bouncer.close();
          throw new IOException("interrupted while pgbouncer started", e);
        }
      }
    }
  }

  /**
   * The JDBC URL of a database of the test server, through this PgBouncer.
   *
   * @param database the database name
   * @return e.g. {@code jdbc:postgresql://127.0.0.1:40123/ledger_test_ab12?user=postgres}
   */
  public String urlFor(String database) {
    return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + parameters;
  }

  /** Kills the PgBouncer (its server connections close with it) and removes its directory. */
  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    try (Stream<Path> files = Files.walk(directory)) {
      for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Path binary() {
    return Tools.require(Tools.PGBOUNCER);
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }
}

package dev.ledger.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real Citus cluster for tests: a coordinator and two workers, each a PostgreSQL 15 server made
 * with the machine's {@code initdb} ({@value #BIN}) in a temporary directory, {@code citus}
 * preloaded, a free port of its own on 127.0.0.1, run as the OS user {@value #OS_USER} when the
 * tests run as root ({@code initdb} refuses root; the user is made with {@code useradd} when
 * missing) and as the current user otherwise.
 *
 * <pre>{@code
 * CitusCluster cluster = CitusCluster.shared();          // skipped: citus is not installed (...)
 * String url = cluster.createDatabase("ledger_citus_x");  // the coordinator's JDBC URL
 * }</pre>
 *
 * <p>{@link #shared()} starts one cluster per JVM on first use, shared by the test classes, and
 * stops it when the JVM exits (a shutdown hook); {@link #start()} starts a private one that {@link
 * #close()} stops. Stopping runs {@code pg_ctl stop -m fast} on each server (bounded, then {@code
 * immediate}) and removes the directory; a JVM killed with {@code SIGKILL} leaves the servers
 * running (their directories say where: {@code /tmp/ledger-citus*}).
 *
 * <p>Without Citus ({@value Tools#CITUS_LIBRARY} missing) {@link #shared()} and {@link #start()}
 * skip the test with one line, or fail it where {@code -Dledger.test.require} names {@code citus}
 * ({@link Tools#CITUS}). Thread-safe.
 */
public final class CitusCluster implements AutoCloseable {

  /** The PostgreSQL 15 programs Citus is installed for. */
  public static final String BIN = "/usr/lib/postgresql/15/bin";

  /** The OS user the servers run as when the tests run as root. */
  public static final String OS_USER = "ledger-citus";

  /** Every wait on a program or a server, in seconds. */
  private static final long WAIT_SECONDS = 120;

  private static CitusCluster shared;

  private final Path directory;
  private final List<Node> nodes;
  private boolean stopped;

  /**
   * One server of the cluster.
   *
   * @param data its data directory
   * @param port its port on 127.0.0.1
   */
  public record Node(Path data, int port) {}

  private CitusCluster(Path directory, List<Node> nodes) {
    this.directory = directory;
    this.nodes = nodes;
  }

  /**
   * The cluster of this JVM, started on first call and stopped when the JVM exits.
   *
   * @return the running cluster (never closed by its users)
   */
  public static synchronized CitusCluster shared() {
    Tools.requireFile(Tools.CITUS, Path.of(Tools.CITUS_LIBRARY));
    if (shared == null) {
      try {
        shared = start();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return shared;
  }

  /**
   * Starts a coordinator and two workers; skipped (or failed) as the class says without Citus.
   *
   * @return the running cluster; close it
   * @throws IOException when a server cannot be made or started within the bound
   */
  public static CitusCluster start() throws IOException {
    Tools.requireFile(Tools.CITUS, Path.of(Tools.CITUS_LIBRARY));
    boolean root = isRoot();
    if (root) {
      ensureUser();
    }
    Path dir = Files.createTempDirectory("ledger-citus");
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    if (root) {
      run(List.of("chown", OS_USER, dir.toString()));
    }
    List<Node> nodes = new ArrayList<>();
    CitusCluster cluster = new CitusCluster(dir, nodes);
    Thread hook = new Thread(cluster::stop, "citus-cluster-stop");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      for (String name : List.of("coordinator", "worker1", "worker2")) {
        Node node = new Node(dir.resolve(name), freePort());
        initdb(node);
        nodes.add(node);
        asUser(
            List.of(
                BIN + "/pg_ctl",
                "-D",
                node.data().toString(),
                "-l",
                node.data().resolve("server.log").toString(),
                "-w",
                "-t",
                Long.toString(WAIT_SECONDS),
                "start"));
      }
      return cluster;
    } catch (IOException | RuntimeException e) {
      cluster.stop();
      throw e;
    }
  }

  /**
   * The coordinator, where the ledger connects.
   *
   * @return its node
   */
  public Node coordinator() {
    return nodes.get(0);
  }

  /**
   * The two workers, in the order they were added.
   *
   * @return their nodes
   */
  public List<Node> workers() {
    return List.copyOf(nodes.subList(1, nodes.size()));
  }

  /**
   * A JDBC URL for a database on one node, as {@code postgres} (trusted).
   *
   * @param node a node of this cluster
   * @param database the database
   * @return the URL
   */
  public String urlFor(Node node, String database) {
    return "jdbc:postgresql://127.0.0.1:" + node.port() + "/" + database + "?user=postgres";
  }

  /**
   * Creates a database on every node with the {@code citus} extension, and makes the coordinator's
   * copy a Citus cluster of the three: {@code citus_set_coordinator_host} and {@code
   * citus_add_node} per worker (Citus keeps its node list per database).
   *
   * @param name the database, a plain lower-case identifier
   * @return the coordinator's JDBC URL for it
   * @throws SQLException when a node refuses
   */
  public String createDatabase(String name) throws SQLException {
    if (!name.matches("[a-z_][a-z0-9_]{0,62}")) {
      throw new IllegalArgumentException("database name: expected a plain identifier: " + name);
    }
    for (Node node : nodes) {
      try (Connection c = DriverManager.getConnection(urlFor(node, "postgres"));
          Statement s = c.createStatement()) {
        s.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
        s.execute("CREATE DATABASE " + name);
      }
      try (Connection c = DriverManager.getConnection(urlFor(node, name));
          Statement s = c.createStatement()) {
        s.execute("CREATE EXTENSION citus");
      }
    }
    try (Connection c = DriverManager.getConnection(urlFor(coordinator(), name));
        Statement s = c.createStatement()) {
      s.execute("SELECT citus_set_coordinator_host('127.0.0.1', " + coordinator().port() + ")");
      for (Node w : workers()) {
        s.execute("SELECT citus_add_node('127.0.0.1', " + w.port() + ")");
      }
    }
    return urlFor(coordinator(), name);
  }

  /**
   * Stops every server and removes the cluster's directory; idempotent.
   *
   * @see #stop()
   */
  @Override
  public void close() {
    stop();
  }

  /** Stops every server (fast, then immediate past the bound) and removes the directory. */
  public synchronized void stop() {
    if (stopped) {
      return;
    }
    stopped = true;
    for (Node node : nodes) {
      if (!Files.exists(node.data().resolve("postmaster.pid"))) {
        continue;
      }
      try {
        asUser(
            List.of(
                BIN + "/pg_ctl", "-D", node.data().toString(), "-m", "fast", "-t", "30", "stop"));
      } catch (IOException | RuntimeException e) {
        try {
          asUser(List.of(BIN + "/pg_ctl", "-D", node.data().toString(), "-m", "immediate", "stop"));
        } catch (IOException | RuntimeException ignored) {
          // the server is gone or cannot be reached: nothing more a test can do
        }
      }
    }
    try (Stream<Path> files = Files.walk(directory)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // a temporary directory left behind is harmless
    }
  }

  private static void initdb(Node node) throws IOException {
    asUser(
        List.of(
            BIN + "/initdb",
            "-D",
            node.data().toString(),
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync"));
    // small and fast: a test cluster on a shared 2-core machine; durability is not under test
    String conf =
        String.join(
            "\n",
            "",
            "shared_preload_libraries = 'citus'",
            "listen_addresses = '127.0.0.1'",
            "port = " + node.port(),
            "unix_socket_directories = '" + node.data() + "'",
            "max_connections = 100",
            "max_prepared_transactions = 100",
            "shared_buffers = 32MB",
            "fsync = off",
            "synchronous_commit = off",
            "full_page_writes = off",
            "wal_level = logical",
            "max_replication_slots = 10",
            "max_wal_senders = 10",
            "citus.log_remote_commands = off",
            "");
    Path file = node.data().resolve("postgresql.conf");
    if (isRoot()) {
      // the file belongs to the server's user; append through it
      Path staged = Files.createTempFile("citus-conf", ".conf");
      Files.writeString(staged, conf, StandardCharsets.UTF_8);
      Files.setPosixFilePermissions(staged, PosixFilePermissions.fromString("rw-r--r--"));
      asUser(List.of("sh", "-c", "cat \"$0\" >> \"$1\"", staged.toString(), file.toString()));
      Files.delete(staged);
    } else {
      Files.writeString(
          file, conf, StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
    }
  }

  private static boolean isRoot() {
    return "root".equals(System.getProperty("user.name"));
  }

  private static void ensureUser() throws IOException {
    if (runQuietly(List.of("id", "-u", OS_USER)) == 0) {
      return;
    }
    run(
        List.of(
            "useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", OS_USER));
  }

  private static void asUser(List<String> command) throws IOException {
    List<String> full = new ArrayList<>();
    if (isRoot()) {
      full.addAll(List.of("runuser", "-u", OS_USER, "--"));
    }
    full.addAll(command);
    run(full);
  }

  private static void run(List<String> command) throws IOException {
    Path out = Files.createTempFile("citus-cmd", ".log");
    try {
      Process p =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(out.toFile())
              .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
              .start();
      if (!p.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException(command.get(0) + " did not finish within " + WAIT_SECONDS + " s");
      }
      if (p.exitValue() != 0) {
        throw new IOException(
            String.join(" ", command)
                + " exited "
                + p.exitValue()
                + ": "
                + Files.readString(out, StandardCharsets.UTF_8).strip());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while running " + command.get(0), e);
    } finally {
      Files.deleteIfExists(out);
    }
  }

  private static int runQuietly(List<String> command) throws IOException {
    try {
      Process p =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      if (!p.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return -1;
      }
      return p.exitValue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while running " + command.get(0), e);
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}

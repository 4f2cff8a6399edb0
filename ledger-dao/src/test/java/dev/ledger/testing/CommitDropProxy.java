package dev.ledger.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A TCP proxy in front of the test PostgreSQL server that, once armed, cuts the connection that
 * sends the next {@code COMMIT}: before the server receives it ({@link Mode#BEFORE_COMMIT}: the
 * transaction is rolled back by the server), or after the server has answered it ({@link
 * Mode#AFTER_COMMIT}: the transaction is committed, but the client never hears so). Either way the
 * client's {@code commit()} fails on a lost connection. Fires once per arming. pgjdbc sends a
 * commit as the query text {@code COMMIT}; the ledger's own statements are rendered in lower case.
 *
 * <pre>{@code
 * try (CommitDropProxy proxy = CommitDropProxy.to(PG.jdbcUrl())) {
 *   DataSource ds = PostgresExtension.pool(proxy.jdbcUrl(PG.jdbcUrl()), 2);
 *   proxy.arm(CommitDropProxy.Mode.AFTER_COMMIT);
 * }
 * }</pre>
 */
public final class CommitDropProxy implements AutoCloseable {

  /** When the connection is cut. */
  public enum Mode {
    /** The {@code COMMIT} is not forwarded; the server rolls the transaction back. */
    BEFORE_COMMIT,
    /** The {@code COMMIT} is forwarded and answered; the answer is not forwarded. */
    AFTER_COMMIT
  }

  private static final byte[] COMMIT = "COMMIT".getBytes(StandardCharsets.US_ASCII);

  /** How many bytes of one read are kept for the next, for a message split across reads. */
  private static final int TAIL = 64;

  private final String host;
  private final int port;
  private final ServerSocket server;
  private final AtomicReference<Mode> armed = new AtomicReference<>();
  private final AtomicInteger fired = new AtomicInteger();
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();

  private CommitDropProxy(String host, int port) throws IOException {
    this.host = host;
    this.port = port;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread accept = new Thread(this::accept, "commit-drop-proxy");
    accept.setDaemon(true);
    accept.start();
  }

  /**
   * A proxy in front of the server of a JDBC URL.
   *
   * @param jdbcUrl e.g. {@code jdbc:postgresql://localhost:5432/db?user=postgres}
   * @return the running proxy, disarmed
   * @throws IOException when it cannot listen
   */
  public static CommitDropProxy to(String jdbcUrl) throws IOException {
    java.net.InetSocketAddress server = ProxiedUrl.server(jdbcUrl);
    return new CommitDropProxy(server.getHostString(), server.getPort());
  }

  /**
   * The JDBC URL through this proxy.
   *
   * @param jdbcUrl the server's URL, as given to {@link #to}
   * @return the same URL with the proxy's host and port
   */
  public String jdbcUrl(String jdbcUrl) {
    return ProxiedUrl.through(jdbcUrl, server.getLocalPort());
  }

  /**
   * Arms the proxy for the next {@code COMMIT} of any connection.
   *
   * @param mode when to cut
   */
  public void arm(Mode mode) {
    armed.set(mode);
  }

  /**
   * How often the proxy cut a connection.
   *
   * @return the count
   */
  public int fired() {
    return fired.get();
  }

  @Override
  public void close() throws IOException {
    server.close();
    for (Socket s : sockets) {
      closeQuietly(s);
    }
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        Socket upstream = new Socket(host, port);
        client.setTcpNoDelay(true);
        upstream.setTcpNoDelay(true);
        sockets.add(client);
        sockets.add(upstream);
        Link link = new Link(client, upstream);
        start(() -> link.clientToServer(), "proxy c->s");
        start(() -> link.serverToClient(), "proxy s->c");
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private static void start(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    t.start();
  }

  /** One proxied connection. */
  private final class Link {
    private final Socket client;
    private final Socket upstream;
    private volatile boolean cutOnCommitAnswer;
    private final java.util.Set<String> commitStatements = new java.util.HashSet<>();

    Link(Socket client, Socket upstream) {
      this.client = client;
      this.upstream = upstream;
    }

    void clientToServer() {
      byte[] tail = new byte[0];
      try (InputStream in = client.getInputStream();
          OutputStream out = upstream.getOutputStream()) {
        byte[] buf = new byte[65536];
        int n;
        while ((n = in.read(buf)) >= 0) {
          Mode mode = armed.get();
          byte[] seen = concat(tail, buf, n);
          boolean commit = sendsCommit(seen, tail.length);
          if (mode != null && commit && armed.compareAndSet(mode, null)) {
            if (mode == Mode.BEFORE_COMMIT) {
              fired.incrementAndGet();
              cut();
              return;
            }
            cutOnCommitAnswer = true;
          }
          out.write(buf, 0, n);
          out.flush();
          tail = suffix(seen, TAIL);
        }
      } catch (IOException e) {
        // cut, or closed by either side
      } finally {
        cut();
      }
    }

    /**
     * Whether the client's bytes run a {@code COMMIT}: a Parse message of the text {@code COMMIT}
     * (remembering its statement name), or a Bind of a statement so named before (pgjdbc prepares
     * its commit on the server after a few uses, and then sends only {@code Bind S_n}).
     */
    private boolean sendsCommit(byte[] seen, int old) {
      boolean commit = false;
      for (int i = 0; i + 5 < seen.length; i++) {
        if (seen[i] == 'P') {
          int end = zero(seen, i + 5);
          if (end > 0
              && end + 1 + COMMIT.length > old // not a commit already forwarded
              && startsWith(seen, end + 1, COMMIT)
              && at(seen, end + 1 + COMMIT.length, 0)) {
            String name = new String(seen, i + 5, end - i - 5, StandardCharsets.US_ASCII);
            if (!name.isEmpty()) {
              commitStatements.add(name);
            }
            commit = true;
          }
        } else if (seen[i] == 'B' && at(seen, i + 5, 0)) {
          int end = zero(seen, i + 6);
          if (end > i + 6
              && end > old
              && commitStatements.contains(
                  new String(seen, i + 6, end - i - 6, StandardCharsets.US_ASCII))) {
            commit = true;
          }
        }
      }
      return commit;
    }

    void serverToClient() {
      byte[] tail = new byte[0];
      try (InputStream in = upstream.getInputStream();
          OutputStream out = client.getOutputStream()) {
        byte[] buf = new byte[65536];
        int n;
        while ((n = in.read(buf)) >= 0) {
          byte[] seen = concat(tail, buf, n);
          if (cutOnCommitAnswer && endsAfter(seen, COMMIT, tail.length)) {
            // the server answered the COMMIT (CommandComplete "COMMIT"): it is committed
            fired.incrementAndGet();
            cut();
            return;
          }
          out.write(buf, 0, n);
          out.flush();
          tail = suffix(seen, TAIL);
        }
      } catch (IOException e) {
        // cut, or closed by either side
      } finally {
        cut();
      }
    }

    private void cut() {
      closeQuietly(client);
      closeQuietly(upstream);
    }
  }

  /** Whether {@code needle} occurs in {@code b} ending after index {@code old} (in new bytes). */
  private static boolean endsAfter(byte[] b, byte[] needle, int old) {
    for (int i = Math.max(0, old - needle.length + 1); i + needle.length <= b.length; i++) {
      if (startsWith(b, i, needle)) {
        return true;
      }
    }
    return false;
  }

  private static byte[] concat(byte[] tail, byte[] buf, int n) {
    byte[] all = new byte[tail.length + n];
    System.arraycopy(tail, 0, all, 0, tail.length);
    System.arraycopy(buf, 0, all, tail.length, n);
    return all;
  }

  private static byte[] suffix(byte[] all, int n) {
    int from = Math.max(0, all.length - n);
    byte[] out = new byte[all.length - from];
    System.arraycopy(all, from, out, 0, out.length);
    return out;
  }

  /** The index of the first zero byte at or after {@code from}, or -1. */
  private static int zero(byte[] b, int from) {
    for (int i = from; i < b.length && i < from + 256; i++) {
      if (b[i] == 0) {
        return i;
      }
    }
    return -1;
  }

  private static boolean at(byte[] b, int i, int value) {
    return i < b.length && b[i] == value;
  }

  private static boolean startsWith(byte[] b, int from, byte[] prefix) {
    if (from + prefix.length > b.length) {
      return false;
    }
    for (int j = 0; j < prefix.length; j++) {
      if (b[from + j] != prefix[j]) {
        return false;
      }
    }
    return true;
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // already closed
    }
  }
}

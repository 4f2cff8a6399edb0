package dev.ledger.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy in front of the test server that can be turned into a black hole: while {@link
 * #blackhole()} holds, it accepts connections and keeps every socket open but moves no byte either
 * way (no FIN, no RST), as a partitioned network or a dropped route does; {@link #restore()} ends
 * it (bytes held back meanwhile are dropped with the connections that were open, which are cut, as
 * a long partition leaves them). Thread-safe.
 *
 * <pre>{@code
 * try (BlackholeProxy proxy = BlackholeProxy.to(PG.jdbcUrl())) {
 *   DataSource ds = PostgresExtension.pool(proxy.jdbcUrl(PG.jdbcUrl()), 4);
 *   proxy.blackhole();
 * }
 * }</pre>
 */
public final class BlackholeProxy implements AutoCloseable {

  private final String host;
  private final int port;
  private final ServerSocket server;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private volatile boolean blackholed;

  private BlackholeProxy(String host, int port) throws IOException {
    this.host = host;
    this.port = port;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::accept, "blackhole accept");
    t.setDaemon(true);
    t.start();
  }

  /**
   * A proxy in front of the server of a JDBC URL, forwarding.
   *
   * @param jdbcUrl e.g. {@code jdbc:postgresql://localhost:5432/db?user=postgres}
   * @return the running proxy
   * @throws IOException when it cannot listen
   */
  public static BlackholeProxy to(String jdbcUrl) throws IOException {
    java.net.InetSocketAddress server = ProxiedUrl.server(jdbcUrl);
    return new BlackholeProxy(server.getHostString(), server.getPort());
  }

  /**
   * The JDBC URL through this proxy.
   *
   * @param jdbcUrl the server's URL
   * @return the same URL with the proxy's host and port
   */
  public String jdbcUrl(String jdbcUrl) {
    return ProxiedUrl.through(jdbcUrl, server.getLocalPort());
  }

  /** From now on, no byte moves through any connection, old or new. */
  public void blackhole() {
    blackholed = true;
  }

  /** Ends the black hole: the connections open during it are cut, new ones forward again. */
  public void restore() {
    for (Socket s : sockets) {
      closeQuietly(s);
    }
    sockets.clear();
    blackholed = false;
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
        sockets.add(client);
        if (blackholed) {
          continue; // accepted, never answered: the client waits for the server's first byte
        }
        Socket upstream = new Socket(host, port);
        sockets.add(upstream);
        pump(client, upstream, "blackhole c->s");
        pump(upstream, client, "blackhole s->c");
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void pump(Socket from, Socket to, String name) {
    Thread t =
        new Thread(
            () -> {
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                byte[] buf = new byte[65536];
                int n;
                while ((n = in.read(buf)) >= 0) {
                  while (blackholed && !from.isClosed()) {
                    Thread.sleep(5); // hold the bytes: nothing arrives, nothing is refused
                  }
                  if (from.isClosed()) {
                    return;
                  }
                  out.write(buf, 0, n);
                  out.flush();
                }
              } catch (IOException e) {
                // cut, or closed by either side
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } finally {
                closeQuietly(from);
                closeQuietly(to);
              }
            },
            name);
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // already closed
    }
  }
}

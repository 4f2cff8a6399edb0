package dev.ledger.testing;

import java.net.InetSocketAddress;

/**
 * The JDBC URL arithmetic of the test proxies ({@link CommitDropProxy}, {@link BlackholeProxy}):
 * where a URL's server is, and the same URL through a proxy on a local port.
 */
final class ProxiedUrl {

  private static final String PREFIX = "jdbc:postgresql://";

  private ProxiedUrl() {}

  /**
   * The server a JDBC URL names.
   *
   * @param jdbcUrl e.g. {@code jdbc:postgresql://localhost:5432/db?user=postgres}
   * @return its host and port (5432 when the URL names none), unresolved
   */
  static InetSocketAddress server(String jdbcUrl) {
    String rest = jdbcUrl.substring(PREFIX.length());
    String hostPort = rest.substring(0, rest.indexOf('/'));
    int colon = hostPort.lastIndexOf(':');
    return colon < 0
        ? InetSocketAddress.createUnresolved(hostPort, 5432)
        : InetSocketAddress.createUnresolved(
            hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
  }

  /**
   * The same URL through a proxy listening on the loopback address.
   *
   * @param jdbcUrl the server's URL
   * @param port the proxy's port
   * @return the URL with {@code 127.0.0.1:port} for the server
   */
  static String through(String jdbcUrl, int port) {
    String rest = jdbcUrl.substring(PREFIX.length());
    return PREFIX + "127.0.0.1:" + port + rest.substring(rest.indexOf('/'));
  }
}

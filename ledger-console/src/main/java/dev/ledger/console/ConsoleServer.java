package dev.ledger.console;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Serves a {@link Console} standalone with the JDK's HTTP server ({@code com.sun.net.httpserver}):
 * no dependency, four request threads.
 *
 * <pre>{@code
 * try (ConsoleServer server = ConsoleServer.start(console, new InetSocketAddress("127.0.0.1", 0))) {
 *   System.out.println("listening on " + server.address());
 * }
 * }</pre>
 *
 * <p>Thread-safe; {@link #close()} stops accepting and waits up to a second for requests under way.
 */
public final class ConsoleServer implements AutoCloseable {

  private final HttpServer server;
  private final ExecutorService executor;

  private ConsoleServer(HttpServer server, ExecutorService executor) {
    this.server = server;
    this.executor = executor;
  }

  /**
   * Starts serving.
   *
   * @param console the console
   * @param address where to listen; port 0 picks a free one
   * @return the running server
   * @throws UncheckedIOException when the address cannot be bound (e.g. the port is taken)
   */
  public static ConsoleServer start(Console console, InetSocketAddress address) {
    HttpServer server;
    try {
      server = HttpServer.create(address, 64);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot listen on "
              + address.getHostString()
              + ":"
              + address.getPort()
              + ": "
              + e.getMessage(),
          e);
    }
    ExecutorService executor =
        Executors.newFixedThreadPool(
            4,
            r -> {
              Thread t = new Thread(r, "ledger-console-http");
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(executor);
    server.createContext("/", exchange -> serve(console, exchange));
    server.start();
    return new ConsoleServer(server, executor);
  }

  private static void serve(Console console, HttpExchange exchange) throws IOException {
    try (exchange) {
      Map<String, String> headers = new LinkedHashMap<>();
      exchange.getRequestHeaders().forEach((k, v) -> headers.put(k, v.isEmpty() ? "" : v.get(0)));
      String form = null;
      String type = headers.getOrDefault("Content-type", headers.get("Content-Type"));
      if (type == null) {
        type = exchange.getRequestHeaders().getFirst("content-type");
      }
      if (type != null
          && type.toLowerCase(Locale.ROOT).startsWith("application/x-www-form-urlencoded")) {
        try (InputStream in = exchange.getRequestBody()) {
          byte[] body = in.readNBytes(Request.MAX_FORM_BYTES + 1);
          if (body.length > Request.MAX_FORM_BYTES) {
            send(exchange, Response.text(413, "form too large"));
            return;
          }
          form = new String(body, StandardCharsets.UTF_8);
        }
      }
      Response r =
          console.handle(
              Request.of(
                  exchange.getRequestMethod(),
                  exchange.getRequestURI().getRawPath(),
                  exchange.getRequestURI().getRawQuery(),
                  headers,
                  form));
      send(exchange, r);
    }
  }

  private static void send(HttpExchange exchange, Response r) throws IOException {
    r.headers()
        .forEach(
            (k, v) -> {
              for (String one : List.of(v.split("\n"))) {
                exchange.getResponseHeaders().add(k, one);
              }
            });
    exchange.getResponseHeaders().set("Content-Type", r.contentType());
    boolean head = exchange.getRequestMethod().equalsIgnoreCase("HEAD");
    exchange.sendResponseHeaders(r.status(), head || r.body().length == 0 ? -1 : r.body().length);
    if (!head && r.body().length > 0) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(r.body());
      }
    }
  }

  /**
   * Where the server listens.
   *
   * @return the bound address (its port is the real one when 0 was asked)
   */
  public InetSocketAddress address() {
    return server.getAddress();
  }

  /** Stops the server. */
  @Override
  public void close() {
    server.stop(1);
    executor.shutdownNow();
    try {
      executor.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

package dev.ledger.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP proxy on 127.0.0.1 that delivers every chunk of bytes a fixed delay after it arrived, in
 * each direction: a network round trip of twice the delay between a client and a database on the
 * same machine, as if the database were on another host. Bytes, order and connection close pass
 * through unchanged; only time is added, and no CPU of the database's.
 *
 * <p>Used by B8's remote-tenant row, where the target assumes tenant databases on other servers and
 * the machine has no {@code netem} to add delay to the loopback interface.
 */
final class LatencyProxy implements AutoCloseable {

  private static final byte[] END = new byte[0];

  private final ServerSocket listener;
  private final InetSocketAddress target;
  private final long delayNanos;
  private volatile boolean closed;

  private LatencyProxy(InetSocketAddress target, long delayNanos) throws IOException {
    this.listener = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
    this.target = target;
    this.delayNanos = delayNanos;
    Thread accept = new Thread(this::acceptLoop, "latency-proxy-accept");
    accept.setDaemon(true);
    accept.start();
  }

  /**
   * Starts a proxy.
   *
   * @param target the database's address
   * @param oneWayMicros the delay added in each direction, µs
   * @return the running proxy; close it to stop accepting (open connections end with their peers)
   * @throws IOException when no port can be bound
   */
  static LatencyProxy start(InetSocketAddress target, long oneWayMicros) throws IOException {
    return new LatencyProxy(target, oneWayMicros * 1_000L);
  }

  /**
   * The port clients connect to, on 127.0.0.1.
   *
   * @return the port
   */
  int port() {
    return listener.getLocalPort();
  }

  private void acceptLoop() {
    while (!closed) {
      try {
        Socket client = listener.accept();
        Socket server = new Socket(target.getAddress(), target.getPort());
        client.setTcpNoDelay(true);
        server.setTcpNoDelay(true);
        java.util.concurrent.atomic.AtomicInteger ended =
            new java.util.concurrent.atomic.AtomicInteger();
        pipe(client, server, "up", ended);
        pipe(server, client, "down", ended);
      } catch (IOException e) {
        if (!closed) {
          System.err.println("latency proxy: " + e.getMessage());
        }
      }
    }
  }

  /** Reads from one socket and writes to the other, each chunk {@code delayNanos} later. */
  private void pipe(
      Socket from, Socket to, String direction, java.util.concurrent.atomic.AtomicInteger ended)
      throws IOException {
    InputStream in = from.getInputStream();
    OutputStream out = to.getOutputStream();
    BlockingQueue<Object[]> queue = new LinkedBlockingQueue<>();
    Thread reader =
        new Thread(
            () -> {
              byte[] buffer = new byte[64 * 1024];
              try {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  queue.add(
                      new Object[] {System.nanoTime() + delayNanos, Arrays.copyOf(buffer, n)});
                }
              } catch (IOException e) {
                // the peer closed or reset: end the other direction after what is queued
              }
              queue.add(new Object[] {System.nanoTime() + delayNanos, END});
            },
            "latency-proxy-read-" + direction);
    Thread writer =
        new Thread(
            () -> {
              try {
                while (true) {
                  Object[] item = queue.take();
                  long wait = (long) item[0] - System.nanoTime();
                  if (wait > 0) {
                    LockSupport.parkNanos(wait);
                  }
                  byte[] bytes = (byte[]) item[1];
                  if (bytes == END) {
                    break;
                  }
                  out.write(bytes);
                  out.flush();
                }
              } catch (IOException | InterruptedException e) {
                closeQuietly(from); // the other side is gone: end both directions
                closeQuietly(to);
              }
              try {
                to.shutdownOutput();
              } catch (IOException e) {
                // already closed
              }
              if (ended.incrementAndGet() == 2) { // both directions are done
                closeQuietly(from);
                closeQuietly(to);
              }
            },
            "latency-proxy-write-" + direction);
    reader.setDaemon(true);
    writer.setDaemon(true);
    reader.start();
    writer.start();
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // nothing to do
    }
  }

  @Override
  public void close() throws IOException {
    closed = true;
    listener.close();
  }
}

package dev.ledger.testing;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.TaskSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * A ledger worker for the multi-process tests, started by {@link WorkerProcess} in a JVM of its
 * own. It writes what it did to a result file (atomically, so a test polling for the file reads it
 * whole) and exits 0, or prints the failure and exits 1 (2 for a usage error).
 *
 * <ul>
 *   <li>{@code drain <jdbcUrl> <domain> <holder> <barrierDir> <out>}: after the barrier, claims
 *       (one task per claim, lease 5 minutes) and completes until nothing is claimable; writes one
 *       line {@code <task> <attempt>} per claim;
 *   <li>{@code hold <jdbcUrl> <domain> <holder> <leaseMs> <out>}: claims one task, writes {@code
 *       <lease token> <until>}, then sleeps until killed;
 *   <li>{@code file-first <jdbcUrl> <name> <barrierDir> <out> <domain>...}: after the barrier,
 *       opens the ledger and files one task in each domain (titled {@code filed by <name>}); writes
 *       one id per line.
 *   <li>{@code pool <jdbcUrl> <domain> <holder> <threads> <leaseMs> <log>}: runs a {@link
 *       dev.ledger.worker.WorkerPool} until killed (or SIGTERM, which closes it); its handler
 *       appends {@code <task> <attempt> <holder>} to the log for each task it starts (flushed at
 *       once, so a kill loses no line), sleeps 4 ms, and completes the task.
 *   <li>{@code feed <jdbcUrl> <consumer> <holder> <leaseMs> <log> <domain>...}: runs a {@link
 *       dev.ledger.feed.FeedRunner} of the consumer (from the start, batches of 50) until killed
 *       (or SIGTERM, which closes it); its handler appends {@code <domain> <seq> <task> <holder>}
 *       to the log for each event of a batch, flushed before the batch's checkpoint commits, so a
 *       kill loses no line (and a batch whose checkpoint did not commit is logged again by the next
 *       reader).
 * </ul>
 */
public final class LedgerWorkerMain {

  private static final Duration BARRIER_TIMEOUT = Duration.ofSeconds(90);

  private LedgerWorkerMain() {}

  /**
   * Runs one command.
   *
   * @param args the command and its arguments
   */
  public static void main(String[] args) {
    if (args.length < 2) {
      System.err.println("usage: drain|hold|file-first <jdbcUrl> ...");
      System.exit(2);
    }
    try (HikariDataSource pool =
        PostgresExtension.pool(args[1], 10, WorkerProcess.APPLICATION_NAME)) {
      String[] rest = Arrays.copyOfRange(args, 2, args.length);
      switch (args[0]) {
        case "drain":
          drain(open(pool), rest[0], rest[1], Paths.get(rest[2]), Paths.get(rest[3]));
          break;
        case "hold":
          hold(open(pool), rest[0], rest[1], Duration.ofMillis(Long.parseLong(rest[2])), rest[3]);
          break;
        case "pool":
          pool(
              pool,
              rest[0],
              rest[1],
              Integer.parseInt(rest[2]),
              Long.parseLong(rest[3]),
              rest[4],
              Long.parseLong(rest[5]));
          break;
        case "feed":
          feed(
              pool,
              rest[0],
              rest[1],
              Long.parseLong(rest[2]),
              rest[3],
              List.of(rest).subList(4, rest.length));
          break;
        case "file-first":
          fileFirst(
              pool,
              rest[0],
              Paths.get(rest[1]),
              Paths.get(rest[2]),
              List.of(rest).subList(3, rest.length));
          break;
        default:
          System.err.println("unknown command " + args[0]);
          System.exit(2);
      }
    } catch (Throwable t) {
      t.printStackTrace();
      System.exit(1);
    }
    System.exit(0);
  }

  private static void drain(Ledger ledger, String domain, String holder, Path barrier, Path out)
      throws IOException {
    // warm up on a domain of its own: a cold JVM's first claims (class loading, statements
    // rendered for a schema, the JIT) take longer than the test's warm threads need to drain the
    // queue, and the race would then have one side only
    String warmUp = domain + "-warm-up-" + holder;
    for (int i = 0; i < 20; i++) {
      ledger.admit(ledger.file(dev.ledger.TaskSpec.builder(warmUp, "warm-up " + i).build()));
      ledger.complete(
          ledger
              .claimNext(warmUp, holder, Duration.ofMinutes(5), List.of(), Label.PUBLIC)
              .orElseThrow(),
          null);
    }
    FileBarrier.arriveAndAwait(barrier, holder, BARRIER_TIMEOUT);
    List<String> claims = new ArrayList<>();
    while (true) {
      Optional<Lease> lease =
          ledger.claimNext(domain, holder, Duration.ofMinutes(5), List.of(), Label.PUBLIC);
      if (lease.isEmpty()) {
        break;
      }
      claims.add(lease.get().taskId() + " " + lease.get().attempt());
      ledger.complete(lease.get(), "done by " + holder);
    }
    write(out, claims);
    System.out.println(holder + " claimed and completed " + claims.size() + " tasks");
  }

  private static void hold(
      Ledger ledger, String domain, String holder, Duration leaseFor, String out)
      throws IOException, InterruptedException {
    Optional<Lease> lease = ledger.claimNext(domain, holder, leaseFor, List.of(), Label.PUBLIC);
    if (lease.isEmpty()) {
      throw new IllegalStateException("nothing to claim in " + domain);
    }
    write(Paths.get(out), List.of(lease.get().token() + " " + lease.get().until()));
    System.out.println(holder + " holds " + lease.get().taskId() + "; waiting to be killed");
    Thread.sleep(Long.MAX_VALUE);
  }

  private static void pool(
      DataSource ds,
      String domain,
      String holder,
      int threads,
      long leaseMs,
      String log,
      long handlerMs)
      throws IOException, InterruptedException {
    Ledger ledger = open(ds);
    try (java.io.FileOutputStream out = new java.io.FileOutputStream(log, true)) {
      java.util.concurrent.CountDownLatch stop = new java.util.concurrent.CountDownLatch(1);
      dev.ledger.worker.WorkerPool workers =
          dev.ledger.worker.WorkerPool.builder(ledger)
              .dataSource(ds)
              .holder(holder)
              .concurrency(threads)
              .lease(Duration.ofMillis(leaseMs))
              .pollInterval(Duration.ofMillis(300))
              .domain(
                  domain,
                  (task, ctx) -> {
                    byte[] line =
                        (task.id() + " " + ctx.lease().attempt() + " " + holder + "\n")
                            .getBytes(StandardCharsets.UTF_8);
                    synchronized (out) {
                      out.write(line);
                      out.flush();
                    }
                    Thread.sleep(handlerMs);
                    return dev.ledger.worker.Outcome.done();
                  })
              .start();
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    workers.close();
                    stop.countDown();
                  }));
      System.out.println(holder + " running");
      stop.await();
    }
  }

  private static void feed(
      DataSource ds, String consumer, String holder, long leaseMs, String log, List<String> domains)
      throws IOException, InterruptedException {
    Ledger ledger = open(ds);
    try (java.io.FileOutputStream out = new java.io.FileOutputStream(log, true)) {
      java.util.concurrent.CountDownLatch stop = new java.util.concurrent.CountDownLatch(1);
      dev.ledger.feed.FeedRunner runner =
          dev.ledger.feed.FeedRunner.builder(
                  ledger,
                  dev.ledger.feed.FeedSpec.builder(consumer, domains)
                      .holder(holder)
                      .lease(Duration.ofMillis(leaseMs))
                      .batchSize(50)
                      .fromStart(true)
                      .build(),
                  ds,
                  (events, tx) -> {
                    StringBuilder lines = new StringBuilder();
                    for (dev.ledger.feed.FeedEvent e : events) {
                      lines
                          .append(e.domain())
                          .append(' ')
                          .append(e.seq())
                          .append(' ')
                          .append(e.taskId())
                          .append(' ')
                          .append(holder)
                          .append('\n');
                    }
                    out.write(lines.toString().getBytes(StandardCharsets.UTF_8));
                    out.flush();
                  })
              .pollInterval(Duration.ofMillis(200))
              .build();
      runner.start();
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    runner.close();
                    stop.countDown();
                  }));
      System.out.println(holder + " following " + domains + " as " + consumer);
      stop.await();
    }
  }

  private static void fileFirst(
      DataSource pool, String name, Path barrier, Path out, List<String> domains)
      throws IOException {
    FileBarrier.arriveAndAwait(barrier, name, BARRIER_TIMEOUT);
    Ledger ledger = open(pool); // on a new database, the directory's migration races too
    List<String> ids = new ArrayList<>();
    for (String domain : domains) {
      ids.add(ledger.file(TaskSpec.builder(domain, "filed by " + name).createdBy(name).build()));
    }
    write(out, ids);
  }

  private static Ledger open(DataSource pool) {
    return Ledger.open(pool, LedgerConfig.defaults());
  }

  private static void write(Path out, List<String> lines) throws IOException {
    Path tmp = Files.createTempFile(out.toAbsolutePath().getParent(), "result", ".tmp");
    Files.write(tmp, lines, StandardCharsets.UTF_8);
    Files.move(tmp, out, StandardCopyOption.ATOMIC_MOVE);
  }
}

package dev.ledger.app.migrate;

import dev.ledger.migrate.FleetListener;
import dev.ledger.migrate.MigrationListener;
import dev.ledger.migrate.Operation;
import dev.ledger.migrate.TenantReport;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * A progress line on stderr for runs longer than {@link #THRESHOLD}: every second, {@code
 * done/total} and what is in flight ({@code ledger-app migrate: 312/2000 schemas, working on
 * ledger_x_1a2b3c4d (4 s)}). Short runs print nothing.
 */
public final class Progress implements MigrationListener, FleetListener, AutoCloseable {

  /** Runs shorter than this show no progress. */
  public static final Duration THRESHOLD = Duration.ofSeconds(2);

  private static final int SHOWN = 3;

  private final PrintWriter err;
  private final String label;
  private final String unit;
  private final long startedNanos = System.nanoTime();
  private final AtomicInteger total = new AtomicInteger(-1);
  private final AtomicInteger done = new AtomicInteger();
  private final Set<String> inFlight = new ConcurrentSkipListSet<>();
  private final ScheduledExecutorService ticker;

  /**
   * Starts a progress line that begins after {@code threshold} and repeats every {@code period}.
   *
   * @param err where to print (stderr)
   * @param label the command, e.g. {@code ledger-app migrate}
   * @param unit what is counted, plural, e.g. {@code schemas}
   * @param threshold how long a run goes before the first line; null for no automatic lines (a test
   *     calls {@link #tick()})
   * @param period the time between lines
   */
  Progress(PrintWriter err, String label, String unit, Duration threshold, Duration period) {
    this.err = err;
    this.label = label;
    this.unit = unit;
    if (threshold == null) {
      this.ticker = null;
    } else {
      this.ticker =
          Executors.newSingleThreadScheduledExecutor(
              r -> {
                Thread t = new Thread(r, "ledger-progress");
                t.setDaemon(true);
                return t;
              });
      ticker.scheduleAtFixedRate(
          this::tick, threshold.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /**
   * A progress line for a command, after {@link #THRESHOLD}, every second.
   *
   * @param err stderr
   * @param label the command
   * @param unit what is counted
   * @return the progress; close it when the run ends
   */
  public static Progress on(PrintWriter err, String label, String unit) {
    return new Progress(err, label, unit, THRESHOLD, Duration.ofSeconds(1));
  }

  /** Prints the progress line now. */
  void tick() {
    long seconds = Duration.ofNanos(System.nanoTime() - startedNanos).toSeconds();
    String now =
        inFlight.isEmpty()
            ? ""
            : ", working on "
                + inFlight.stream().limit(SHOWN).collect(Collectors.joining(", "))
                + (inFlight.size() > SHOWN ? " and " + (inFlight.size() - SHOWN) + " more" : "");
    String line =
        total.get() < 0
            ? label + ": reading the database (" + seconds + " s)"
            : label
                + ": "
                + done.get()
                + "/"
                + total.get()
                + " "
                + unit
                + now
                + " ("
                + seconds
                + " s)";
    synchronized (err) {
      err.println(line);
      err.flush();
    }
  }

  @Override
  public void started(Operation operation, int count) {
    total.set(count);
  }

  @Override
  public void schemaStarted(String schema) {
    inFlight.add(schema);
  }

  @Override
  public void schemaFinished(String schema, boolean failed) {
    inFlight.remove(schema);
    done.incrementAndGet();
  }

  @Override
  public void tenantStarted(String tenant) {
    inFlight.add(tenant);
  }

  @Override
  public void tenantFinished(TenantReport report) {
    inFlight.remove(report.tenant());
    done.incrementAndGet();
  }

  /**
   * What the run has done so far: the line's numbers as a value, for the report of an interrupted
   * run.
   *
   * @param total how many there are; -1 while the database is still being read
   * @param done how many finished
   * @param inFlight what was being worked on, in name order
   */
  public record Snapshot(int total, int done, java.util.List<String> inFlight) {}

  /**
   * The numbers now; safe from any thread (a shutdown hook reads them while the run goes on).
   *
   * @return a snapshot
   */
  public Snapshot snapshot() {
    return new Snapshot(total.get(), done.get(), java.util.List.copyOf(inFlight));
  }

  /**
   * What is counted, plural, e.g. {@code schemas}.
   *
   * @return the unit
   */
  public String unit() {
    return unit;
  }

  /**
   * Stops the line: no progress line is printed after this returns (a line being printed is waited
   * for, at most a second), so a final message printed next is the last line.
   */
  @Override
  public void close() {
    if (ticker != null) {
      ticker.shutdownNow();
      try {
        ticker.awaitTermination(1, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}

package dev.ledger.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@link LedgerWorkerMain} running in a JVM of its own, on the test's class path; its output and
 * errors go to files in a work directory, so a full pipe never blocks it. Closing it kills the
 * process if it still runs.
 *
 * <pre>{@code
 * try (WorkerProcess w = WorkerProcess.start(dir, "w1", "drain", PG.jdbcUrl(), ...)) {
 *   assertThat(w.awaitExit(Duration.ofMinutes(1))).as(w.describe()).isZero();
 * }
 * }</pre>
 */
public final class WorkerProcess implements AutoCloseable {

  /** The application name every worker process's connections show in {@code pg_stat_activity}. */
  public static final String APPLICATION_NAME = "ledger-test-worker";

  private final String name;
  private final Process process;
  private final Path stdout;
  private final Path stderr;

  private WorkerProcess(String name, Process process, Path stdout, Path stderr) {
    this.name = name;
    this.process = process;
    this.stdout = stdout;
    this.stderr = stderr;
  }

  /**
   * Starts {@code java -cp <this JVM's class path> dev.ledger.testing.LedgerWorkerMain <args>}.
   *
   * @param dir where its output files go
   * @param name a name for the files and messages
   * @param args the worker's arguments, command first
   * @return the running worker
   */
  public static WorkerProcess start(Path dir, String name, String... args) {
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx192m");
    command.add("-XX:+UseSerialGC");
    command.add("-XX:TieredStopAtLevel=1");
    command.add("-Duser.timezone=America/Sao_Paulo");
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(LedgerWorkerMain.class.getName());
    command.addAll(List.of(args));
    Path out = dir.resolve(name + ".out");
    Path err = dir.resolve(name + ".err");
    try {
      Files.createDirectories(dir);
      Process p =
          new ProcessBuilder(command)
              .redirectOutput(out.toFile())
              .redirectError(err.toFile())
              .start();
      return new WorkerProcess(name, p, out, err);
    } catch (IOException e) {
      throw new UncheckedIOException("could not start worker " + name, e);
    }
  }

  /**
   * The process.
   *
   * @return the process
   */
  public Process process() {
    return process;
  }

  /**
   * Waits for the process to exit.
   *
   * @param timeout how long at most
   * @return its exit code
   * @throws IllegalStateException when it is still running after the timeout (it is then killed)
   */
  public int awaitExit(java.time.Duration timeout) {
    try {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException(name + " still ran after " + timeout + "; " + describe());
      }
      return process.exitValue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted waiting for " + name, e);
    }
  }

  /**
   * Kills the process with SIGKILL (on Linux, {@link Process#destroyForcibly()}) and waits for it
   * to be gone.
   *
   * @return its exit code (137 on Linux)
   */
  public int kill() {
    process.destroyForcibly();
    try {
      return process.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted killing " + name, e);
    }
  }

  /**
   * Waits until no connection of a worker process is left on the database {@code ds} reaches. A
   * killed JVM's backends outlive it for a moment: a {@code COMMIT} it sent just before the kill
   * still commits, so a test reads what the workers wrote only after their backends are gone.
   *
   * @param ds a data source on the workers' database
   * @param timeout how long to wait at most
   * @throws IllegalStateException when backends are still there after {@code timeout}
   */
  public static void awaitBackendsGone(javax.sql.DataSource ds, java.time.Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    try (java.sql.Connection c = ds.getConnection();
        java.sql.PreparedStatement count =
            c.prepareStatement(
                "select count(*) from pg_stat_activity"
                    + " where datname = current_database() and application_name = ?")) {
      count.setString(1, APPLICATION_NAME);
      while (true) {
        long left;
        try (java.sql.ResultSet rs = count.executeQuery()) {
          rs.next();
          left = rs.getLong(1);
        }
        if (left == 0) {
          return;
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              left + " worker backends still connected after " + timeout);
        }
        Thread.sleep(20);
      }
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException("cannot count the workers' backends", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted waiting for the workers' backends", e);
    }
  }

  /**
   * The worker's name, exit state and error output, for assertion messages.
   *
   * @return a description
   */
  public String describe() {
    String state = process.isAlive() ? "running" : "exit " + process.exitValue();
    return "worker " + name + " (" + state + "), stderr:\n" + read(stderr) + "\nstdout:\n" + tail();
  }

  private String tail() {
    String all = read(stdout);
    return all.length() > 4000 ? all.substring(all.length() - 4000) : all;
  }

  private static String read(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      return "(unreadable: " + e + ")";
    }
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      kill();
    }
  }
}

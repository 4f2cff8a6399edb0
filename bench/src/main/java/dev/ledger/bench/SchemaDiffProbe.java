package dev.ledger.bench;

import dev.ledger.diff.DiffReport;
import dev.ledger.diff.FailOn;
import dev.ledger.diff.Risk;
import dev.ledger.diff.SchemaDiff;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;

/**
 * The child process of B19 ({@link SchemaDiffBench}): runs the schema diff once, as {@code
 * ledger-app schema-diff} does, in a JVM of its own (the schema diff's own classpath: Flyway and
 * pgjdbc at the versions the runnable jar ships), and prints one line {@code b19 ms=... changes=...
 * destructive=... verified=... statements=... heapPeakMb=... rssPeakMb=...}. The server's JDBC URL,
 * when there is one, comes in the environment variable {@code B19_URL}, so that it never appears in
 * a process listing; without it the diff starts its embedded PostgreSQL.
 */
public final class SchemaDiffProbe {

  private SchemaDiffProbe() {}

  /**
   * Runs one diff.
   *
   * @param args {@code BASE_DIR HEAD_DIR}
   * @throws IOException when {@code /proc/self/status} cannot be read
   */
  public static void main(String[] args) throws IOException {
    String url = System.getenv("B19_URL");
    long t0 = System.nanoTime();
    DiffReport report =
        SchemaDiff.run(
            new SchemaDiff.Request(
                args[0],
                args[1],
                Map.of(),
                Map.of(),
                Map.of(),
                url == null || url.isEmpty() ? null : url,
                FailOn.NEVER,
                false));
    // what the command does with a report: render the comment and the script
    int printed = report.markdown().length() + report.sql().length();
    long ms = (System.nanoTime() - t0) / 1_000_000;
    long heapPeak = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP && pool.getPeakUsage() != null) {
        heapPeak += pool.getPeakUsage().getUsed();
      }
    }
    System.out.printf(
        Locale.ROOT,
        "b19 ms=%d changes=%d destructive=%d verified=%b statements=%d printed=%d heapPeakMb=%.1f"
            + " rssPeakMb=%.1f%n",
        ms,
        report.diff().changes().size(),
        report.diff().count(Risk.DESTRUCTIVE),
        report.verified(),
        report.diff().script().size(),
        printed,
        heapPeak / 1048576.0,
        rssPeakKb() / 1024.0);
  }

  /** The process's peak resident set ({@code VmHWM}), in KiB; 0 where there is no /proc. */
  private static long rssPeakKb() throws IOException {
    Path status = Path.of("/proc/self/status");
    if (!Files.exists(status)) {
      return 0;
    }
    for (String line : Files.readAllLines(status)) {
      if (line.startsWith("VmHWM:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return 0;
  }
}

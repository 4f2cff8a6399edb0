package dev.ledger.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * How many cores the whole machine kept busy over an interval, from the kernel's {@code /proc/stat}
 * (every process: the harness, the embedded server, anything else running). A run that is bound by
 * the machine's CPU shows it: busy cores near the core count. Where {@code /proc/stat} is missing
 * (not Linux) the meter reads nothing and {@link #busyCores()} is NaN.
 *
 * <p>Source: proc(5), the first {@code cpu} line: user, nice, system, idle, iowait, irq, softirq,
 * steal in clock ticks; busy is everything but idle and iowait.
 */
final class CpuMeter {

  private static final Path STAT = Path.of("/proc/stat");

  private final long[] start;

  private CpuMeter(long[] start) {
    this.start = start;
  }

  /**
   * Starts measuring.
   *
   * @return the meter
   */
  static CpuMeter start() {
    return new CpuMeter(read());
  }

  /**
   * The machine's busy cores since {@link #start()}: busy ticks over all ticks, times the core
   * count.
   *
   * @return e.g. {@code 1.31} of 2 cores; NaN when unknown
   */
  double busyCores() {
    long[] now = read();
    if (start == null || now == null) {
      return Double.NaN;
    }
    long busy = (now[0] - now[1]) - (start[0] - start[1]);
    long total = now[0] - start[0];
    return total <= 0 ? Double.NaN : (double) busy / total * cores();
  }

  /**
   * The machine's cores as the JVM sees them.
   *
   * @return at least 1
   */
  static int cores() {
    return Runtime.getRuntime().availableProcessors();
  }

  /** All ticks and idle ticks (idle + iowait) of the {@code cpu} line, or null. */
  private static long[] read() {
    try {
      for (String line : Files.readAllLines(STAT)) {
        if (line.startsWith("cpu ")) {
          long[] v =
              Arrays.stream(line.substring(4).trim().split("\\s+"))
                  .limit(8)
                  .mapToLong(Long::parseLong)
                  .toArray();
          return new long[] {Arrays.stream(v).sum(), v[3] + v[4]};
        }
      }
      return null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }
}

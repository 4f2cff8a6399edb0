package dev.ledger.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The benchmark harness of issue 6: runs each workload and its baseline in the same run against the
 * same PostgreSQL, alternating them, checks correctness as it goes, and prints one table (workload,
 * ours, baseline, ratio). Run it through {@code bench/run.sh}, which builds what it needs:
 *
 * <pre>
 * bench/run.sh --quick                      # scaled down, a few minutes on 2 cores (what CI runs)
 * bench/run.sh                              # the full workloads, results into bench/results
 * bench/run.sh --url 'jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres'
 * bench/run.sh --only B2,B3                 # some of them
 * </pre>
 *
 * <p>Exit codes: 0 done, 1 a correctness check failed or the run broke, 2 bad arguments.
 */
public final class BenchMain {

  /**
   * The benchmarks in the order a full run takes them. B6 goes last: it makes and drops a database
   * of 10,000 schemas (some 500,000 files), and for minutes after the drop the file system slowed
   * whatever ran next (measured: B7 at 34 new schemas/s right after it, 87 to 99 on its own).
   */
  private static final List<String> ALL =
      List.of(
          "B1", "B2", "B3", "B4", "B5", "B9", "B10", "B12", "B13", "B14", "B16", "B17", "B18",
          "B19", "B20", "B7", "B8", "B11", "B15", "B6");

  private BenchMain() {}

  /**
   * Runs the harness.
   *
   * @param args {@code [--quick] [--url JDBC] [--out DIR] [--only B1,B2,...]}
   */
  public static void main(String[] args) {
    boolean quick = false;
    String url = null;
    Path out = null;
    Set<String> only = new LinkedHashSet<>(ALL);
    try {
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "--quick" -> quick = true;
          case "--url" -> url = value(args, ++i, "--url");
          case "--out" -> out = Path.of(value(args, ++i, "--out"));
          case "--only" -> {
            only.clear();
            for (String id : value(args, ++i, "--only").split(",")) {
              String b = id.trim().toUpperCase(Locale.ROOT);
              if (!ALL.contains(b)) {
                throw new IllegalArgumentException("--only: unknown benchmark " + id);
              }
              only.add(b);
            }
          }
          default -> throw new IllegalArgumentException("unknown argument " + args[i]);
        }
      }
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.err.println("usage: run.sh [--quick] [--url JDBC] [--out DIR] [--only B1,B2,...]");
      System.exit(2);
    }
    // whatever order --only names them in, run them in ALL's (B6 last)
    Set<String> chosen = only;
    only = new LinkedHashSet<>(ALL.stream().filter(chosen::contains).toList());
    if (out == null) {
      out = Path.of(quick ? "bench/target/results-quick" : "bench/results");
    }
    String command = System.getProperty("bench.command", "bench/run.sh " + String.join(" ", args));
    try {
      run(quick, url, out, only, command);
      System.exit(0);
    } catch (BenchFailure e) {
      System.err.println("BENCHMARK CHECK FAILED: " + e.getMessage());
      System.exit(1);
    } catch (Exception e) {
      System.err.println("BENCHMARK RUN FAILED: " + e);
      e.printStackTrace();
      System.exit(1);
    }
  }

  private static String value(String[] args, int i, String name) {
    if (i >= args.length) {
      throw new IllegalArgumentException(name + " needs a value");
    }
    return args[i];
  }

  private static void run(boolean quick, String url, Path out, Set<String> only, String command)
      throws Exception {
    Files.createDirectories(out);
    long t0 = System.nanoTime();
    String loadBefore = loadAverage();
    Results results = new Results();
    try (Server server = Server.start(url)) {
      Map<String, String> described = server.describe();
      System.out.println("ledger bench: " + (quick ? "quick" : "full") + " run, " + described);
      Context ctx = new Context(quick, server, results, out);
      Map<Integer, double[]> b2 = null;
      List<Charts.Point> b3 = null;
      List<Charts.Point> b9 = null;
      List<Charts.Point> b10 = null;
      List<Charts.Point> b12 = null;
      for (String id : only) {
        long s0 = System.nanoTime();
        System.out.println("== " + id);
        switch (id) {
          case "B1" -> AppendBench.run(ctx);
          case "B2" -> b2 = CycleBench.run(ctx);
          case "B3" -> b3 = ClaimDepthBench.run(ctx);
          case "B4" -> BatchClaimBench.run(ctx);
          case "B5" -> ReplayBench.run(ctx);
          case "B9" -> b9 = WorkerBench.throughput(ctx);
          case "B10" -> b10 = WorkerBench.pickup(ctx);
          case "B12" -> b12 = WorkerBench.enqueue(ctx);
          case "B13" -> OutboxBench.run(ctx);
          case "B14" -> ProducerBench.run(ctx);
          case "B6" -> MigrationBench.noOp(ctx);
          case "B7" -> MigrationBench.newDomains(ctx);
          case "B8" -> {
            MigrationBench.fleet(ctx);
            TenantBench.fleetOverServers(ctx);
          }
          case "B11" -> TenantBench.routing(ctx);
          case "B17" -> FeedBench.run(ctx);
          case "B18" -> RetentionBench.run(ctx);
          case "B15" -> ConsoleBench.run(ctx);
          case "B16" -> ControlsBench.run(ctx);
          case "B19" -> SchemaDiffBench.run(ctx);
          case "B20" -> CitusBench.run(ctx);
          default -> throw new IllegalStateException(id);
        }
        System.out.printf(Locale.ROOT, "   (%s took %.0f s)%n", id, (System.nanoTime() - s0) / 1e9);
      }
      if (b2 != null) {
        Charts.cycles(b2, out.resolve("b2-cycles.png"));
      }
      if (b3 != null) {
        Charts.latency(b3, out.resolve("b3-claim-latency.png"));
      }
      if (b9 != null) {
        Charts.workerThroughput(b9, out.resolve("b9-throughput.png"));
      }
      if (b10 != null) {
        Charts.pickup(b10, out.resolve("b10-pickup.png"));
      }
      if (b12 != null) {
        Charts.enqueue(b12, out.resolve("b12-enqueue.png"));
      }
      Duration took = Duration.ofNanos(System.nanoTime() - t0);
      String report = report(quick, command, described, loadBefore, took, results);
      Files.writeString(
          out.resolve(quick ? "results-quick.md" : "results-full.md"),
          report,
          StandardCharsets.UTF_8);
      System.out.println();
      System.out.println(results.text());
      System.out.printf(
          Locale.ROOT,
          "all checks passed; %d rows in %d s; report in %s%n",
          results.rows().size(),
          took.toSeconds(),
          out);
    }
  }

  private static String report(
      boolean quick,
      String command,
      Map<String, String> server,
      String loadBefore,
      Duration took,
      Results results)
      throws IOException {
    StringBuilder md = new StringBuilder();
    md.append("Run: `")
        .append(command)
        .append("` (")
        .append(quick ? "quick" : "full")
        .append(")\n\n");
    md.append("| | |\n|---|---|\n");
    md.append("| date | ")
        .append(ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ISO_OFFSET_DATE_TIME))
        .append(" |\n");
    md.append("| cores | ").append(Runtime.getRuntime().availableProcessors()).append(" |\n");
    md.append("| cpu | ").append(cpuModel()).append(" |\n");
    md.append("| load average before / after | ")
        .append(loadBefore)
        .append(" / ")
        .append(loadAverage())
        .append(" |\n");
    md.append("| java | ")
        .append(System.getProperty("java.vm.name"))
        .append(' ')
        .append(System.getProperty("java.version"))
        .append(" |\n");
    for (Map.Entry<String, String> e : server.entrySet()) {
      md.append("| ").append(e.getKey()).append(" | ").append(e.getValue()).append(" |\n");
    }
    md.append("| took | ").append(took.toSeconds()).append(" s |\n\n");
    md.append(results.markdown());
    return md.toString();
  }

  /**
   * The 1, 5 and 15 minute load averages, from {@code /proc/loadavg} where there is one.
   *
   * @return e.g. {@code 0.52 0.61 1.10}
   */
  static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException | RuntimeException e) {
      return String.format(
          Locale.ROOT, "%.2f", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }
  }

  private static String cpuModel() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("model name")) {
          return line.substring(line.indexOf(':') + 1).trim();
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux: the architecture will do
    }
    return System.getProperty("os.arch");
  }
}

package dev.ledger.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * B19 (issue 31, the schema diff's size): {@code schema-diff} on generated migration sets of 50,
 * 500 and 5,000 tables (plain tables with a key, an index, some foreign keys and views; every tenth
 * one a partitioned table with two partitions and an index), the head adding columns, indexes (also
 * on partitioned tables) and changed views. Each run is a JVM of its own on the schema diff's own
 * classpath ({@link SchemaDiffProbe}), once with the embedded PostgreSQL the tool starts by default
 * and once with {@code --url} (a database made on the harness's server). Measured: the time of
 * {@code SchemaDiff.run} plus rendering (both migration sets applied, both catalogs read, the diff,
 * its SQL checked on a third scratch schema with the independent catalog check), the JVM's peak
 * resident set and peak heap. The 5,000-table row's target is linear growth: at most 10 times the
 * 500-table time.
 *
 * <p>Checked on every run, quick or full: the report is verified (the SQL reaches the head
 * exactly), it has exactly the changes the generator made, none destructive.
 */
final class SchemaDiffBench {

  private static final Pattern LINE =
      Pattern.compile(
          "b19 ms=(\\d+) changes=(\\d+) destructive=(\\d+) verified=(\\w+) statements=(\\d+)"
              + " printed=(\\d+) heapPeakMb=([0-9.]+) rssPeakMb=([0-9.]+)");

  private SchemaDiffBench() {}

  /** One generated pair of migration sets. */
  record Sets(Path base, Path head, int tables, int expectedChanges) {}

  /** One measured run. */
  record Run(double seconds, double heapMb, double rssMb, int statements) {}

  static void run(Context ctx) throws Exception {
    int[] sizes = ctx.quick() ? new int[] {20} : new int[] {50, 500, 5_000};
    Path dir = Files.createTempDirectory("ledger-b19-");
    try {
      Map<String, Map<Integer, Run>> bySide = new LinkedHashMap<>();
      for (int n : sizes) {
        Sets sets = generate(dir.resolve("n" + n), n);
        // one run per size and server (-Dbench.b19.rounds=3: the median of three)
        int rounds = ctx.quick() ? 1 : Integer.getInteger("bench.b19.rounds", 1);
        for (String side : List.of("embedded", "--url")) {
          List<Run> runs = new ArrayList<>();
          for (int r = 0; r < rounds; r++) {
            runs.add(probe(ctx, sets, side));
          }
          runs.sort(Comparator.comparingDouble(Run::seconds));
          Run median = runs.get(runs.size() / 2);
          bySide.computeIfAbsent(side, k -> new LinkedHashMap<>()).put(n, median);
          System.out.printf(
              Locale.ROOT,
              "  B19 %,d tables, %s: %.2f s, peak RSS %.0f MB, peak heap %.0f MB, %d statements%n",
              n,
              side,
              median.seconds(),
              median.rssMb(),
              median.heapMb(),
              median.statements());
        }
      }
      for (Map.Entry<String, Map<Integer, Run>> e : bySide.entrySet()) {
        String side = e.getKey();
        Map<Integer, Run> runs = e.getValue();
        Integer previous = null;
        for (int n : sizes) {
          Run run = runs.get(n);
          double bound = Double.NaN;
          Boolean met = null;
          String target = "";
          if (previous != null && n == previous * 10) {
            bound = 10 * runs.get(previous).seconds();
            target = "≥ 1.00x (linear)";
            met = ctx.quick() ? null : run.seconds() <= bound;
          }
          ctx.results()
              .add(
                  new Results.Row(
                      "B19",
                      String.format(Locale.ROOT, "schema-diff, %,d tables, %s", n, side),
                      "s",
                      Results.Kind.TIME,
                      run.seconds(),
                      bound,
                      previous == null ? "none" : "10x the " + previous + "-table time",
                      target,
                      met));
          ctx.results()
              .add(
                  new Results.Row(
                      "B19",
                      String.format(
                          Locale.ROOT, "schema-diff JVM peak RSS, %,d tables, %s", n, side),
                      "MB",
                      Results.Kind.TIME,
                      run.rssMb(),
                      Double.NaN,
                      "none",
                      "",
                      null));
          previous = n;
        }
      }
      ctx.results()
          .note(
              "B19: time = SchemaDiff.run plus rendering, in a JVM of its own (-Xmx4g): both sets"
                  + " applied by Flyway, both catalogs read, the diff, its SQL run on a third scratch"
                  + " schema and checked (catalog reader and independent fingerprint); embedded ="
                  + " the tool's own PostgreSQL (its start included), --url = a database on the"
                  + " harness's server; peak RSS is the JVM's (VmHWM), not the server's;"
                  + " one run per size (-Dbench.b19.rounds=N: the median of N); each run verified, with exactly the generated changes");
    } finally {
      try (Stream<Path> walk = Files.walk(dir)) {
        walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private static Run probe(Context ctx, Sets sets, String side) throws Exception {
    String db = null;
    try {
      String url = "";
      if (side.equals("--url")) {
        db = ctx.server().createDatabase("b19");
        url = ctx.server().url(db);
      }
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      cmd.addAll(Arrays.asList("-Xmx4g", "-XX:+UseParallelGC", "-cp", probeClasspath()));
      cmd.add(SchemaDiffProbe.class.getName());
      cmd.add(sets.base().toString());
      cmd.add(sets.head().toString());
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
      pb.environment().put("B19_URL", url);
      Process p = pb.start();
      StringBuilder output = new StringBuilder();
      Matcher found = null;
      try (BufferedReader r =
          new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          Matcher m = LINE.matcher(line);
          if (m.find()) {
            found = m;
          } else if (output.length() < 20_000) {
            output.append(line).append('\n');
          }
        }
      }
      if (!p.waitFor(60, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        throw new BenchFailure("B19 " + side + " " + sets.tables() + " tables: still running");
      }
      Context.check(
          p.exitValue() == 0 && found != null,
          "B19 " + side + " " + sets.tables() + " tables: the diff failed:\n" + output);
      Context.check(
          Boolean.parseBoolean(found.group(4)),
          "B19 " + side + " " + sets.tables() + " tables: the SQL was not verified");
      int changes = Integer.parseInt(found.group(2));
      Context.check(
          changes == sets.expectedChanges(),
          "B19 "
              + side
              + " "
              + sets.tables()
              + " tables: "
              + changes
              + " changes, not the "
              + sets.expectedChanges()
              + " generated");
      Context.check(
          Integer.parseInt(found.group(3)) == 0,
          "B19 " + side + " " + sets.tables() + " tables: a destructive change");
      return new Run(
          Long.parseLong(found.group(1)) / 1000.0,
          Double.parseDouble(found.group(7)),
          Double.parseDouble(found.group(8)),
          Integer.parseInt(found.group(5)));
    } finally {
      if (db != null) {
        ctx.server().dropDatabase(db);
      }
    }
  }

  /**
   * The probe's classpath: the harness's classes (for the probe) and the schema diff's own runtime
   * classpath, which {@code bench/run.sh} writes to {@code ledger-schema-diff/target/classpath.txt}
   * (the harness's own classpath has the ledger's older Flyway).
   */
  private static String probeClasspath() throws IOException {
    Path diff = Path.of("ledger-schema-diff", "target");
    Path cp = diff.resolve("classpath.txt");
    if (!Files.exists(cp)) {
      throw new BenchFailure(
          "B19: " + cp + " is missing; build with bench/run.sh (without --no-build) once");
    }
    return String.join(
        java.io.File.pathSeparator,
        Path.of("bench", "target", "classes").toAbsolutePath().toString(),
        diff.resolve("classes").toAbsolutePath().toString(),
        Files.readString(cp).trim());
  }

  /**
   * Writes a base set (one migration per 250 tables) and a head set (the same plus one) of about
   * {@code n} tables.
   *
   * @param dir where, made new
   * @param n how many tables, partitions counted
   * @return the sets and the number of changes the head makes
   */
  static Sets generate(Path dir, int n) throws IOException {
    StringBuilder base = new StringBuilder();
    StringBuilder change = new StringBuilder();
    int tables = 0;
    int plain = 0;
    int partitioned = 0;
    int changes = 0;
    String previousPlain = null;
    int split = 0;
    for (int unit = 0; tables < n; unit++) {
      if (tables - split >= 250) {
        base.append("-- next migration\n");
        split = tables;
      }
      if (unit % 10 == 9 && n - tables >= 3) {
        String p = "p_" + unit;
        base.append("CREATE TABLE ")
            .append(p)
            .append(
                " (id bigint, at date NOT NULL, v integer, PRIMARY KEY (id, at))"
                    + " PARTITION BY RANGE (at);\n");
        base.append("CREATE TABLE ")
            .append(p)
            .append("_2025 PARTITION OF ")
            .append(p)
            .append(" FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');\n");
        base.append("CREATE TABLE ")
            .append(p)
            .append("_2026 PARTITION OF ")
            .append(p)
            .append(" FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');\n");
        base.append("CREATE INDEX ").append(p).append("_v ON ").append(p).append(" (v);\n");
        if (partitioned % 2 == 0) {
          change.append("CREATE INDEX ").append(p).append("_at ON ").append(p).append(" (at);\n");
          changes++;
        }
        partitioned++;
        tables += 3;
        continue;
      }
      String t = "t_" + unit;
      base.append("CREATE TABLE ")
          .append(t)
          .append(
              " (id bigint PRIMARY KEY, a integer, b text, c timestamptz DEFAULT now(),"
                  + " ref bigint);\n");
      base.append("CREATE INDEX ").append(t).append("_a ON ").append(t).append(" (a);\n");
      if (plain % 4 == 1 && previousPlain != null) {
        base.append("ALTER TABLE ")
            .append(t)
            .append(" ADD CONSTRAINT ")
            .append(t)
            .append("_ref FOREIGN KEY (ref) REFERENCES ")
            .append(previousPlain)
            .append(";\n");
      }
      if (plain % 10 == 0) {
        base.append("CREATE VIEW v_")
            .append(unit)
            .append(" AS SELECT id, a, b FROM ")
            .append(t)
            .append(" WHERE a > 0;\n");
        if (plain % 20 == 0) {
          change
              .append("CREATE OR REPLACE VIEW v_")
              .append(unit)
              .append(" AS SELECT id, a, b, c FROM ")
              .append(t)
              .append(" WHERE a > 0;\n");
          changes++;
        }
      }
      if (plain % 10 == 3) {
        change.append("ALTER TABLE ").append(t).append(" ADD COLUMN d text;\n");
        changes++;
      }
      if (plain % 20 == 7) {
        change.append("CREATE INDEX ").append(t).append("_b ON ").append(t).append(" (b);\n");
        changes++;
      }
      previousPlain = t;
      plain++;
      tables++;
    }
    Path baseDir = Files.createDirectories(dir.resolve("base"));
    Path headDir = Files.createDirectories(dir.resolve("head"));
    // the base's history: one migration per 250 tables, as a project that grew to this size has
    // (one transaction of 5,000 tables needs more locks than a default server's lock table holds)
    int version = 0;
    for (String script : base.toString().split("(?m)^-- next migration\n")) {
      version++;
      Files.writeString(baseDir.resolve("V" + version + "__tables.sql"), script);
      Files.writeString(headDir.resolve("V" + version + "__tables.sql"), script);
    }
    Files.writeString(headDir.resolve("V" + (version + 1) + "__changes.sql"), change);
    return new Sets(baseDir, headDir, tables, changes);
  }
}

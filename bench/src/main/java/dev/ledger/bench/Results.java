package dev.ledger.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The one table a run prints: per workload, ours, the baseline and the ratio, plus the issue's
 * target and whether this run met it. The ratio is always "ours' speed over the baseline's speed":
 * ours ÷ baseline for rates, baseline ÷ ours for latencies and durations, so above 1 means ours is
 * faster.
 */
final class Results {

  /** How a row's numbers read. */
  enum Kind {
    /** a rate: more is better. */
    RATE,
    /** a time: less is better. */
    TIME
  }

  /**
   * One row.
   *
   * @param id the benchmark, e.g. {@code B2}
   * @param workload what was run
   * @param unit the unit of ours and baseline, e.g. {@code cycles/s}
   * @param kind rate or time
   * @param ours our number, or NaN when not measured
   * @param baseline the baseline's number, or NaN when not measured
   * @param baselineName what the baseline is
   * @param target the target for this row, or empty
   * @param met whether the target was met: null when the row has no target or cannot tell
   */
  record Row(
      String id,
      String workload,
      String unit,
      Kind kind,
      double ours,
      double baseline,
      String baselineName,
      String target,
      Boolean met) {

    /**
     * Ours' speed over the baseline's.
     *
     * @return the ratio, NaN when either side is missing
     */
    double ratio() {
      return kind == Kind.RATE ? ours / baseline : baseline / ours;
    }
  }

  private final List<Row> rows = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();

  /**
   * Adds a row and prints it at once, so a long run shows progress.
   *
   * @param row the row
   */
  synchronized void add(Row row) {
    rows.add(row);
    System.out.printf(
        Locale.ROOT,
        "  %-4s %-48s ours %s  baseline %s  ratio %s%n",
        row.id(),
        row.workload(),
        number(row.ours(), row.unit()),
        number(row.baseline(), row.unit()),
        ratio(row));
  }

  /**
   * Adds a note printed under the table.
   *
   * @param note the note
   */
  synchronized void note(String note) {
    notes.add(note);
    System.out.println("  note: " + note);
  }

  /**
   * The rows so far.
   *
   * @return a copy
   */
  synchronized List<Row> rows() {
    return List.copyOf(rows);
  }

  /**
   * The table as GitHub Markdown.
   *
   * @return the table and its notes
   */
  synchronized String markdown() {
    StringBuilder out = new StringBuilder();
    out.append("| id | workload | ours | baseline | ratio | target | met |\n");
    out.append("|---|---|---:|---:|---:|---|---|\n");
    for (Row r : rows) {
      out.append("| ")
          .append(r.id())
          .append(" | ")
          .append(r.workload())
          .append(" | ")
          .append(number(r.ours(), r.unit()))
          .append(" | ")
          .append(number(r.baseline(), r.unit()))
          .append(" (")
          .append(r.baselineName())
          .append(") | ")
          .append(ratio(r))
          .append(" | ")
          .append(r.target())
          .append(" | ")
          .append(r.met() == null ? "" : r.met() ? "yes" : "**no**")
          .append(" |\n");
    }
    if (!notes.isEmpty()) {
      out.append('\n');
      for (String n : notes) {
        out.append("- ").append(n).append('\n');
      }
    }
    return out.toString();
  }

  /**
   * The table as plain text for the terminal.
   *
   * @return aligned columns
   */
  synchronized String text() {
    StringBuilder out = new StringBuilder();
    String format = "%-4s %-52s %18s %18s %9s  %s%n";
    out.append(
        String.format(
            Locale.ROOT, format, "id", "workload", "ours", "baseline", "ratio", "target"));
    for (Row r : rows) {
      String target =
          r.target().isEmpty()
              ? ""
              : r.target() + (r.met() == null ? "" : r.met() ? "  met" : "  MISSED");
      out.append(
          String.format(
              Locale.ROOT,
              format,
              r.id(),
              r.workload(),
              number(r.ours(), r.unit()),
              number(r.baseline(), r.unit()),
              ratio(r),
              target));
    }
    return out.toString();
  }

  static String number(double v, String unit) {
    if (Double.isNaN(v)) {
      return "not measured";
    }
    String n;
    double a = Math.abs(v);
    if (a >= 100) {
      n = String.format(Locale.ROOT, "%,.0f", v);
    } else if (a >= 10) {
      n = String.format(Locale.ROOT, "%.1f", v);
    } else if (a >= 1) {
      n = String.format(Locale.ROOT, "%.2f", v);
    } else {
      n = String.format(Locale.ROOT, "%.3f", v);
    }
    return n + " " + unit;
  }

  static String ratio(Row r) {
    double x = r.ratio();
    return Double.isNaN(x) || Double.isInfinite(x) ? "—" : String.format(Locale.ROOT, "%.2fx", x);
  }
}

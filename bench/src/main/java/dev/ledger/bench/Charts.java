package dev.ledger.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.imageio.ImageIO;

/**
 * The PNG plots of a run, drawn with Java2D and written with ImageIO (no charting library): B2's
 * cycles/s against workers, and B3's claim latency against queue depth and filters.
 */
final class Charts {

  private static final int W = 900;
  private static final int H = 520;
  private static final int LEFT = 90;
  private static final int RIGHT = 30;
  private static final int TOP = 60;
  private static final int BOTTOM = 80;
  private static final Color OURS = new Color(0x1f77b4);
  private static final Color BASE = new Color(0xd62728);

  private Charts() {}

  /** One group of bars or one x position: a label and ours' and the baseline's values. */
  record Point(String label, double ours, double baseline) {}

  /**
   * B2: cycles/s against workers, one line for ours and one for the baseline.
   *
   * @param byWorkers workers to [ours, baseline]
   * @param file where to write the PNG
   * @throws IOException when it cannot be written
   */
  static void cycles(Map<Integer, double[]> byWorkers, Path file) throws IOException {
    List<Point> points = new ArrayList<>();
    byWorkers.forEach(
        (w, v) -> points.add(new Point(w + (w == 1 ? " worker" : " workers"), v[0], v[1])));
    draw(
        file,
        "B2: claim+complete cycles/s vs workers (100k admitted)",
        "cycles/s",
        "ours (Ledger API)",
        "baseline (same SQL, raw JDBC)",
        points,
        false,
        true);
  }

  /**
   * B3: p50 claim latency per scenario, bars for ours and the naive baseline, log scale.
   *
   * @param points the scenarios in order
   * @param file where to write the PNG
   * @throws IOException when it cannot be written
   */
  static void latency(List<Point> points, Path file) throws IOException {
    draw(
        file,
        "B3: p50 claim latency by queue depth and ineligible rows ahead (log scale)",
        "ms per claim (p50)",
        "ours (claimNext)",
        "naive ORDER BY ... LIMIT 1 FOR UPDATE SKIP LOCKED",
        points,
        true,
        false);
  }

  /**
   * B9: tasks/s per round and the medians, bars for ours and db-scheduler.
   *
   * @param points the rounds, then the medians
   * @param file where to write the PNG
   * @throws IOException when it cannot be written
   */
  static void workerThroughput(List<Point> points, Path file) throws IOException {
    draw(
        file,
        "B9: drain no-op tasks, 8 worker threads (tasks/s)",
        "tasks/s",
        "ours (WorkerPool)",
        "db-scheduler lock-and-fetch",
        points,
        false,
        false);
  }

  /**
   * B10: pickup latency percentiles, bars for ours and each db-scheduler mode, log scale.
   *
   * @param points one per percentile and baseline
   * @param file where to write the PNG
   * @throws IOException when it cannot be written
   */
  static void pickup(List<Point> points, Path file) throws IOException {
    draw(
        file,
        "B10: pickup latency, admitting commit to handler start (log scale)",
        "ms",
        "ours (LISTEN/NOTIFY)",
        "db-scheduler (per bar)",
        points,
        true,
        false);
  }

  /**
   * B12: enqueue rate per round and the medians, bars for ours and db-scheduler.
   *
   * @param points the rounds, then the medians
   * @param file where to write the PNG
   * @throws IOException when it cannot be written
   */
  static void enqueue(List<Point> points, Path file) throws IOException {
    draw(
        file,
        "B12: enqueue tasks, file + admit in batches (tasks/s)",
        "tasks/s",
        "ours (Ledger.fileAll)",
        "db-scheduler scheduleBatch",
        points,
        false,
        false);
  }

  private static void draw(
      Path file,
      String title,
      String yLabel,
      String oursName,
      String baseName,
      List<Point> points,
      boolean log,
      boolean lines)
      throws IOException {
    BufferedImage img = new BufferedImage(W, H, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = img.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setRenderingHint(
        RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, W, H);
    g.setColor(Color.BLACK);
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
    g.drawString(title, LEFT, 30);
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));

    double max = 0;
    double min = Double.MAX_VALUE;
    for (Point p : points) {
      for (double v : new double[] {p.ours(), p.baseline()}) {
        if (v > 0 && !Double.isNaN(v)) {
          max = Math.max(max, v);
          min = Math.min(min, v);
        }
      }
    }
    if (max == 0) {
      max = 1;
      min = 1;
    }
    Scale y = log ? new LogScale(min, max) : new LinearScale(max);
    int plotW = W - LEFT - RIGHT;
    int plotH = H - TOP - BOTTOM;

    // grid and y ticks
    for (double t : y.ticks()) {
      int py = TOP + plotH - (int) Math.round(y.at(t) * plotH);
      g.setColor(new Color(0xdddddd));
      g.drawLine(LEFT, py, LEFT + plotW, py);
      g.setColor(Color.DARK_GRAY);
      String s = tick(t);
      g.drawString(s, LEFT - 8 - g.getFontMetrics().stringWidth(s), py + 4);
    }
    g.setColor(Color.BLACK);
    g.drawLine(LEFT, TOP, LEFT, TOP + plotH);
    g.drawLine(LEFT, TOP + plotH, LEFT + plotW, TOP + plotH);
    Graphics2D r = (Graphics2D) g.create();
    r.rotate(-Math.PI / 2);
    r.drawString(yLabel, -(TOP + plotH / 2 + r.getFontMetrics().stringWidth(yLabel) / 2), 20);
    r.dispose();

    int n = points.size();
    double slot = plotW / (double) n;
    FontMetrics fm = g.getFontMetrics();
    int[][] prev = null;
    for (int i = 0; i < n; i++) {
      Point p = points.get(i);
      int cx = LEFT + (int) Math.round(slot * (i + 0.5));
      g.setColor(Color.BLACK);
      g.drawString(p.label(), cx - fm.stringWidth(p.label()) / 2, TOP + plotH + 20);
      double[] values = {p.ours(), p.baseline()};
      Color[] colors = {OURS, BASE};
      int[][] here = new int[2][];
      for (int k = 0; k < 2; k++) {
        if (Double.isNaN(values[k]) || values[k] <= 0) {
          continue;
        }
        int py = TOP + plotH - (int) Math.round(y.at(values[k]) * plotH);
        g.setColor(colors[k]);
        if (lines) {
          g.fillOval(cx - 5, py - 5, 10, 10);
          here[k] = new int[] {cx, py};
          if (prev != null && prev[k] != null) {
            g.setStroke(new BasicStroke(2.5f));
            g.drawLine(prev[k][0], prev[k][1], cx, py);
            g.setStroke(new BasicStroke(1f));
          }
          String s = tick(values[k]);
          g.drawString(s, cx + 8, py + (k == 0 ? -6 : 14));
        } else {
          int bw = (int) (slot * 0.32);
          int bx = cx - bw + k * bw;
          g.fillRect(bx, py, bw - 2, TOP + plotH - py);
          g.setColor(Color.BLACK);
          String s = tick(values[k]);
          g.drawString(s, bx + (bw - fm.stringWidth(s)) / 2, py - 4);
        }
      }
      prev = here;
    }
    // legend
    int lx = LEFT + 10;
    int ly = TOP + plotH + 45;
    g.setColor(OURS);
    g.fillRect(lx, ly - 10, 14, 10);
    g.setColor(Color.BLACK);
    g.drawString(oursName, lx + 20, ly);
    int lx2 = lx + 40 + fm.stringWidth(oursName);
    g.setColor(BASE);
    g.fillRect(lx2, ly - 10, 14, 10);
    g.setColor(Color.BLACK);
    g.drawString(baseName, lx2 + 20, ly);
    g.dispose();
    ImageIO.write(img, "png", file.toFile());
  }

  private static String tick(double v) {
    if (v == 0) {
      return "0";
    }
    if (v >= 1000) {
      return String.format(Locale.ROOT, "%,.0f", v);
    }
    if (v >= 10) {
      return String.format(Locale.ROOT, "%.0f", v);
    }
    if (v >= 1) {
      return String.format(Locale.ROOT, "%.1f", v);
    }
    return String.format(Locale.ROOT, "%.2f", v);
  }

  private interface Scale {
    double at(double v);

    List<Double> ticks();
  }

  private record LinearScale(double top) implements Scale {
    LinearScale(double top) {
      double step = Math.pow(10, Math.floor(Math.log10(top)));
      this.top = Math.ceil(top * 1.1 / step) * step;
    }

    @Override
    public double at(double v) {
      return v / top;
    }

    @Override
    public List<Double> ticks() {
      List<Double> t = new ArrayList<>();
      for (int i = 0; i <= 5; i++) {
        t.add(top * i / 5);
      }
      return t;
    }
  }

  private record LogScale(double lo, double hi) implements Scale {
    LogScale(double lo, double hi) {
      this.lo = Math.pow(10, Math.floor(Math.log10(lo)));
      this.hi = Math.pow(10, Math.ceil(Math.log10(hi * 1.5)));
    }

    @Override
    public double at(double v) {
      return (Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo));
    }

    @Override
    public List<Double> ticks() {
      List<Double> t = new ArrayList<>();
      for (double v = lo; v <= hi * 1.0001; v *= 10) {
        t.add(v);
      }
      return t;
    }
  }
}

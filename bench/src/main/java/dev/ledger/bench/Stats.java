package dev.ledger.bench;

import java.util.Arrays;
import java.util.List;

/** Small statistics over measured samples. */
final class Stats {

  private Stats() {}

  /**
   * The median.
   *
   * @param values samples, at least one
   * @return the median (mean of the two middle values for an even count)
   */
  static double median(List<Double> values) {
    return percentile(values.stream().mapToDouble(Double::doubleValue).toArray(), 50);
  }

  /**
   * A percentile by linear interpolation between closest ranks.
   *
   * @param values samples, at least one (not modified)
   * @param p the percentile, 0 to 100
   * @return the value
   */
  static double percentile(double[] values, double p) {
    if (values.length == 0) {
      throw new IllegalArgumentException("no samples");
    }
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    double rank = p / 100.0 * (sorted.length - 1);
    int lo = (int) Math.floor(rank);
    int hi = (int) Math.ceil(rank);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
  }
}

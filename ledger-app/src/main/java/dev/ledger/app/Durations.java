package dev.ledger.app;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Reads durations as operators write them: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 2h},
 * {@code 1d}, or ISO-8601 ({@code PT5M}).
 */
public final class Durations implements ITypeConverter<Duration> {

  private static final Pattern SHORT = Pattern.compile("(\\d{1,9})(ms|s|m|h|d)");

  @Override
  public Duration convert(String value) {
    return parse(value);
  }

  /**
   * Parses a duration.
   *
   * @param value e.g. {@code 5m}
   * @return the duration
   * @throws TypeConversionException naming the allowed forms when the value fits none, and saying a
   *     duration must be positive when it is negative ({@code -5m}, {@code PT-5M})
   */
  public static Duration parse(String value) {
    String text = value.trim();
    if (text.startsWith("-")) {
      try {
        parse(text.substring(1));
      } catch (TypeConversionException e) {
        throw notADuration(value); // a bad form is named as such, not as a negative
      }
      throw negative(value);
    }
    Matcher m = SHORT.matcher(text);
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      return switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofDays(n);
      };
    }
    Duration d;
    try {
      d = Duration.parse(text);
    } catch (DateTimeParseException e) {
      throw notADuration(value);
    }
    if (d.isNegative()) {
      throw negative(value);
    }
    return d;
  }

  /**
   * Writes a duration as operators write it, largest unit first: {@code 7d}, {@code 1h30m}, {@code
   * 100ms}, {@code 1s500ms}; {@code 0s} for zero. Parts below a millisecond, and negative
   * durations, are written in ISO-8601 ({@code PT0.0000001S}).
   *
   * @param d the duration, not null
   * @return the text, which {@link #parse} reads back for each single-unit form
   */
  public static String format(Duration d) {
    if (d.isNegative() || d.getNano() % 1_000_000 != 0) {
      return d.toString();
    }
    if (d.isZero()) {
      return "0s";
    }
    StringBuilder b = new StringBuilder();
    if (d.toDays() >= 2 && d.equals(Duration.ofDays(d.toDays()))) {
      return d.toDays() + "d";
    }
    append(b, d.toHours(), "h");
    append(b, d.toMinutesPart(), "m");
    append(b, d.toSecondsPart(), "s");
    append(b, d.toMillisPart(), "ms");
    return b.toString();
  }

  private static void append(StringBuilder b, long n, String unit) {
    if (n != 0) {
      b.append(n).append(unit);
    }
  }

  private static TypeConversionException notADuration(String value) {
    return new TypeConversionException(
        "'" + value + "' is not a duration; use e.g. 500ms, 30s, 5m, 2h, 1d or PT5M");
  }

  private static TypeConversionException negative(String value) {
    return new TypeConversionException(
        "'" + value + "' is negative: a duration must be positive, e.g. 500ms, 30s, 5m or PT5M");
  }
}

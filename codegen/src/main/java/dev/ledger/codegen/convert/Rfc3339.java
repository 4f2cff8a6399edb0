package dev.ledger.codegen.convert;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The ledger's one time format (DESIGN section 3): RFC 3339, UTC, {@code Z}, exactly six fractional
 * digits, e.g. {@code 2026-11-29T23:35:59.123456Z}, so that text order is time order.
 *
 * <p>{@link #parse(String)} reads any valid RFC 3339 date-time (any fraction width, {@code Z} or a
 * numeric offset, {@code T}/{@code t} or a space between date and time); {@link #format(Instant)}
 * writes only the canonical form, truncating (never rounding) to microseconds. Ports the
 * reference's {@code parse_time} and {@code fmt_time}.
 */
public final class Rfc3339 {

  private static final Pattern SHAPE =
      Pattern.compile(
          "(\\d{4})-(\\d{2})-(\\d{2})[Tt ](\\d{2}):(\\d{2}):(\\d{2})(?:\\.(\\d{1,}))?"
              + "(?:([Zz])|([+-])(\\d{2}):(\\d{2}))");

  /** The first instant the format can write: {@code 0000-01-01T00:00:00.000000Z}. */
  public static final Instant MIN = Instant.parse("0000-01-01T00:00:00Z");

  /** The last instant the format can write: {@code 9999-12-31T23:59:59.999999Z}. */
  public static final Instant MAX = Instant.parse("9999-12-31T23:59:59.999999Z");

  private Rfc3339() {}

  /**
   * Parses an RFC 3339 date-time.
   *
   * @param text the text, not null
   * @return the instant it names, truncated to microseconds
   * @throws IllegalArgumentException when {@code text} is not a valid RFC 3339 date-time: a wrong
   *     shape, an impossible date or time, a leap second ({@code :60}, which {@link Instant} cannot
   *     hold), or an offset beyond 23:59
   */
  public static Instant parse(String text) {
    Matcher m = SHAPE.matcher(text);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "not an RFC 3339 date-time: \""
              + text
              + "\"; expected e.g. 2026-11-29T23:35:59.123456Z or 2026-11-29T23:35:59+01:00");
    }
    int second = Integer.parseInt(m.group(6));
    if (second == 60) {
      throw new IllegalArgumentException(
          "leap seconds are not supported: \"" + text + "\"; seconds must be 00 to 59");
    }
    try {
      LocalDateTime local =
          LocalDateTime.of(
              Integer.parseInt(m.group(1)),
              Integer.parseInt(m.group(2)),
              Integer.parseInt(m.group(3)),
              Integer.parseInt(m.group(4)),
              Integer.parseInt(m.group(5)),
              second,
              nanos(m.group(7)));
      ZoneOffset offset = ZoneOffset.UTC;
      if (m.group(8) == null) {
        int hours = Integer.parseInt(m.group(10));
        int minutes = Integer.parseInt(m.group(11));
        if (hours > 23 || minutes > 59) {
          throw new IllegalArgumentException(
              "offset out of range in \"" + text + "\"; allowed: -23:59 to +23:59");
        }
        int sign = "-".equals(m.group(9)) ? -1 : 1;
        offset = ZoneOffset.ofHoursMinutes(sign * hours, sign * minutes);
      }
      return local.toInstant(offset).truncatedTo(ChronoUnit.MICROS);
    } catch (DateTimeException e) {
      throw new IllegalArgumentException(
          "not a valid date-time: \"" + text + "\" (" + e.getMessage() + ")", e);
    }
  }

  /**
   * Formats an instant in the ledger's canonical form.
   *
   * @param instant the instant, not null; sub-microsecond digits are dropped (truncated)
   * @return e.g. {@code 2024-12-31T23:59:59.999999Z}: always 27 characters
   * @throws IllegalArgumentException when the instant lies outside years 0000 to 9999, which RFC
   *     3339 cannot write
   */
  public static String format(Instant instant) {
    Instant t = instant.truncatedTo(ChronoUnit.MICROS);
    if (t.isBefore(MIN) || t.isAfter(MAX)) {
      throw new IllegalArgumentException(
          "time " + instant + " is outside years 0000 to 9999, which RFC 3339 can write");
    }
    LocalDateTime u = LocalDateTime.ofEpochSecond(t.getEpochSecond(), t.getNano(), ZoneOffset.UTC);
    StringBuilder b = new StringBuilder(27);
    pad(b, u.getYear(), 4).append('-');
    pad(b, u.getMonthValue(), 2).append('-');
    pad(b, u.getDayOfMonth(), 2).append('T');
    pad(b, u.getHour(), 2).append(':');
    pad(b, u.getMinute(), 2).append(':');
    pad(b, u.getSecond(), 2).append('.');
    pad(b, u.getNano() / 1000, 6).append('Z');
    return b.toString();
  }

  private static StringBuilder pad(StringBuilder b, int value, int width) {
    String digits = Integer.toString(value);
    for (int i = digits.length(); i < width; i++) {
      b.append('0');
    }
    return b.append(digits);
  }

  private static int nanos(String fraction) {
    if (fraction == null) {
      return 0;
    }
    String nine = fraction.length() >= 9 ? fraction.substring(0, 9) : fraction;
    int n = Integer.parseInt(nine);
    for (int i = nine.length(); i < 9; i++) {
      n *= 10;
    }
    return n;
  }
}

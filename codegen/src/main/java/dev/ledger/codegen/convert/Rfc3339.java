package dev.ledger.codegen.convert;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The ledger's one time format (docs/storage-and-replay.md): RFC 3339, UTC, {@code Z}, exactly six
 * fractional digits, e.g. {@code 2026-11-29T23:35:59.123456Z}, so that text order is time order.
 *
 * <p>{@link #parse(String)} reads any valid RFC 3339 date-time (any fraction width, {@code Z} or a
 * numeric offset, {@code T}/{@code t} or a space between date and time); {@link #format(Instant)}
 * writes only the canonical form, truncating (never rounding) to microseconds. Ports the
 * reference's {@code parse_time} and {@code fmt_time}.
 *
 * <p>Text in the canonical form (all the ledger writes) is read without the regular expression: a
 * replay reads a time per event, and the expression cost about a microsecond each.
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
    Instant canonical = parseCanonical(text);
    return canonical != null ? canonical : parseAny(text);
  }

  /**
   * Reads the canonical form ({@code 2026-11-29T23:35:59.123456Z}, 27 characters) digit by digit.
   *
   * @return the instant, or null when {@code text} is not in the canonical form or names no valid
   *     date and time (then {@link #parseAny} reads it or says what is wrong)
   */
  private static Instant parseCanonical(String text) {
    if (text.length() != 27
        || text.charAt(4) != '-'
        || text.charAt(7) != '-'
        || text.charAt(10) != 'T'
        || text.charAt(13) != ':'
        || text.charAt(16) != ':'
        || text.charAt(19) != '.'
        || text.charAt(26) != 'Z') {
      return null;
    }
    int year = digits(text, 0, 4);
    int month = digits(text, 5, 7);
    int day = digits(text, 8, 10);
    int hour = digits(text, 11, 13);
    int minute = digits(text, 14, 16);
    int second = digits(text, 17, 19);
    int micros = digits(text, 20, 26);
    if ((year | month | day | hour | minute | second | micros) < 0
        || month < 1
        || month > 12
        || day < 1
        || day > 28 && day > LocalDate.of(year, month, 1).lengthOfMonth()
        || hour > 23
        || minute > 59
        || second > 59) {
      return null;
    }
    long epochSecond =
        LocalDate.of(year, month, day).toEpochDay() * 86_400L
            + hour * 3_600L
            + minute * 60L
            + second;
    return Instant.ofEpochSecond(epochSecond, micros * 1_000L);
  }

  /** The decimal number in {@code text[from, to)}, or -1 when a character is not an ASCII digit. */
  private static int digits(String text, int from, int to) {
    int n = 0;
    for (int i = from; i < to; i++) {
      int d = text.charAt(i) - '0';
      if (d < 0 || d > 9) {
        return -1;
      }
      n = n * 10 + d;
    }
    return n;
  }

  private static Instant parseAny(String text) {
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

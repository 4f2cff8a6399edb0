package dev.ledger.schedule;

import com.cronutils.model.Cron;
import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.parser.CronParser;
import dev.ledger.InvalidInputException;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.Objects;

/**
 * When a schedule ticks: a cron expression read in a time zone's wall clock, or a fixed interval.
 * Immutable and thread-safe; the factories check their input.
 *
 * <p>A cron expression has five fields ({@code minute hour day-of-month month day-of-week}, as Unix
 * cron) or six (a leading {@code second}, as Spring's), parsed by cron-utils. An interval is a
 * whole number of seconds, at least one; its ticks are the instants at a multiple of it since the
 * epoch (an hourly interval ticks on the hour, UTC), whoever computes them.
 */
public final class Timing {

  /** The longest interval: a year of 366 days. */
  public static final Duration MAX_INTERVAL = Duration.ofDays(366);

  private static final CronParser UNIX =
      new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));
  private static final CronParser WITH_SECONDS =
      new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.SPRING53));

  private final String cron;
  private final ZoneId zone;
  private final Duration interval;
  private final Cron parsed;

  private Timing(String cron, ZoneId zone, Duration interval, Cron parsed) {
    this.cron = cron;
    this.zone = zone;
    this.interval = interval;
    this.parsed = parsed;
  }

  /**
   * A cron expression in a time zone.
   *
   * @param cron five fields (minute first) or six (second first), e.g. {@code 30 2 * * *}
   * @param zone a region or offset id that {@link ZoneId#of(String)} knows, e.g. {@code
   *     Europe/Berlin}
   * @return the timing
   * @throws InvalidInputException naming {@code cron} when it is null, has another number of fields
   *     or does not parse, or {@code zone} when it is null or unknown
   */
  public static Timing cron(String cron, String zone) {
    if (cron == null || cron.isBlank()) {
      throw new InvalidInputException("cron", "must not be empty");
    }
    String trimmed = cron.trim().replaceAll("\\s+", " ");
    if (trimmed.length() > 200) {
      throw new InvalidInputException("cron", "longer than 200 characters");
    }
    int fields = trimmed.split(" ").length;
    if (fields != 5 && fields != 6) {
      throw new InvalidInputException(
          "cron",
          "has "
              + fields
              + " fields; expected 5 (minute hour day-of-month month day-of-week) or 6 (a"
              + " leading second)");
    }
    Cron parsed;
    try {
      parsed = (fields == 5 ? UNIX : WITH_SECONDS).parse(trimmed);
      parsed.validate();
    } catch (IllegalArgumentException e) {
      throw new InvalidInputException("cron", "does not parse: " + firstLine(e.getMessage()));
    }
    return new Timing(trimmed, zone(zone), null, parsed);
  }

  /**
   * A fixed interval.
   *
   * @param interval whole seconds, 1 s to {@link #MAX_INTERVAL}
   * @return the timing
   * @throws InvalidInputException naming {@code interval} when it is null, not positive, not whole
   *     seconds or too long
   */
  public static Timing every(Duration interval) {
    if (interval == null) {
      throw new InvalidInputException("interval", "must not be null");
    }
    if (interval.isNegative() || interval.isZero()) {
      throw new InvalidInputException("interval", "must be longer than zero");
    }
    if (interval.getNano() != 0) {
      throw new InvalidInputException("interval", "must be a whole number of seconds");
    }
    if (interval.compareTo(MAX_INTERVAL) > 0) {
      throw new InvalidInputException("interval", "must be at most 366 days");
    }
    return new Timing(null, null, interval, null);
  }

  /**
   * Checks a time zone id.
   *
   * @param zone the id
   * @return the zone
   * @throws InvalidInputException naming {@code zone}
   */
  static ZoneId zone(String zone) {
    if (zone == null || zone.isBlank()) {
      throw new InvalidInputException("zone", "must not be empty");
    }
    String id = zone.trim();
    try {
      return ZoneId.of(id);
    } catch (DateTimeException e) {
      // ids are case-sensitive to java.time, not to the people who type them ("utc",
      // "europe/berlin"): one that matches a known id but for case means that id
      for (String known : ZoneId.getAvailableZoneIds()) {
        if (known.equalsIgnoreCase(id)) {
          return ZoneId.of(known);
        }
      }
      throw new InvalidInputException(
          "zone", "unknown time zone (use a region id such as Europe/Berlin, or UTC)");
    }
  }

  private static String firstLine(String m) {
    return m == null ? "invalid expression" : m.lines().findFirst().orElse("invalid expression");
  }

  /**
   * The cron expression, whitespace normalised.
   *
   * @return the expression, or null for an interval
   */
  public String cronExpression() {
    return cron;
  }

  /**
   * The time zone of the cron expression.
   *
   * @return the zone, or null for an interval
   */
  public ZoneId zone() {
    return zone;
  }

  /**
   * The interval.
   *
   * @return the interval, or null for a cron expression
   */
  public Duration interval() {
    return interval;
  }

  /**
   * The parsed expression, for {@link Ticks}.
   *
   * @return the expression, or null for an interval
   */
  Cron parsed() {
    return parsed;
  }

  /**
   * A short description, e.g. {@code cron '30 2 * * *' in Europe/Berlin} or {@code every PT1S}.
   *
   * @return the text
   */
  @Override
  public String toString() {
    return cron != null ? "cron '" + cron + "' in " + zone.getId() : "every " + interval;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Timing t
        && Objects.equals(cron, t.cron)
        && Objects.equals(zone, t.zone)
        && Objects.equals(interval, t.interval);
  }

  @Override
  public int hashCode() {
    return Objects.hash(cron, zone, interval);
  }
}

package dev.ledger.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.InvalidInputException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/** The tick arithmetic of {@link Ticks}: cron in a zone's wall clock, DST, intervals, catch-up. */
class TicksTest {

  private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");
  private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

  private static List<Instant> ticks(Timing timing, Instant from, Instant to) {
    Ticks t = new Ticks(timing);
    List<Instant> out = new ArrayList<>();
    Optional<Instant> next = t.next(from);
    while (next.isPresent() && next.get().isBefore(to)) {
      out.add(next.get());
      next = t.next(next.get());
    }
    return out;
  }

  private static Instant at(String local, ZoneId zone) {
    return LocalDateTime.parse(local).atZone(zone).toInstant();
  }

  @Test
  void a_daily_0230_runs_once_on_the_day_that_skips_0230_at_the_end_of_the_gap() {
    // 2026-03-08: New York goes from 02:00 EST to 03:00 EDT; cron-utils alone skips the day
    List<Instant> days =
        ticks(
            Timing.cron("30 2 * * *", "America/New_York"),
            at("2026-03-06T12:00", NEW_YORK),
            at("2026-03-10T12:00", NEW_YORK));
    assertThat(days)
        .containsExactly(
            Instant.parse("2026-03-07T07:30:00Z"),
            Instant.parse("2026-03-08T07:00:00Z"), // 03:00 EDT, the gap's end
            Instant.parse("2026-03-09T06:30:00Z"),
            Instant.parse("2026-03-10T06:30:00Z"));
  }

  @Test
  void a_daily_0130_runs_once_on_the_day_that_repeats_0130_on_its_first_pass() {
    List<Instant> days =
        ticks(
            Timing.cron("30 1 * * *", "America/New_York"),
            at("2026-10-31T12:00", NEW_YORK),
            at("2026-11-02T12:00", NEW_YORK));
    assertThat(days)
        .containsExactly(
            Instant.parse("2026-11-01T05:30:00Z"), // 01:30 EDT; 01:30 EST (06:30Z) is not a tick
            Instant.parse("2026-11-02T06:30:00Z"));
  }

  @Test
  void a_repeated_hour_runs_once_for_a_schedule_every_20_minutes() {
    List<Instant> hour =
        ticks(
            Timing.cron("*/20 1 * * *", "America/New_York"),
            at("2026-11-01T00:00", NEW_YORK),
            at("2026-11-01T03:00", NEW_YORK));
    assertThat(hour)
        .containsExactly(
            Instant.parse("2026-11-01T05:00:00Z"),
            Instant.parse("2026-11-01T05:20:00Z"),
            Instant.parse("2026-11-01T05:40:00Z"));
  }

  @Test
  void several_matches_in_one_gap_become_one_tick() {
    // Berlin 2026-03-29: 02:00 CET -> 03:00 CEST; 02:00, 02:15, 02:30, 02:45 and 03:00 all fall on
    // the gap's end (01:00Z), once
    List<Instant> ticks =
        ticks(
            Timing.cron("*/15 * * * *", "Europe/Berlin"),
            at("2026-03-29T01:50", BERLIN),
            at("2026-03-29T03:20", BERLIN));
    assertThat(ticks)
        .containsExactly(
            Instant.parse("2026-03-29T01:00:00Z"), Instant.parse("2026-03-29T01:15:00Z"));
  }

  @Test
  void next_from_inside_the_second_pass_of_a_repeated_hour_skips_to_after_it() {
    Instant secondPass = Instant.parse("2026-11-01T06:10:00Z"); // 01:10 EST
    assertThat(new Ticks(Timing.cron("*/20 * * * *", "America/New_York")).next(secondPass))
        .contains(Instant.parse("2026-11-01T07:00:00Z")); // 02:00 EST
  }

  @Test
  void six_fields_have_a_leading_second() {
    assertThat(
            new Ticks(Timing.cron("*/10 * * * * *", "UTC"))
                .next(Instant.parse("2026-01-01T00:00:05Z")))
        .contains(Instant.parse("2026-01-01T00:00:10Z"));
  }

  @Test
  void an_expression_that_never_matches_has_no_next_tick() {
    assertThat(
            new Ticks(Timing.cron("0 0 30 2 *", "UTC")).next(Instant.parse("2026-01-01T00:00:00Z")))
        .isEmpty();
  }

  @Test
  void an_interval_ticks_on_multiples_of_itself_since_the_epoch() {
    Ticks hourly = new Ticks(Timing.every(Duration.ofHours(1)));
    assertThat(hourly.next(Instant.parse("2026-01-01T10:17:23.5Z")))
        .contains(Instant.parse("2026-01-01T11:00:00Z"));
    assertThat(hourly.next(Instant.parse("2026-01-01T11:00:00Z")))
        .contains(Instant.parse("2026-01-01T12:00:00Z"));
  }

  @Test
  void due_keeps_the_latest_ticks_of_the_catch_up_and_names_the_next() {
    Ticks minutely = new Ticks(Timing.cron("* * * * *", "Europe/Berlin"));
    Instant first = Instant.parse("2026-01-01T00:00:00Z");
    Instant now = Instant.parse("2026-01-01T00:09:30Z");
    assertThat(minutely.due(first, now, 1))
        .isEqualTo(
            new Ticks.Due(
                List.of(Instant.parse("2026-01-01T00:09:00Z")),
                Instant.parse("2026-01-01T00:10:00Z")));
    assertThat(minutely.due(first, now, 3).ticks())
        .containsExactly(
            Instant.parse("2026-01-01T00:07:00Z"),
            Instant.parse("2026-01-01T00:08:00Z"),
            Instant.parse("2026-01-01T00:09:00Z"));
    assertThat(minutely.due(first, now, 100).ticks()).hasSize(10).startsWith(first);
    // a long downtime walks only a window before now
    Instant monthLater = Instant.parse("2026-02-01T00:00:30Z");
    assertThat(minutely.due(first, monthLater, 2))
        .isEqualTo(
            new Ticks.Due(
                List.of(
                    Instant.parse("2026-01-31T23:59:00Z"), Instant.parse("2026-02-01T00:00:00Z")),
                Instant.parse("2026-02-01T00:01:00Z")));
  }

  @Test
  void bad_input_names_the_field() {
    assertThatThrownBy(() -> Timing.cron("61 * * * *", "UTC"))
        .isInstanceOf(InvalidInputException.class)
        .extracting(e -> ((InvalidInputException) e).field())
        .isEqualTo("cron");
    assertThatThrownBy(() -> Timing.cron("* * *", "UTC"))
        .extracting(e -> ((InvalidInputException) e).field())
        .isEqualTo("cron");
    assertThatThrownBy(() -> Timing.cron("* * * * *", "Mars/Olympus"))
        .extracting(e -> ((InvalidInputException) e).field())
        .isEqualTo("zone");
    for (Duration bad : List.of(Duration.ZERO, Duration.ofSeconds(-5), Duration.ofMillis(1500))) {
      assertThatThrownBy(() -> Timing.every(bad))
          .extracting(e -> ((InvalidInputException) e).field())
          .isEqualTo("interval");
    }
  }

  /** Every zone the JDK knows, but a few whose calendars skipped whole days before 2015. */
  @Provide
  Arbitrary<String> zones() {
    return Arbitraries.of(
        ZoneId.getAvailableZoneIds().stream()
            .filter(z -> !z.startsWith("SystemV/"))
            .sorted()
            .collect(Collectors.toList()));
  }

  @Property(tries = 60)
  void a_daily_schedule_ticks_once_per_local_day_in_any_zone(
      @ForAll("zones") String zoneId,
      @ForAll @IntRange(min = 0, max = 23) int hour,
      @ForAll @IntRange(min = 0, max = 59) int minute,
      @ForAll @IntRange(min = 2016, max = 2035) int year) {
    ZoneId zone = ZoneId.of(zoneId);
    // from noon of the day before the year to noon of its last day: every local date of the year
    // but the last, and the last one's tick if it is before noon
    Instant from =
        ZonedDateTime.of(LocalDate.of(year - 1, 12, 31), LocalTime.NOON, zone).toInstant();
    Instant to = ZonedDateTime.of(LocalDate.of(year, 12, 31), LocalTime.NOON, zone).toInstant();
    List<Instant> ticks = ticks(Timing.cron(minute + " " + hour + " * * *", zoneId), from, to);
    int days = LocalDate.of(year, 1, 1).lengthOfYear();
    assertThat(ticks.size()).isBetween(days - 1, days);
    // each one at the local time asked for, or at the end of the gap that skipped it
    for (Instant t : ticks) {
      LocalTime local = LocalTime.ofInstant(t, zone);
      if (!local.equals(LocalTime.of(hour, minute))) {
        var transition = zone.getRules().previousTransition(t.plusNanos(1));
        assertThat(transition.isGap()).isTrue();
        assertThat(transition.getInstant()).isEqualTo(t);
      }
    }
  }

  @Property(tries = 200)
  void next_is_the_least_tick_after_an_instant(
      @ForAll("zones") String zoneId,
      @ForAll @LongRange(min = 1_450_000_000L, max = 2_050_000_000L) long epochSecond,
      @ForAll @IntRange(min = 1, max = 4) int which) {
    String cron =
        List.of("*/7 * * * *", "15 */2 * * *", "0 2 * * *", "30 1,2,3 * * 0").get(which - 1);
    Ticks ticks = new Ticks(Timing.cron(cron, zoneId));
    Instant x = Instant.ofEpochSecond(epochSecond);
    Instant n = ticks.next(x).orElseThrow();
    assertThat(n).isAfter(x);
    // any instant between x and the next tick has the same next tick: the ticks are one fixed set
    Instant mid = x.plusSeconds(Duration.between(x, n).getSeconds() / 2);
    assertThat(ticks.next(mid)).contains(n);
    assertThat(ticks.next(n.minusNanos(1))).contains(n);
  }

  @Property(tries = 300)
  void due_files_the_latest_keep_ticks_from_first_through_now(
      @ForAll @IntRange(min = 1, max = 3600) int intervalSeconds,
      @ForAll @LongRange(min = 0, max = 100_000) long lateSeconds,
      @ForAll @IntRange(min = 1, max = 50) int keep) {
    Ticks ticks = new Ticks(Timing.every(Duration.ofSeconds(intervalSeconds)));
    Instant first = ticks.next(Instant.parse("2026-05-01T00:00:00Z")).orElseThrow();
    Instant now = first.plusSeconds(lateSeconds);
    List<Instant> all =
        ticks(
            Timing.every(Duration.ofSeconds(intervalSeconds)),
            first.minusNanos(1),
            now.plusNanos(1));
    Ticks.Due due = ticks.due(first, now, keep);
    assertThat(due.ticks()).isEqualTo(all.subList(Math.max(0, all.size() - keep), all.size()));
    assertThat(due.next()).isEqualTo(ticks.next(now).orElseThrow());
  }

  @org.junit.jupiter.api.Test
  void a_zone_id_typed_in_another_case_means_the_known_id_and_an_unknown_one_is_refused() {
    assertThat(Timing.cron("0 0 * * *", "utc").zone()).isEqualTo(ZoneId.of("UTC"));
    assertThat(Timing.cron("0 0 * * *", " europe/berlin ").zone())
        .isEqualTo(ZoneId.of("Europe/Berlin"));
    assertThat(Timing.cron("0 0 * * *", "AMERICA/NEW_YORK").zone())
        .isEqualTo(ZoneId.of("America/New_York"));
    assertThatThrownBy(() -> Timing.cron("0 0 * * *", "Europe/Atlantis"))
        .isInstanceOfSatisfying(
            InvalidInputException.class, e -> assertThat(e.field()).isEqualTo("zone"))
        .hasMessageContaining("unknown time zone");
  }
}

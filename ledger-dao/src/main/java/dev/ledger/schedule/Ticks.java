package dev.ledger.schedule;

import com.cronutils.model.time.ExecutionTime;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.zone.ZoneOffsetTransition;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;

/**
 * The ticks of a {@link Timing}: a fixed set of instants, the same whoever computes them, so that
 * every process files the same ticks. Immutable and thread-safe.
 *
 * <p>A cron expression is matched against the zone's wall clock (cron-utils walks the local times
 * as if no offset ever changed), and each matching local time becomes one instant:
 *
 * <ul>
 *   <li>a local time the zone skips (a spring-forward gap, e.g. 02:30 on the night clocks go from
 *       02:00 to 03:00) becomes the instant the gap ends (03:00): a daily 02:30 schedule runs once
 *       that day, not zero times; several matches in one gap become that one instant;
 *   <li>a local time the zone repeats (a fall-back overlap) becomes its earlier instant: a repeated
 *       hour runs once, on its first pass.
 * </ul>
 *
 * <p>An interval's ticks are the multiples of it since the epoch.
 */
public final class Ticks {

  /**
   * The most cron matches {@link #next} walks past that fall before the instant asked about (a
   * every-second expression asked from inside a repeated hour walks 3,600).
   */
  private static final int MAX_STEPS = 1_000_000;

  private final Timing timing;
  private final ExecutionTime cron;
  private final long intervalSeconds;

  /**
   * The ticks of a timing.
   *
   * @param timing the timing, not null
   */
  public Ticks(Timing timing) {
    this.timing = timing;
    this.cron = timing.parsed() == null ? null : ExecutionTime.forCron(timing.parsed());
    this.intervalSeconds = timing.interval() == null ? 0 : timing.interval().getSeconds();
  }

  /**
   * The first tick strictly after an instant.
   *
   * @param after the instant, not null
   * @return the tick, or empty when the expression matches no later time (e.g. {@code 0 0 30 2 *})
   */
  public Optional<Instant> next(Instant after) {
    if (cron == null) {
      long k = Math.floorDiv(after.getEpochSecond(), intervalSeconds) + 1;
      return Optional.of(Instant.ofEpochSecond(Math.multiplyExact(k, intervalSeconds)));
    }
    ZoneId zone = timing.zone();
    ZonedDateTime cursor = LocalDateTime.ofInstant(after, zone).atZone(ZoneOffset.UTC);
    for (int i = 0; i < MAX_STEPS; i++) {
      Optional<ZonedDateTime> match = cron.nextExecution(cursor);
      if (match.isEmpty()) {
        return Optional.empty();
      }
      Instant at = instantOf(match.get().toLocalDateTime(), zone);
      if (at.isAfter(after)) {
        return Optional.of(at);
      }
      cursor = match.get();
    }
    return Optional.empty();
  }

  /**
   * The instant of a matching local time: the end of a gap it falls in, the earlier of two instants
   * in an overlap.
   */
  static Instant instantOf(LocalDateTime local, ZoneId zone) {
    ZoneOffsetTransition t = zone.getRules().getTransition(local);
    if (t != null && t.isGap()) {
      return t.getInstant();
    }
    return local.atZone(zone).toInstant(); // an overlap: the earlier offset
  }

  /**
   * The ticks from {@code first} through {@code now}, keeping only the latest {@code keep} of them
   * (the catch-up policy), and the tick after them.
   *
   * @param first a tick, the earliest one not filed yet
   * @param now the current time
   * @param keep how many of the latest ticks to keep, at least 1
   * @return the ticks, oldest first, and the next tick after {@code now}
   */
  public Due due(Instant first, Instant now, int keep) {
    Instant from = first.minusNanos(1); // ticks strictly after this
    if (cron == null) {
      long last = Math.floorDiv(now.getEpochSecond(), intervalSeconds) * intervalSeconds;
      long start = Math.max(first.getEpochSecond(), last - (keep - 1L) * intervalSeconds);
      start = Math.floorDiv(start + intervalSeconds - 1, intervalSeconds) * intervalSeconds;
      List<Instant> ticks = new ArrayList<>();
      for (long s = start; s <= last; s += intervalSeconds) {
        ticks.add(Instant.ofEpochSecond(s));
      }
      return new Due(ticks, Instant.ofEpochSecond(last + intervalSeconds));
    }
    // a long downtime: walk only a window before now, widened until it holds `keep` ticks
    Duration window = Duration.ofHours(1);
    while (true) {
      Instant start = now.minus(window);
      boolean whole = !start.isAfter(from);
      Deque<Instant> kept = new ArrayDeque<>();
      Optional<Instant> t = next(whole ? from : start);
      while (t.isPresent() && !t.get().isAfter(now)) {
        kept.addLast(t.get());
        if (kept.size() > keep) {
          kept.removeFirst();
        }
        t = next(t.get());
      }
      if (whole || kept.size() >= keep) {
        return new Due(List.copyOf(kept), t.orElse(null));
      }
      window = window.multipliedBy(8);
    }
  }

  /**
   * The ticks due, and the one after them.
   *
   * @param ticks the ticks to file, oldest first; may be empty
   * @param next the first tick after the time asked about, or null when there is none
   */
  public record Due(List<Instant> ticks, Instant next) {}
}

package dev.ledger.schedule;

import java.time.Instant;

/**
 * A schedule as stored: its spec and its state.
 *
 * @param spec what it is
 * @param paused true while paused: no tick is filed, and the ticks of the pause are never filed
 * @param lastTick the latest tick filed, or null before the first
 * @param nextTick the first tick not filed yet, or null when the cron expression matches no later
 *     time
 * @param created when it was added
 * @param updated when it was last changed, paused or resumed
 */
public record Schedule(
    ScheduleSpec spec,
    boolean paused,
    Instant lastTick,
    Instant nextTick,
    Instant created,
    Instant updated) {

  /**
   * The schedule's name.
   *
   * @return the name
   */
  public String name() {
    return spec.name();
  }

  /**
   * The origin of the tasks it files.
   *
   * @return {@code schedule:<name>}
   */
  public String origin() {
    return Schedules.origin(spec.name());
  }
}

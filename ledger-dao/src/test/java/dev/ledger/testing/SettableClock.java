package dev.ledger.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/** A clock a test moves by hand, for leases and event times (db-scheduler's SettableClock). */
public final class SettableClock extends Clock {

  private final AtomicReference<Instant> now;

  /**
   * Creates the clock.
   *
   * @param start the first instant it reads
   */
  public SettableClock(Instant start) {
    this.now = new AtomicReference<>(start);
  }

  /**
   * Moves the clock forward.
   *
   * @param d how far
   */
  public void advance(Duration d) {
    now.updateAndGet(t -> t.plus(d));
  }

  @Override
  public Instant instant() {
    // every read moves one microsecond on, so events of one test have distinct, ordered times
    return now.getAndUpdate(t -> t.plusNanos(1000));
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }
}

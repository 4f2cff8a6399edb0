package dev.ledger.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A clock a test moves by hand, for leases and event times (db-scheduler's SettableClock), so lease
 * expiry is a step of the test rather than a sleep. Every read moves it one microsecond on, so the
 * events of one test have distinct, ordered times. Thread-safe.
 *
 * <pre>{@code
 * SettableClock clock = new SettableClock(Instant.parse("2030-01-01T00:00:00Z"));
 * Ledger ledger = Ledger.open(ds, LedgerConfig.builder().clock(clock).build());
 * clock.advance(Duration.ofSeconds(3));
 * }</pre>
 */
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

  /**
   * Sets the clock: its next read is {@code instant}.
   *
   * @param instant the time, e.g. just before or after a lease's end
   */
  public void set(Instant instant) {
    now.set(instant);
  }

  @Override
  public Instant instant() {
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

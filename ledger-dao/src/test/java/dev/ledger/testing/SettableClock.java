package dev.ledger.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A UTC clock that stands still until a test moves it (db-scheduler's {@code SettableClock}), so
 * lease expiry is a step of the test rather than a sleep. Thread-safe.
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
   * @param start the time it shows until moved
   */
  public SettableClock(Instant start) {
    this.now = new AtomicReference<>(start);
  }

  /**
   * Shows another time from now on.
   *
   * @param instant the time
   */
  public void set(Instant instant) {
    now.set(instant);
  }

  /**
   * Moves the clock forward.
   *
   * @param by how far
   * @return the new time
   */
  public Instant advance(Duration by) {
    return now.updateAndGet(t -> t.plus(by));
  }

  @Override
  public Instant instant() {
    return now.get();
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    throw new UnsupportedOperationException("a settable clock is UTC only");
  }
}

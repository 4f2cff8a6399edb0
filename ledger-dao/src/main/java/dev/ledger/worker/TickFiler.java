package dev.ledger.worker;

import dev.ledger.Ledger;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;

/**
 * Files a domain's due schedule ticks for a {@link TenantWorkerPool}, one tenant's ledger at a time
 * ({@link dev.ledger.schedule.Schedules#fileDue(String)}), as a {@link WorkerPool} does for its
 * own: reads the domain's next tick (one read of a partial index), files only when one is due, and
 * says when to look again (the next tick, or {@link #RECHECK} for a schedule added or changed
 * elsewhere, whichever comes first). Stateless; thread-safe.
 */
final class TickFiler {

  /** How often a domain is looked at again when its next tick is later (or it has none). */
  static final Duration RECHECK = Duration.ofSeconds(1);

  private TickFiler() {}

  /**
   * What one look at a domain's schedules did.
   *
   * @param filed how many tasks were filed (ticks)
   * @param nextCheck when to look again
   */
  record Result(int filed, Instant nextCheck) {}

  /**
   * Files the due ticks of {@code domain} in {@code ledger}; a failure is logged, never thrown (it
   * is tried again at the next check).
   *
   * @param log the pool's logger
   * @param holder the pool's holder, for the log line
   * @param where the tenant, for the log line
   * @param ledger the tenant's ledger
   * @param domain the domain
   * @return what was filed and when to look again
   */
  static Result fileDue(Logger log, String holder, String where, Ledger ledger, String domain) {
    Instant now = Instant.now();
    Instant next = now.plus(RECHECK);
    int filed = 0;
    try {
      Optional<Instant> tick = ledger.schedules().nextTick(domain);
      if (tick.isPresent() && !now.isBefore(tick.get())) {
        filed = ledger.schedules().fileDue(domain);
        tick = ledger.schedules().nextTick(domain);
      }
      if (tick.isPresent() && tick.get().isBefore(next)) {
        next = tick.get();
      }
    } catch (RuntimeException e) {
      log.warn(
          "ledger tenant worker {}: filing the due schedule ticks of {} in tenant {} failed: {}",
          holder,
          domain,
          where,
          e.toString());
    }
    return new Result(filed, next);
  }
}

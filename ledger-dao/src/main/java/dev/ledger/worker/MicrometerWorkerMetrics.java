package dev.ledger.worker;

import dev.ledger.DomainControls;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link WorkerMetrics} in a Micrometer {@link MeterRegistry} (Micrometer is an optional dependency
 * of {@code ledger-dao}: this class is loaded only when used). Meters, each tagged {@code domain}:
 *
 * <ul>
 *   <li>counter {@code ledger.tasks.filed}: the tasks filed in the domain so far, by anyone (other
 *       processes and the reference stack included; retries are tasks too), from the count the pool
 *       samples every 15 s plus the tasks retention purges removed ({@link WorkerMetrics#filed});
 *   <li>counters {@code ledger.tasks.claimed}, {@code ledger.tasks.completed}, {@code
 *       ledger.tasks.failed}, {@code ledger.tasks.retried} (a retry filed), {@code
 *       ledger.tasks.dead} (dead letters), {@code ledger.tasks.lease.lost}, {@code
 *       ledger.tasks.completion.retried} and {@code ledger.tasks.failure.retried} (a completion or
 *       a failure record tried again after the database failed it, or a completion whose row
 *       another transaction held);
 *   <li>timers {@code ledger.claim.latency} (one {@code claimBatch}), {@code ledger.handler.time}
 *       (tagged {@code outcome}: completed, failed, lost), {@code ledger.pickup.latency} (from the
 *       task's admission, or its release, to its claim, as the ledger's clock recorded both);
 *   <li>gauges {@code ledger.tasks.depth} (tagged {@code status}), sampled by the pool every 15 s
 *       with one grouped count per domain;
 *   <li>gauges {@code ledger.queue.held} (tagged {@code control}: paused, concurrency, rate): 1
 *       while the pool's last claim of the domain was held back by that queue control, else 0
 *       (docs/controls.md);
 *   <li>gauges of the queue controls as set, sampled with the depth: {@code ledger.queue.paused} (1
 *       or 0), {@code ledger.queue.max.claimed}, {@code ledger.queue.rate.claims}, {@code
 *       ledger.queue.rate.period.ms} (each -1 when not set) and {@code ledger.queue.claimed} (tasks
 *       claimed with a live lease).
 * </ul>
 *
 * <p>And, untagged: gauge {@code ledger.worker.outages}, the pools of these metrics whose claims
 * are failing now (their database unreachable), and counter {@code ledger.worker.outages.began}.
 *
 * <pre>{@code
 * WorkerPool.builder(ledger).metrics(MicrometerWorkerMetrics.of(registry))...
 * }</pre>
 *
 * Thread-safe.
 */
public final class MicrometerWorkerMetrics implements WorkerMetrics {

  private final MeterRegistry registry;
  private final Map<String, AtomicLong> depths = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> filed = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> held = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> controls = new ConcurrentHashMap<>();

  /** The controls {@code ledger.queue.held} is tagged with. */
  private static final List<String> HELD_CONTROLS = List.of("paused", "concurrency", "rate");

  /** Pools of these metrics whose claims are failing now. */
  private final java.util.concurrent.atomic.AtomicInteger outages =
      new java.util.concurrent.atomic.AtomicInteger();

  private MicrometerWorkerMetrics(MeterRegistry registry) {
    this.registry = registry;
    Gauge.builder("ledger.worker.outages", outages, java.util.concurrent.atomic.AtomicInteger::get)
        .description("worker pools whose claims are failing now (their database is unreachable)")
        .register(registry);
  }

  /**
   * Metrics recorded in a registry.
   *
   * @param registry the registry, not null
   * @return the metrics
   * @throws IllegalArgumentException when the registry is null
   */
  public static MicrometerWorkerMetrics of(MeterRegistry registry) {
    if (registry == null) {
      throw new IllegalArgumentException("registry: must not be null");
    }
    return new MicrometerWorkerMetrics(registry);
  }

  private Counter counter(String name, String domain) {
    return Counter.builder(name).tag("domain", domain).register(registry);
  }

  @Override
  public void claimed(String domain, int claimed, Duration took) {
    Timer.builder("ledger.claim.latency").tag("domain", domain).register(registry).record(took);
    if (claimed > 0) {
      counter("ledger.tasks.claimed", domain).increment(claimed);
    }
  }

  @Override
  public void pickedUp(String domain, Duration pickup) {
    Timer.builder("ledger.pickup.latency")
        .tag("domain", domain)
        .register(registry)
        .record(pickup.isNegative() ? Duration.ZERO : pickup);
  }

  @Override
  public void handled(String domain, String outcome, Duration took) {
    Timer.builder("ledger.handler.time")
        .tag("domain", domain)
        .tag("outcome", outcome)
        .register(registry)
        .record(took);
  }

  @Override
  public void completed(String domain) {
    counter("ledger.tasks.completed", domain).increment();
  }

  @Override
  public void outage(boolean ongoing) {
    if (ongoing) {
      outages.incrementAndGet();
      registry.counter("ledger.worker.outages.began").increment();
    } else {
      outages.decrementAndGet();
    }
  }

  @Override
  public void retried(String domain) {
    counter("ledger.tasks.retried", domain).increment();
  }

  @Override
  public void completionRetried(String domain) {
    counter("ledger.tasks.completion.retried", domain).increment();
  }

  @Override
  public void failureRetried(String domain) {
    counter("ledger.tasks.failure.retried", domain).increment();
  }

  @Override
  public void failed(String domain) {
    counter("ledger.tasks.failed", domain).increment();
  }

  @Override
  public void dead(String domain) {
    counter("ledger.tasks.dead", domain).increment();
  }

  @Override
  public void heldBack(String domain, String control) {
    for (String c : HELD_CONTROLS) {
      held.computeIfAbsent(
              domain + "\n" + c,
              k -> {
                AtomicLong v = new AtomicLong();
                Gauge.builder("ledger.queue.held", v, AtomicLong::doubleValue)
                    .description("1 while the domain's claims are held back by this queue control")
                    .tag("domain", domain)
                    .tag("control", c)
                    .register(registry);
                return v;
              })
          .set(c.equals(control) ? 1 : 0);
    }
  }

  @Override
  public void controls(DomainControls c) {
    gauge("ledger.queue.paused", c.domain(), c.paused() ? 1 : 0);
    gauge("ledger.queue.max.claimed", c.domain(), c.maxClaimed() == null ? -1 : c.maxClaimed());
    gauge("ledger.queue.rate.claims", c.domain(), c.rateClaims() == null ? -1 : c.rateClaims());
    gauge(
        "ledger.queue.rate.period.ms",
        c.domain(),
        c.ratePeriod() == null ? -1 : c.ratePeriod().toMillis());
    gauge("ledger.queue.claimed", c.domain(), c.claimedNow());
  }

  private void gauge(String name, String domain, long value) {
    controls
        .computeIfAbsent(
            name + "\u0000" + domain,
            k -> {
              AtomicLong v = new AtomicLong();
              Gauge.builder(name, v, AtomicLong::doubleValue)
                  .description(
                      "a queue control of the domain as set (-1: none), sampled every 15 s")
                  .tag("domain", domain)
                  .register(registry);
              return v;
            })
        .set(value);
  }

  @Override
  public void leaseLost(String domain) {
    counter("ledger.tasks.lease.lost", domain).increment();
  }

  @Override
  public void filed(String domain, long tasks) {
    // a counter never goes down: a sample short by a purge that committed between its two reads
    // (WorkerMetrics.filed) keeps the previous value
    filed
        .computeIfAbsent(
            domain,
            d -> {
              AtomicLong v = new AtomicLong();
              FunctionCounter.builder("ledger.tasks.filed", v, AtomicLong::doubleValue)
                  .tag("domain", d)
                  .register(registry);
              return v;
            })
        .accumulateAndGet(tasks, Math::max);
  }

  @Override
  public void depth(String domain, Map<String, Long> counts) {
    counts.forEach(
        (status, n) ->
            depths
                .computeIfAbsent(
                    domain + "\u0000" + status,
                    k -> {
                      AtomicLong v = new AtomicLong();
                      Gauge.builder("ledger.tasks.depth", v, AtomicLong::doubleValue)
                          .tag("domain", domain)
                          .tag("status", status)
                          .register(registry);
                      return v;
                    })
                .set(n));
  }

  @Override
  public boolean wantsPickup() {
    return true;
  }

  @Override
  public boolean wantsDepth() {
    return true;
  }
}

package dev.ledger.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.Pickup;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.SettableClock;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A pool's meters, with exact values: the ledger's clock is a {@link SettableClock}, so every time
 * the pool measures (from a task's admission or release to its claim) is a step of the test.
 */
class WorkerMetricsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @Test
  void pickup_runs_from_admission_or_release_to_claim_and_filed_counts_the_domains_tasks()
      throws Exception {
    Instant t0 = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    SettableClock clock = new SettableClock(t0);
    Ledger ledger = Ledger.open(PG.dataSource(), LedgerConfig.builder().clock(clock).build());
    String domain = "metered";
    // a and b: filed and admitted at t0
    List<String> ab =
        ledger.fileAll(
            List.of(TaskSpec.builder(domain, "a").build(), TaskSpec.builder(domain, "b").build()));
    // c: filed at t0, admitted 1 s later (pickup counts from the admission, not the filing)
    String c = ledger.file(TaskSpec.builder(domain, "c").build());
    // d: admitted at t0, claimed by another worker at t0 + 0.2 s, released at t0 + 1.2 s
    String d = ledger.file(TaskSpec.builder(domain, "d").build());
    ledger.admit(d);
    clock.advance(Duration.ofMillis(200));
    Lease other = ledger.claim(d, "other-worker", Duration.ofMinutes(1), List.of(), Label.PUBLIC);
    clock.advance(Duration.ofMillis(800));
    ledger.admit(c);
    clock.advance(Duration.ofMillis(200));
    ledger.release(other);
    // the pool claims everything at t0 + 1.5 s (the clock stands still from here)
    clock.advance(Duration.ofMillis(300));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (WorkerPool pool =
        WorkerPool.builder(ledger)
            .domain(domain, (task, ctx) -> Outcome.done())
            .concurrency(4)
            .metrics(MicrometerWorkerMetrics.of(registry))
            .build()
            .start()) {
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (counter(registry, "ledger.tasks.completed", domain) < 4 && System.nanoTime() < end) {
        Thread.sleep(20);
      }
      assertThat(pool.domains()).containsExactly(domain);
    }
    Timer pickup = registry.get("ledger.pickup.latency").tag("domain", domain).timer();
    assertThat(pickup.count()).isEqualTo(4);
    // a 1.5 s, b 1.5 s, c 0.5 s (admitted at t0 + 1 s), d 0.3 s (released at t0 + 1.2 s); the
    // ledger steps its clock by a microsecond per event time it takes (times stay distinct), so
    // the sums are these to the microsecond tens
    assertThat(pickup.totalTime(TimeUnit.MILLISECONDS)).isCloseTo(3800.0, within(0.1));
    assertThat(pickup.max(TimeUnit.MILLISECONDS)).isCloseTo(1500.0, within(0.1));
    assertThat(counter(registry, "ledger.tasks.filed", domain)).isEqualTo(4.0);
    assertThat(counter(registry, "ledger.tasks.claimed", domain)).isEqualTo(4.0);
    assertThat(counter(registry, "ledger.tasks.completed", domain)).isEqualTo(4.0);
    assertThat(registry.find("ledger.tasks.failed").counters()).isEmpty();
    assertThat(ab).hasSize(2);
  }

  @Test
  void filed_counts_the_tasks_a_purge_removed_whoever_purged() throws Exception {
    Instant t0 = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    SettableClock clock = new SettableClock(t0);
    Ledger ledger = Ledger.open(PG.dataSource(), LedgerConfig.builder().clock(clock).build());
    String domain = "metered-purged";
    // five tasks filed, claimed and completed at t0
    for (String id :
        ledger.fileAll(
            List.of(
                TaskSpec.builder(domain, "old 1").build(),
                TaskSpec.builder(domain, "old 2").build(),
                TaskSpec.builder(domain, "old 3").build(),
                TaskSpec.builder(domain, "old 4").build(),
                TaskSpec.builder(domain, "old 5").build()))) {
      ledger.complete(ledger.claim(id, "w", Duration.ofMinutes(1), List.of(), Label.PUBLIC), "ok");
    }
    // a day later another process (the CLI's purge job) purges them: an hour's retention
    clock.advance(Duration.ofDays(1));
    Ledger purger = Ledger.open(PG.dataSource(), LedgerConfig.builder().clock(clock).build());
    purger.retention().set(domain, Duration.ofHours(1));
    assertThat(purger.retention().purge(domain, 100, p -> {}).tasksRemoved()).isEqualTo(5);
    assertThat(ledger.countByStatus(domain).values().stream().mapToLong(Long::longValue).sum())
        .isZero();
    // then two more are filed
    ledger.fileAll(
        List.of(
            TaskSpec.builder(domain, "new 1").build(), TaskSpec.builder(domain, "new 2").build()));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (WorkerPool pool =
        WorkerPool.builder(ledger)
            .domain(domain, (task, ctx) -> Outcome.done())
            .concurrency(2)
            .metrics(MicrometerWorkerMetrics.of(registry))
            .build()
            .start()) {
      // the pool samples when it starts (then every 15 s)
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while ((registry.find("ledger.tasks.filed").tag("domain", domain).functionCounter() == null
              || counter(registry, "ledger.tasks.completed", domain) < 2)
          && System.nanoTime() < end) {
        Thread.sleep(20);
      }
      assertThat(pool.domains()).containsExactly(domain);
    }
    // the five purged and the two held now (the rows alone would say 2, and stay there)
    assertThat(counter(registry, "ledger.tasks.filed", domain)).isEqualTo(7.0);
    assertThat(counter(registry, "ledger.tasks.completed", domain)).isEqualTo(2.0);
  }

  @Test
  void pickups_read_the_admission_the_release_or_the_expired_lease() {
    Instant t0 = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    SettableClock clock = new SettableClock(t0);
    Ledger ledger = Ledger.open(PG.dataSource(), LedgerConfig.builder().clock(clock).build());
    String domain = "pickups";
    String admitted = ledger.file(TaskSpec.builder(domain, "admitted").build());
    String released = ledger.file(TaskSpec.builder(domain, "released").build());
    String expired = ledger.file(TaskSpec.builder(domain, "expired").build());
    ledger.admit(admitted);
    ledger.admit(released);
    ledger.admit(expired);
    Lease r1 = ledger.claim(released, "w1", Duration.ofMinutes(1), List.of(), Label.PUBLIC);
    ledger.claim(expired, "w1", Duration.ofSeconds(2), List.of(), Label.PUBLIC);
    clock.advance(Duration.ofSeconds(1));
    ledger.release(r1);
    clock.advance(Duration.ofSeconds(4));
    for (String id : List.of(admitted, released, expired)) {
      ledger.claim(id, "w2", Duration.ofMinutes(1), List.of(), Label.PUBLIC);
    }
    Map<String, Pickup> p = ledger.pickups(domain, List.of(admitted, released, expired, "nope"));
    // to the millisecond: the ledger steps its clock by a microsecond per event time it takes
    Map<String, Pickup> ms = new java.util.HashMap<>();
    p.forEach(
        (id, x) ->
            ms.put(
                id,
                new Pickup(
                    x.taskId(),
                    x.readyAt().truncatedTo(ChronoUnit.MILLIS),
                    x.claimedAt().truncatedTo(ChronoUnit.MILLIS),
                    x.expiredHolder())));
    assertThat(ms)
        .containsOnly(
            Map.entry(admitted, new Pickup(admitted, t0, t0.plusSeconds(5), null)),
            Map.entry(released, new Pickup(released, t0.plusSeconds(1), t0.plusSeconds(5), null)),
            Map.entry(expired, new Pickup(expired, t0.plusSeconds(2), t0.plusSeconds(5), "w1")));
    assertThat(p.get(expired).afterExpiry()).isTrue();
    assertThat(p.get(admitted).afterExpiry()).isFalse();
    assertThat(p.get(expired).latency().toMillis()).isEqualTo(3000);
    assertThat(p.get(admitted).latency().toMillis()).isEqualTo(5000);
  }

  private static double counter(SimpleMeterRegistry registry, String name, String domain) {
    var found = registry.find(name).tag("domain", domain);
    if (found.counter() != null) {
      return found.counter().count();
    }
    return found.functionCounter() == null ? 0 : found.functionCounter().count();
  }
}

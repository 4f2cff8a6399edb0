package dev.ledger.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Claimer;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every queue control of a pool's domain is a Micrometer gauge ({@link MicrometerWorkerMetrics}):
 * paused, the concurrency limit, the rate limit and the tasks claimed now, sampled by a running
 * pool on real PostgreSQL; a domain without controls reads -1 for each limit.
 */
class ControlGaugesTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @Test
  void a_running_pool_publishes_its_domains_controls_as_gauges() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    ledger.fileAndAdmit(TaskSpec.builder("gauged", "held").build());
    ledger.claimNext("gauged", Claimer.of("elsewhere").lease(Duration.ofMinutes(5))).orElseThrow();
    ledger.setLimits("gauged", 3, 10, Duration.ofSeconds(1));
    ledger.pause("gauged");
    ledger.provision("plain");
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (WorkerPool pool =
        WorkerPool.builder(ledger)
            .metrics(MicrometerWorkerMetrics.of(registry))
            .domain("gauged", (task, ctx) -> Outcome.done())
            .domain("plain", (task, ctx) -> Outcome.done())
            .start()) {
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (registry.find("ledger.queue.claimed").tag("domain", "plain").gauge() == null
          || registry.find("ledger.queue.claimed").tag("domain", "gauged").gauge() == null) {
        assertThat(System.nanoTime()).as("waited 60 s for the first sample").isLessThan(deadline);
        Thread.sleep(20);
      }
    }
    assertThat(gauge(registry, "ledger.queue.paused", "gauged")).isEqualTo(1.0);
    assertThat(gauge(registry, "ledger.queue.max.claimed", "gauged")).isEqualTo(3.0);
    assertThat(gauge(registry, "ledger.queue.rate.claims", "gauged")).isEqualTo(10.0);
    assertThat(gauge(registry, "ledger.queue.rate.period.ms", "gauged")).isEqualTo(1000.0);
    assertThat(gauge(registry, "ledger.queue.claimed", "gauged")).isEqualTo(1.0);
    assertThat(gauge(registry, "ledger.queue.paused", "plain")).isZero();
    assertThat(gauge(registry, "ledger.queue.max.claimed", "plain")).isEqualTo(-1.0);
    assertThat(gauge(registry, "ledger.queue.rate.claims", "plain")).isEqualTo(-1.0);
    assertThat(gauge(registry, "ledger.queue.claimed", "plain")).isZero();
  }

  private static double gauge(SimpleMeterRegistry registry, String name, String domain) {
    Gauge g = registry.get(name).tag("domain", domain).gauge();
    return g.value();
  }
}

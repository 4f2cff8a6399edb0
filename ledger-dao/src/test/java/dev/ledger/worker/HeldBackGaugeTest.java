package dev.ledger.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/** The {@code ledger.queue.held} gauges: 1 for the control that held the last claim back. */
class HeldBackGaugeTest {

  @Test
  void the_gauge_of_the_holding_control_is_one_and_the_others_zero() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    MicrometerWorkerMetrics metrics = MicrometerWorkerMetrics.of(registry);

    metrics.heldBack("payments", "concurrency");

    assertThat(held(registry, "payments", "concurrency")).isEqualTo(1.0);
    assertThat(held(registry, "payments", "paused")).isZero();
    assertThat(held(registry, "payments", "rate")).isZero();

    metrics.heldBack("payments", null);

    assertThat(held(registry, "payments", "concurrency")).isZero();
  }

  private static double held(SimpleMeterRegistry registry, String domain, String control) {
    return registry
        .get("ledger.queue.held")
        .tag("domain", domain)
        .tag("control", control)
        .gauge()
        .value();
  }
}

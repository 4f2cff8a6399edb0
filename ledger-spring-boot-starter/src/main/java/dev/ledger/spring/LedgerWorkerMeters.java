package dev.ledger.spring;

import dev.ledger.worker.MicrometerWorkerMetrics;
import dev.ledger.worker.WorkerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.util.ClassUtils;

/**
 * The worker pool's Micrometer meters over the context's {@code MeterRegistry}. Only this class
 * names Micrometer's types, and {@link LedgerWorkerAutoConfiguration} calls it only when {@link
 * #MICROMETER} is true, so the starter runs without Micrometer on the class path.
 */
final class LedgerWorkerMeters {

  /** Whether Micrometer is on the class path. */
  static final boolean MICROMETER =
      ClassUtils.isPresent(
          "io.micrometer.core.instrument.MeterRegistry", LedgerWorkerMeters.class.getClassLoader());

  private LedgerWorkerMeters() {}

  /**
   * Meters in the context's registry (its primary one when there are several, as Spring Boot's
   * composite registry is).
   *
   * @param beans the context
   * @return the metrics, or null when the context has no registry
   */
  static WorkerMetrics of(ListableBeanFactory beans) {
    MeterRegistry registry = beans.getBeanProvider(MeterRegistry.class).getIfAvailable();
    return registry == null ? null : MicrometerWorkerMetrics.of(registry);
  }
}

package dev.ledger.spring;

import dev.ledger.feed.FeedLag;
import dev.ledger.feed.FeedRunner;
import dev.ledger.feed.FeedSpec;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ListableBeanFactory;

/**
 * A feed runner's Micrometer meters. Only this class (and {@link LedgerWorkerMeters}) names
 * Micrometer's types; it is called only when Micrometer is on the class path.
 */
final class LedgerFeedMeters {

  private LedgerFeedMeters() {}

  /**
   * Registers the runner's meters in the context's registry, when it has one.
   *
   * @param beans the context
   * @param spec the runner's consumer and domains
   * @param runner the runner
   */
  static void register(ListableBeanFactory beans, FeedSpec spec, FeedRunner runner) {
    MeterRegistry registry = beans.getBeanProvider(MeterRegistry.class).getIfAvailable();
    if (registry == null) {
      return;
    }
    FunctionCounter.builder("ledger.feed.delivered", runner, FeedRunner::delivered)
        .tag("consumer", spec.consumer())
        .description("events handed to the handler whose checkpoint committed")
        .register(registry);
    FunctionCounter.builder("ledger.feed.failures", runner, FeedRunner::failures)
        .tag("consumer", spec.consumer())
        .description("batches that failed: handler, refused checkpoint or database")
        .register(registry);
    for (String domain : spec.domains()) {
      Gauge.builder("ledger.feed.lag", runner, r -> pending(r, domain))
          .tag("consumer", spec.consumer())
          .tag("domain", domain)
          .description("committed events the consumer has not checkpointed yet")
          .register(registry);
    }
  }

  private static double pending(FeedRunner runner, String domain) {
    try {
      for (FeedLag lag : runner.lag()) {
        if (lag.domain().equals(domain)) {
          return lag.pending();
        }
      }
    } catch (RuntimeException e) {
      return Double.NaN; // the database is not answering: no sample
    }
    return Double.NaN;
  }
}

package dev.ledger.spring;

import dev.ledger.InvalidInputException;
import dev.ledger.Ledger;
import dev.ledger.worker.RetryPolicy;
import dev.ledger.worker.WorkerMetrics;
import dev.ledger.worker.WorkerPool;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Runs the worker runtime ({@code dev.ledger.worker}) from handler beans: one {@link WorkerPool}
 * over the starter's {@link Ledger}, serving the domain of every {@link LedgerTaskHandler} bean,
 * configured by {@code ledger.worker.*} ({@link LedgerWorkerProperties}). The pool starts when the
 * context has started (after every bean, the service's Flyway and the ledger's migration) and
 * closes first when it stops, before the {@code DataSource} does ({@link LedgerWorkerLifecycle}).
 *
 * <p>Metrics: a {@link WorkerMetrics} bean of the application's own, or else, when Micrometer is on
 * the class path and the context has a {@code MeterRegistry} (Spring Boot's actuator makes one),
 * {@code MicrometerWorkerMetrics} over it (docs/workers.md lists the meters); neither: none.
 *
 * <p>Only when the worker classes are on the class path, a {@code Ledger} and at least one handler
 * bean exist, and {@code ledger.worker.enabled} is not false. A {@code LedgerWorkerLifecycle} bean
 * of the application's own replaces it.
 */
@AutoConfiguration(after = LedgerAutoConfiguration.class)
@ConditionalOnClass(name = "dev.ledger.worker.WorkerPool")
@ConditionalOnBean({Ledger.class, LedgerTaskHandler.class})
@ConditionalOnProperty(prefix = "ledger.worker", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(LedgerWorkerProperties.class)
public class LedgerWorkerAutoConfiguration {

  /** Created by Spring. */
  public LedgerWorkerAutoConfiguration() {}

  /**
   * The pool's lifecycle over the handler beans.
   *
   * @param ledger the ledger
   * @param dataSource the service's data source, for the pool's one listening connection
   * @param handlers every {@link LedgerTaskHandler} bean
   * @param properties {@code ledger.worker.*}
   * @param metrics the application's own {@link WorkerMetrics} bean, if any
   * @param beans the context, for its {@code MeterRegistry}, looked up when the pool is built
   * @return the lifecycle; the pool is built and started by {@link LedgerWorkerLifecycle#start()}
   * @throws InvalidInputException naming {@code domain} when two handler beans serve one domain
   */
  @Bean
  @ConditionalOnMissingBean
  public LedgerWorkerLifecycle ledgerWorkerLifecycle(
      Ledger ledger,
      DataSource dataSource,
      ObjectProvider<LedgerTaskHandler> handlers,
      LedgerWorkerProperties properties,
      ObjectProvider<WorkerMetrics> metrics,
      ListableBeanFactory beans) {
    Map<String, LedgerTaskHandler> byDomain = new HashMap<>();
    List<LedgerTaskHandler> all = handlers.orderedStream().toList();
    for (LedgerTaskHandler h : all) {
      LedgerTaskHandler before = byDomain.putIfAbsent(h.domain(), h);
      if (before != null) {
        throw new InvalidInputException(
            "domain",
            "two LedgerTaskHandler beans serve "
                + h.domain()
                + ": "
                + before.getClass().getName()
                + " and "
                + h.getClass().getName());
      }
    }
    return new LedgerWorkerLifecycle(
        () -> {
          WorkerPool.Builder b =
              WorkerPool.builder(ledger)
                  .dataSource(dataSource)
                  .concurrency(properties.getConcurrency())
                  .lease(properties.getLease())
                  .pollInterval(properties.getPollInterval())
                  .shutdownTimeout(properties.getShutdownTimeout())
                  .logTaskText(properties.isLogTaskText())
                  .handlerTimeout(properties.getHandlerTimeout())
                  .retry(
                      new RetryPolicy(
                          properties.getMaxAttempts(),
                          properties.getRetryInitial(),
                          properties.getRetryMax(),
                          properties.getRetryMultiplier(),
                          properties.getRetryJitter()))
                  .manifest(properties.getManifest());
          WorkerMetrics m = metrics.getIfAvailable();
          if (m == null && LedgerWorkerMeters.MICROMETER) {
            m = LedgerWorkerMeters.of(beans);
          }
          if (m != null) {
            b.metrics(m);
          }
          if (properties.getHolder() != null) {
            b.holder(properties.getHolder());
          }
          if (properties.isAwaitUnknownDomains()) {
            b.awaitUnknownDomains();
          }
          for (LedgerTaskHandler h : all) {
            b.domain(h.domain(), h);
          }
          return b.build();
        });
  }
}

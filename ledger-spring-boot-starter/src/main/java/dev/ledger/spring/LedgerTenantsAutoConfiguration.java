package dev.ledger.spring;

import dev.ledger.InvalidInputException;
import dev.ledger.LedgerConfig;
import dev.ledger.tenants.MicrometerTenantMetrics;
import dev.ledger.tenants.TenantDirectory;
import dev.ledger.worker.TenantWorkerPool;
import dev.ledger.worker.WorkerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Serves every tenant database of a fleet from {@code ledger.tenants.*} ({@link
 * LedgerTenantsProperties}), when {@code ledger.tenants.control-url} is set:
 *
 * <ul>
 *   <li>a {@link TenantDirectory} bean over the control database (its small pool, {@link
 *       LedgerTenantsControl}, is not a {@code DataSource} bean), closed when the context closes;
 *       each tenant's ledger runs with {@code ledger.tenants.runtime-ddl}, adjusted by every {@link
 *       LedgerConfigCustomizer} bean;
 *   <li>one {@link TenantWorkerPool} per {@link LedgerTenantTaskHandler} bean, serving its domain
 *       across all tenants in fair turns, started when the context has started and closed before
 *       the directory ({@link LedgerTenantWorkerLifecycle}), unless {@code
 *       ledger.tenants.worker.enabled=false};
 *   <li>the directory's meters ({@link MicrometerTenantMetrics}) in the application's {@code
 *       MeterRegistry}, when Micrometer is present; and the pools' meters, the single-database
 *       pool's ({@code ledger.tasks.*}, tagged by domain, never by tenant), from a {@link
 *       WorkerMetrics} bean of the application's own or else over that registry.
 * </ul>
 *
 * <p>Independent of the single-database {@link LedgerAutoConfiguration}: a multi-tenant service
 * needs no {@code DataSource} of its own. Each bean backs off when the application defines its own.
 */
@AutoConfiguration
@ConditionalOnClass(TenantDirectory.class)
@ConditionalOnProperty(prefix = "ledger.tenants", name = "control-url")
@EnableConfigurationProperties(LedgerTenantsProperties.class)
public class LedgerTenantsAutoConfiguration {

  /** Created by Spring. */
  public LedgerTenantsAutoConfiguration() {}

  /**
   * The control database's pool.
   *
   * @param properties {@code ledger.tenants.*}
   * @return the pool, closed after the directory
   */
  @Bean
  @ConditionalOnMissingBean
  public LedgerTenantsControl ledgerTenantsControl(LedgerTenantsProperties properties) {
    return new LedgerTenantsControl(properties.getControlUrl(), properties.getControlPoolSize());
  }

  /**
   * The tenant directory: bootstraps the registry (unless turned off), reconciles the fleet (when
   * asked), reads the registry and serves its active tenants.
   *
   * @param control the control database
   * @param properties {@code ledger.tenants.*}
   * @param customizers applied in their order to each tenant's ledger configuration
   * @return the open directory; closed by the context
   * @throws IllegalArgumentException naming the setting when one is refused
   * @throws dev.ledger.migrate.MigrationException when the control database cannot be read
   */
  @Bean
  @ConditionalOnMissingBean
  public TenantDirectory tenantDirectory(
      LedgerTenantsControl control,
      LedgerTenantsProperties properties,
      ObjectProvider<LedgerConfigCustomizer> customizers) {
    LedgerConfig.Builder config = LedgerConfig.builder().runtimeDdl(properties.isRuntimeDdl());
    customizers.orderedStream().forEach(c -> c.customize(config));
    return TenantDirectory.builder()
        .control(control.dataSource())
        .controlSchema(properties.getControlSchema())
        .bootstrapRegistry(properties.isBootstrapRegistry())
        .reconcile(properties.isReconcile())
        .ledgerConfig(config.build())
        .connectionBudget(properties.getConnectionBudget())
        .connectionsPerTenant(properties.getConnectionsPerTenant())
        .refreshInterval(properties.getRefreshInterval())
        .retryInterval(properties.getRetryInterval())
        .probeInterval(properties.getProbeInterval())
        .connectTimeout(properties.getConnectTimeout())
        .idleTimeout(properties.getIdleTimeout())
        .drainTimeout(properties.getDrainTimeout())
        .open();
  }

  /** The cross-tenant worker pools, when handler beans exist. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnBean(LedgerTenantTaskHandler.class)
  @ConditionalOnProperty(prefix = "ledger.tenants.worker", name = "enabled", matchIfMissing = true)
  static class Workers {

    @Bean
    @ConditionalOnMissingBean
    LedgerTenantWorkerLifecycle ledgerTenantWorkerLifecycle(
        TenantDirectory directory,
        ObjectProvider<LedgerTenantTaskHandler> handlers,
        LedgerTenantsProperties properties,
        ObjectProvider<WorkerMetrics> metrics,
        ListableBeanFactory beans) {
      Map<String, LedgerTenantTaskHandler> byDomain = new HashMap<>();
      List<Supplier<TenantWorkerPool>> factories = new ArrayList<>();
      LedgerTenantsProperties.Worker w = properties.getWorker();
      for (LedgerTenantTaskHandler h : handlers.orderedStream().toList()) {
        LedgerTenantTaskHandler before = byDomain.putIfAbsent(h.domain(), h);
        if (before != null) {
          throw new InvalidInputException(
              "domain",
              "two LedgerTenantTaskHandler beans serve "
                  + h.domain()
                  + ": "
                  + before.getClass().getName()
                  + " and "
                  + h.getClass().getName());
        }
        factories.add(
            () -> {
              TenantWorkerPool.Builder b =
                  TenantWorkerPool.builder(directory)
                      .domain(h.domain(), h)
                      .concurrency(w.getConcurrency())
                      .quantum(w.getQuantum())
                      .lease(w.getLease())
                      .pollInterval(w.getPollInterval())
                      .shutdownTimeout(w.getShutdownTimeout());
              if (w.getMaxPerTenant() > 0) {
                b.maxPerTenant(w.getMaxPerTenant());
              }
              if (w.getHolder() != null) {
                b.holder(w.getHolder() + "-" + h.domain());
              }
              // the same meters as the single-database pool's (tagged by domain, never by tenant)
              WorkerMetrics m = metrics.getIfAvailable();
              if (m == null && LedgerWorkerMeters.MICROMETER) {
                m = LedgerWorkerMeters.of(beans);
              }
              if (m != null) {
                b.metrics(m);
              }
              return b.start();
            });
      }
      return new LedgerTenantWorkerLifecycle(factories);
    }
  }

  /** The directory's meters, when Micrometer is on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
  static class Metrics {

    @Bean
    SmartInitializingSingleton ledgerTenantsMetrics(
        TenantDirectory directory, ObjectProvider<MeterRegistry> registries) {
      // after every singleton: the registry (Boot's or the application's) exists by then
      return () ->
          registries.orderedStream().forEach(r -> MicrometerTenantMetrics.bind(directory, r));
    }
  }
}

package dev.ledger.spring;

import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;

/**
 * Auto-configures the ledger in a Spring Boot 3.5 or 4.0 application that has one {@code
 * DataSource}:
 *
 * <ul>
 *   <li>{@link LedgerConfig} from the {@code ledger.*} properties ({@link LedgerProperties}),
 *       adjusted by every {@link LedgerConfigCustomizer} bean;
 *   <li>{@link LedgerMigrationInitializer} (unless {@code ledger.migration.enabled=false}): the
 *       directory schema migrated and {@code ledger.migration.domains} provisioned at startup,
 *       after the service's own Flyway by default ({@link LedgerMigrationDetectors});
 *   <li>{@link Ledger} on the {@code DataSource} wrapped in Spring's {@link
 *       TransactionAwareDataSourceProxy}: inside a Spring-managed transaction
 *       ({@code @Transactional}, {@code TransactionTemplate}) every ledger call runs on that
 *       transaction's connection and commits or rolls back with it; outside one each call is its
 *       own transaction;
 *   <li>the {@code ledger} health indicator when Actuator is present (Boot 3's or Boot 4's health
 *       API, whichever is on the class path), unless {@code
 *       management.health.ledger.enabled=false}.
 * </ul>
 *
 * <p>Each bean backs off when the application defines its own. Class names of Boot's DataSource and
 * Flyway auto-configurations are given as strings: they moved packages in Boot 4.
 */
@AutoConfiguration(
    afterName = {
      "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
      "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
      "org.springframework.boot.autoconfigure.flyway.FlywayAutoConfiguration",
      "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration"
    })
@ConditionalOnClass({Ledger.class, TransactionAwareDataSourceProxy.class})
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnProperty(prefix = "ledger", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(LedgerProperties.class)
public class LedgerAutoConfiguration {

  /** Created by Spring. */
  public LedgerAutoConfiguration() {}

  /**
   * The ledger's configuration from the properties and the customizers.
   *
   * @param properties the {@code ledger.*} properties
   * @param customizers applied in their order
   * @return the configuration
   * @throws dev.ledger.InvalidInputException naming {@code directorySchema} when the property is
   *     not a lowercase identifier, or the {@code ledger.timeouts.*} bound that is not positive
   */
  @Bean
  @ConditionalOnMissingBean
  public LedgerConfig ledgerConfig(
      LedgerProperties properties, ObjectProvider<LedgerConfigCustomizer> customizers) {
    LedgerConfig.Builder builder =
        LedgerConfig.builder()
            .directorySchema(properties.getDirectorySchema())
            .runtimeDdl(properties.isRuntimeDdl())
            .timeouts(properties.getTimeouts().toTimeouts());
    customizers.orderedStream().forEach(c -> c.customize(builder));
    return builder.build();
  }

  /**
   * The startup migration of the ledger's schema.
   *
   * @param dataSource the service's data source
   * @param config the ledger's configuration
   * @param properties for {@code ledger.migration.domains}
   * @return the initializer; it runs as it initializes
   */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnProperty(prefix = "ledger.migration", name = "enabled", matchIfMissing = true)
  public LedgerMigrationInitializer ledgerMigrationInitializer(
      DataSource dataSource, LedgerConfig config, LedgerProperties properties) {
    return new LedgerMigrationInitializer(
        dataSource, config, properties.getMigration().getDomains());
  }

  /**
   * The ledger, joining Spring-managed transactions. Created after every database initializer (the
   * service's Flyway and the ledger's startup migration).
   *
   * @param dataSource the service's data source
   * @param config the ledger's configuration
   * @param migration the startup migration, when enabled: it has run before this method
   * @return the ledger
   * @throws dev.ledger.SchemaVersionException when the directory is behind and runtime DDL and the
   *     startup migration are both off, or is ahead of this code
   */
  @Bean
  @ConditionalOnMissingBean
  @DependsOnDatabaseInitialization
  public Ledger ledger(
      DataSource dataSource,
      LedgerConfig config,
      ObjectProvider<LedgerMigrationInitializer> migration) {
    migration.ifAvailable(m -> {});
    return Ledger.open(joining(dataSource), config);
  }

  /**
   * The data source the ledger runs on: a {@link TransactionAwareDataSourceProxy}, so a connection
   * asked for inside a Spring-managed transaction is that transaction's.
   *
   * @param dataSource the service's data source
   * @return the proxy (the data source itself when it already is one)
   */
  static DataSource joining(DataSource dataSource) {
    return dataSource instanceof TransactionAwareDataSourceProxy
        ? dataSource
        : new TransactionAwareDataSourceProxy(dataSource);
  }

  /** The health indicator on Spring Boot 4 ({@code spring-boot-health}). */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
  @ConditionalOnProperty(
      prefix = "management.health.ledger",
      name = "enabled",
      matchIfMissing = true)
  static class Boot4Health {

    @Bean
    @ConditionalOnMissingBean(name = "ledgerHealthIndicator")
    LedgerHealthIndicatorBoot4 ledgerHealthIndicator(
        Ledger ledger, DataSource dataSource, LedgerConfig config) {
      return new LedgerHealthIndicatorBoot4(
          new LedgerHealthProbe(ledger, dataSource, config.directorySchema()));
    }
  }

  /** The health indicator on Spring Boot 3 ({@code spring-boot-actuator}). */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
  @ConditionalOnMissingClass("org.springframework.boot.health.contributor.HealthIndicator")
  @ConditionalOnProperty(
      prefix = "management.health.ledger",
      name = "enabled",
      matchIfMissing = true)
  static class Boot3Health {

    @Bean
    @ConditionalOnMissingBean(name = "ledgerHealthIndicator")
    LedgerHealthIndicatorBoot3 ledgerHealthIndicator(
        Ledger ledger, DataSource dataSource, LedgerConfig config) {
      return new LedgerHealthIndicatorBoot3(
          new LedgerHealthProbe(ledger, dataSource, config.directorySchema()));
    }
  }
}

package dev.ledger.spring;

import java.util.Set;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.sql.init.dependency.DatabaseInitializerDetector;
import org.springframework.core.env.Environment;

/**
 * Puts the {@link LedgerMigrationInitializer} into Spring Boot's database-initialization order (the
 * {@code DatabaseInitializerDetector} SPI, registered in {@code META-INF/spring.factories}; the
 * same interface and package on Boot 3.5 and 4.0). Boot makes each detector's initializers depend
 * on those of every detector ordered before it, and every bean marked
 * {@code @DependsOnDatabaseInitialization} (the {@code Ledger} bean, {@code JdbcTemplate}, jOOQ's
 * {@code DSLContext}) on all of them. Boot's two Flyway detectors have order 1.
 *
 * <p>Exactly one of the two detectors claims the initializer, by {@code ledger.migration.order}
 * (relaxed binding: {@code after-flyway}, {@code AFTER_FLYWAY}). Stateless, thread-safe.
 */
public final class LedgerMigrationDetectors {

  /** Boot's Flyway detectors' order ({@code FlywayDatabaseInitializerDetector#getOrder}). */
  static final int FLYWAY_ORDER = 1;

  private LedgerMigrationDetectors() {}

  /** Claims the initializer for {@code after-flyway} (the default): order {@value #ORDER}. */
  public static final class AfterFlyway extends Base {
    /** Right after Boot's Flyway detectors, before SQL-script initialization. */
    static final int ORDER = FLYWAY_ORDER + 1;

    /** Created by Spring's factories loader. */
    public AfterFlyway() {
      super(LedgerProperties.Order.AFTER_FLYWAY, ORDER);
    }
  }

  /** Claims the initializer for {@code before-flyway}: order {@value #ORDER}. */
  public static final class BeforeFlyway extends Base {
    /** Before Boot's Flyway (and Liquibase's and JPA's, at their default order 0 or above). */
    static final int ORDER = -100;

    /** Created by Spring's factories loader. */
    public BeforeFlyway() {
      super(LedgerProperties.Order.BEFORE_FLYWAY, ORDER);
    }
  }

  /** What both detectors share. */
  abstract static class Base implements DatabaseInitializerDetector {
    private final LedgerProperties.Order claims;
    private final int order;

    Base(LedgerProperties.Order claims, int order) {
      this.claims = claims;
      this.order = order;
    }

    @Override
    public Set<String> detect(ConfigurableListableBeanFactory beanFactory) {
      String[] names =
          beanFactory.getBeanNamesForType(LedgerMigrationInitializer.class, true, false);
      if (names.length == 0 || configuredOrder(beanFactory) != claims) {
        return Set.of();
      }
      return Set.of(names);
    }

    @Override
    public int getOrder() {
      return order;
    }

    private static LedgerProperties.Order configuredOrder(
        ConfigurableListableBeanFactory beanFactory) {
      Environment environment = beanFactory.getBean(Environment.class);
      return Binder.get(environment)
          .bind("ledger.migration.order", LedgerProperties.Order.class)
          .orElse(LedgerProperties.Order.AFTER_FLYWAY);
    }
  }
}

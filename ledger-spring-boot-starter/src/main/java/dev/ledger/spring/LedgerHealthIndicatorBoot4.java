package dev.ledger.spring;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The {@code ledger} health indicator on Spring Boot 4, whose health API moved to {@code
 * org.springframework.boot.health.contributor} (module {@code spring-boot-health}); created only
 * when that API is on the class path. See {@link LedgerHealthProbe} for what it checks.
 * Thread-safe.
 */
public class LedgerHealthIndicatorBoot4 extends AbstractHealthIndicator {

  private final LedgerHealthProbe probe;

  /**
   * Creates the indicator.
   *
   * @param probe the check, not null
   */
  public LedgerHealthIndicatorBoot4(LedgerHealthProbe probe) {
    super("Ledger health check failed");
    this.probe = probe;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) throws Exception {
    LedgerHealthProbe.Result result = probe.check();
    (result.up() ? builder.up() : builder.down()).withDetails(result.details());
  }
}

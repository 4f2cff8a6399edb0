package dev.ledger.spring;

import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * The {@code ledger} health indicator on Spring Boot 3 ({@code
 * org.springframework.boot.actuate.health}); created only when that API is on the class path and
 * Boot 4's is not. See {@link LedgerHealthProbe} for what it checks. Thread-safe.
 */
public class LedgerHealthIndicatorBoot3 extends AbstractHealthIndicator {

  private final LedgerHealthProbe probe;

  /**
   * Creates the indicator.
   *
   * @param probe the check, not null
   */
  public LedgerHealthIndicatorBoot3(LedgerHealthProbe probe) {
    super("Ledger health check failed");
    this.probe = probe;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) throws Exception {
    LedgerHealthProbe.Result result = probe.check();
    (result.up() ? builder.up() : builder.down()).withDetails(result.details());
  }
}

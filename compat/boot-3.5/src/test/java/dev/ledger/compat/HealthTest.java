package dev.ledger.compat;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.schema.LedgerMigrations;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.actuate.health.Status;

/** The ledger's health indicator, through Spring Boot 3's health endpoint. */
class HealthTest extends CompatTestBase {

  @Autowired HealthEndpoint health;

  @Test
  void theLedgerComponentIsUpWithItsDirectoryVersion() {
    Health ledger = (Health) health.healthForPath("ledger");
    assertThat(ledger.getStatus()).isEqualTo(Status.UP);
    assertThat(ledger.getDetails())
        .containsEntry("directorySchema", "public")
        .containsEntry("directoryVersion", LedgerMigrations.DIRECTORY_VERSION)
        .containsEntry("expectedDirectoryVersion", LedgerMigrations.DIRECTORY_VERSION)
        .containsEntry("domains", 2);
    assertThat(health.health().getStatus()).isEqualTo(Status.UP);
  }
}

package dev.ledger.compat;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.schema.LedgerMigrations;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.actuate.endpoint.IndicatedHealthDescriptor;
import org.springframework.boot.health.contributor.Status;

/**
 * The ledger's health indicator, through Spring Boot 4's health endpoint (the health API moved to
 * {@code org.springframework.boot.health}).
 */
class HealthTest extends CompatTestBase {

  @Autowired HealthEndpoint health;

  @Test
  void theLedgerComponentIsUpWithItsDirectoryVersion() {
    IndicatedHealthDescriptor ledger = (IndicatedHealthDescriptor) health.healthForPath("ledger");
    assertThat(ledger.getStatus()).isEqualTo(Status.UP);
    assertThat(ledger.getDetails())
        .containsEntry("directorySchema", "public")
        .containsEntry("directoryVersion", LedgerMigrations.DIRECTORY_VERSION)
        .containsEntry("expectedDirectoryVersion", LedgerMigrations.DIRECTORY_VERSION)
        .containsEntry("domains", 2);
    assertThat(health.health().getStatus()).isEqualTo(Status.UP);
  }
}

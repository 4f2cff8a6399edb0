package dev.ledger.compat;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * The starter's worker wiring on this Spring Boot line: the {@link ConfirmationMailer} bean's
 * domain is run by the starter's pool, and the pool's meters land in the context's {@code
 * MeterRegistry} (the actuator's).
 */
class WorkerTest extends CompatTestBase {

  @Autowired Ledger ledger;
  @Autowired ConfirmationMailer mailer;
  @Autowired MeterRegistry meters;

  @Test
  void aHandlerBeanRunsItsDomainsTasksAndThePoolsMetersAreInTheContextsRegistry()
      throws InterruptedException {
    String id =
        ledger.fileAndAdmit(
            TaskSpec.builder(ConfirmationMailer.DOMAIN, "Confirm order o-mail-1")
                .body("buyer@example.com")
                .build());
    Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
    while (ledger.get(id).status() != Status.COMPLETED && Instant.now().isBefore(deadline)) {
      Thread.sleep(20);
    }
    assertThat(ledger.get(id).status()).isEqualTo(Status.COMPLETED);
    assertThat(ledger.get(id).handoff()).isEqualTo("sent to buyer@example.com");
    assertThat(mailer.sent()).containsExactly("buyer@example.com");
    while (meters.find("ledger.tasks.completed").counter() == null
        && Instant.now().isBefore(deadline)) {
      Thread.sleep(20); // the counter follows the completion's commit
    }
    assertThat(
            meters
                .get("ledger.tasks.completed")
                .tag("domain", ConfirmationMailer.DOMAIN)
                .counter()
                .count())
        .isEqualTo(1.0);
    assertThat(
            meters
                .get("ledger.pickup.latency")
                .tag("domain", ConfirmationMailer.DOMAIN)
                .timer()
                .count())
        .isEqualTo(1);
  }
}

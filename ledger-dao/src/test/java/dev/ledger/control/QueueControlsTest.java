package dev.ledger.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.ClaimHold;
import dev.ledger.Claimer;
import dev.ledger.DomainControls;
import dev.ledger.InvalidInputException;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import dev.ledger.WrongStateException;
import dev.ledger.testing.PostgresExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The queue controls through the API, one process: a pause, a concurrency limit (an expired lease
 * frees its slot), a rate limit, a batch claim cut to the room left, the held-back record pools
 * read, and the bad inputs (typed, naming the field, nothing written). The many-process proofs are
 * in {@code QueueControlsProcessTest}.
 */
class QueueControlsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static Ledger ledger;
  private static final Claimer ME = Claimer.of("me").lease(Duration.ofMinutes(5));

  @BeforeAll
  static void open() {
    ledger = Ledger.open(PG.dataSource());
  }

  private static List<String> fileAdmitted(String domain, int n) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ids.add(ledger.fileAndAdmit(TaskSpec.builder(domain, "task " + i).build()));
    }
    return ids;
  }

  @Test
  void a_paused_domain_claims_nothing_files_still_and_claims_again_once_resumed() {
    List<String> ids = fileAdmitted("paused", 3);
    Lease running = ledger.claimNext("paused", ME).orElseThrow();

    DomainControls after = ledger.pause("paused");

    assertThat(after.paused()).isTrue();
    assertThat(after.claimedNow()).isEqualTo(1);
    assertThat(ledger.claimBatch("paused", ME, 10)).isEmpty();
    assertThat(ledger.worker().heldBack("paused")).map(Map.Entry::getKey).contains("paused");
    assertThat(ledger.claimHold("paused"))
        .contains(new ClaimHold(ClaimHold.Reason.PAUSED, QueueControls.PAUSED_RECHECK));
    assertThatThrownBy(() -> ledger.claim(ids.get(2), ME))
        .isInstanceOf(WrongStateException.class)
        .hasMessageContaining("its domain is paused");
    String filed = ledger.fileAndAdmit(TaskSpec.builder("paused", "filed while paused").build());
    ledger.complete(running, "finished while paused"); // running tasks finish

    DomainControls resumed = ledger.resume("paused");

    assertThat(resumed.paused()).isFalse();
    assertThat(resumed.any()).isFalse();
    List<Lease> claimed = ledger.claimBatch("paused", ME, 10);
    assertThat(claimed)
        .extracting(Lease::taskId)
        .containsExactlyInAnyOrder(ids.get(1), ids.get(2), filed);
    assertThat(ledger.worker().heldBack("paused")).isEmpty();
    assertThat(ledger.claimHold("paused")).isEmpty();
    // nothing claimable and nothing held back: no hold either
    assertThat(ledger.claimBatch("paused", ME, 10)).isEmpty();
    assertThat(ledger.claimHold("paused")).isEmpty();
  }

  @Test
  void a_concurrency_limit_cuts_batches_to_the_room_left_and_an_expired_lease_frees_its_slot()
      throws InterruptedException {
    fileAdmitted("limited", 10);
    ledger.setLimits("limited", 3, null, null);

    List<Lease> first = ledger.claimBatch("limited", ME, 2);
    List<Lease> second = ledger.claimBatch("limited", ME, 10);
    List<Lease> third = ledger.claimBatch("limited", ME, 10);

    assertThat(first).hasSize(2);
    assertThat(second).hasSize(1);
    assertThat(third).isEmpty();
    assertThat(ledger.worker().heldBack("limited")).map(Map.Entry::getKey).contains("concurrency");
    assertThat(ledger.claimHold("limited"))
        .contains(new ClaimHold(ClaimHold.Reason.CONCURRENCY_LIMIT, QueueControls.LIMITED_RECHECK));
    assertThat(ledger.controls("limited").claimedNow()).isEqualTo(3);

    ledger.complete(first.get(0), "done");
    assertThat(ledger.claimBatch("limited", ME, 10)).hasSize(1);

    // a lease that runs out frees its slot: the limit counts live leases only
    ledger.release(first.get(1));
    Lease shortLived =
        ledger
            .claimNext("limited", Claimer.of("short").lease(Duration.ofMillis(300)))
            .orElseThrow();
    assertThat(ledger.claimBatch("limited", ME, 10)).isEmpty();
    Thread.sleep(400);
    assertThat(ledger.claimBatch("limited", ME, 10)).hasSize(1);
    assertThat(shortLived.until()).isBefore(java.time.Instant.now());

    DomainControls cleared = ledger.clearLimits("limited");
    assertThat(cleared.any()).isFalse();
    // 10 filed, 1 completed, 3 held: the other 6
    assertThat(ledger.claimBatch("limited", ME, 10)).hasSize(6);
  }

  @Test
  void a_rate_limit_lets_through_at_most_its_claims_per_period() throws InterruptedException {
    fileAdmitted("rated", 20);
    DomainControls set = ledger.setLimits("rated", null, 5, Duration.ofMillis(500));
    assertThat(set.rateText()).isEqualTo("5/500ms");

    assertThat(ledger.claimBatch("rated", ME, 3)).hasSize(3);
    assertThat(ledger.claimBatch("rated", ME, 10)).hasSize(2);
    assertThat(ledger.claimBatch("rated", ME, 10)).isEmpty();
    Optional<Map.Entry<String, Duration>> held = ledger.worker().heldBack("rated");
    assertThat(held).map(Map.Entry::getKey).contains("rate");
    assertThat(ledger.claimHold("rated"))
        .map(ClaimHold::reason)
        .contains(ClaimHold.Reason.RATE_LIMIT);
    assertThat(held.orElseThrow().getValue())
        .isBetween(Duration.ofMillis(10), Duration.ofSeconds(1));

    Thread.sleep(600); // 500 ms and a bucket (25 ms) later, the window is empty again
    assertThat(ledger.claimBatch("rated", ME, 10)).hasSize(5);
  }

  @Test
  void both_limits_hold_together_and_the_stricter_binds() {
    fileAdmitted("both", 10);
    ledger.setLimits("both", 4, 2, Duration.ofMinutes(1));

    assertThat(ledger.claimBatch("both", ME, 10)).hasSize(2);
    assertThat(ledger.worker().heldBack("both")).map(Map.Entry::getKey).contains("rate");
    DomainControls c = ledger.controls("both");
    assertThat(c.maxClaimed()).isEqualTo(4);
    assertThat(c.rateClaims()).isEqualTo(2);
    assertThat(c.ratePeriod()).isEqualTo(Duration.ofMinutes(1));
    assertThat(c.claimedNow()).isEqualTo(2);
  }

  @Test
  void bad_limits_are_refused_naming_the_field_and_nothing_is_written() {
    fileAdmitted("bad", 1);
    assertField(() -> ledger.setLimits("bad", 0, null, null), "maxClaimed");
    assertField(() -> ledger.setLimits("bad", 1_000_001, null, null), "maxClaimed");
    assertField(() -> ledger.setLimits("bad", null, 0, Duration.ofSeconds(1)), "rateClaims");
    assertField(() -> ledger.setLimits("bad", null, 10, null), "ratePeriod");
    assertField(() -> ledger.setLimits("bad", null, null, Duration.ofSeconds(1)), "rateClaims");
    assertField(() -> ledger.setLimits("bad", null, 10, Duration.ofMillis(99)), "ratePeriod");
    assertField(() -> ledger.setLimits("bad", null, 10, Duration.ofDays(2)), "ratePeriod");
    assertField(() -> ledger.setLimits("bad", null, null, null), "maxClaimed");
    assertField(() -> ledger.pause(""), "domain");
    assertField(() -> ledger.controls(null), "domain");
    assertThat(ledger.controls("bad").any()).isFalse();
    assertThat(ledger.claimNext("bad", ME)).isPresent();
  }

  @Test
  void an_unknown_domain_has_no_controls() {
    DomainControls c = ledger.controls("never-filed");
    assertThat(c.any()).isFalse();
    assertThat(c.claimedNow()).isZero();
  }

  private static void assertField(Runnable call, String field) {
    assertThatThrownBy(call::run)
        .isInstanceOf(InvalidInputException.class)
        .satisfies(e -> assertThat(((InvalidInputException) e).field()).isEqualTo(field));
  }
}

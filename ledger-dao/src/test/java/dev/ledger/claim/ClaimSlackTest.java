package dev.ledger.claim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class ClaimSlackTest {

  @Test
  void starts_at_the_minimum_doubles_on_contention_and_steps_back_down_by_one() {
    ClaimSlack slack = new ClaimSlack();
    assertThat(slack.current()).isEqualTo(4);
    assertThat(ClaimSlack.window(1, slack.current())).isEqualTo(5);
    slack.record(true);
    assertThat(slack.current()).isEqualTo(8);
    slack.record(true);
    slack.record(true);
    slack.record(true);
    assertThat(slack.current()).isEqualTo(64);
    slack.record(true);
    assertThat(slack.current()).isEqualTo(64);
    slack.record(false);
    assertThat(slack.current()).isEqualTo(63);
    for (int i = 0; i < 100; i++) {
      slack.record(false);
    }
    assertThat(slack.current()).isEqualTo(4);
  }

  @Property
  void stays_within_its_bounds_and_follows_every_claim(
      @ForAll @Size(max = 300) List<Boolean> contended) {
    ClaimSlack slack = new ClaimSlack();
    for (boolean c : contended) {
      int before = slack.current();
      slack.record(c);
      int after = slack.current();
      assertThat(after).isBetween(ClaimSlack.MIN, ClaimSlack.MAX);
      assertThat(after)
          .isEqualTo(
              c ? Math.min(ClaimSlack.MAX, before * 2) : Math.max(ClaimSlack.MIN, before - 1));
    }
  }
}

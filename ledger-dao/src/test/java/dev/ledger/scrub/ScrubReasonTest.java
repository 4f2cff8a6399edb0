package dev.ledger.scrub;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Redaction;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The reason a scrub leaves on an invalidated task ({@link Scrub#redactReason}). */
class ScrubReasonTest {

  static final Redaction R = Redaction.ERASED;

  @Test
  void a_failed_attempt_keeps_its_header_and_loses_its_error() {
    assertThat(
            Scrub.redactReason(
                "attempt 1 of 3 failed at 2026-03-01T09:00:00.123456Z: smtp 550 <alice@example.com>",
                R))
        .isEqualTo("attempt 1 of 3 failed at 2026-03-01T09:00:00.123456Z: erased on request");
    assertThat(
            Scrub.redactReason(
                "dead letter: attempt 3 of 3 failed at 2026-03-01T09:00:00Z: line 1\nline 2", R))
        .isEqualTo("dead letter: attempt 3 of 3 failed at 2026-03-01T09:00:00Z: erased on request");
  }

  @Test
  void another_dead_letter_stays_a_dead_letter_and_any_other_reason_is_replaced() {
    assertThat(
            Scrub.redactReason(
                "dead letter: dependency t1 is a dead letter, so this task cannot run", R))
        .isEqualTo("dead letter: erased on request");
    assertThat(Scrub.redactReason("duplicate of alice@example.com", R))
        .isEqualTo("erased on request");
  }

  @Test
  void text_where_the_header_has_a_time_is_not_taken_for_a_header() {
    assertThat(Scrub.redactReason("attempt 1 of 2 failed at alice@example.com: x", R))
        .isEqualTo("erased on request");
    assertThat(Scrub.redactReason("attempt 1 of 2 failed at 2026-03-01T09:00:00Z alice: x", R))
        .isEqualTo("erased on request");
  }

  @Test
  void a_redacted_reason_is_redacted_to_itself() {
    for (Redaction redaction : List.of(R, new Redaction("[x]", "", "dead letter: gone"))) {
      for (String reason :
          List.of(
              "attempt 1 of 3 failed at 2026-03-01T09:00:00Z: boom",
              "dead letter: attempt 3 of 3 failed at 2026-03-01T09:00:00Z: boom",
              "dead letter: dependency t1 is a dead letter",
              "obsolete",
              redaction.reason())) {
        String once = Scrub.redactReason(reason, redaction);
        assertThat(Scrub.redactReason(once, redaction)).as(reason).isEqualTo(once);
      }
    }
  }
}

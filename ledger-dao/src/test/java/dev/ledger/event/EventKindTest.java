package dev.ledger.event;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class EventKindTest {

  @Test
  void every_kind_is_found_by_its_wire_name_and_only_by_it() {
    for (EventKind k : EventKind.values()) {
      assertThat(EventKind.find(k.wire())).contains(k);
      assertThat(EventKind.find(k.wire().toUpperCase(java.util.Locale.ROOT))).isEmpty();
    }
    assertThat(EventKind.find("unknown")).isEmpty();
    assertThat(EventKind.find(null)).isEmpty();
  }

  @Test
  void wire_names_are_the_reference_stacks() {
    assertThat(Arrays.stream(EventKind.values()).map(EventKind::wire))
        .containsExactly(
            "created",
            "admitted",
            "claimed",
            "heartbeat",
            "handoff_left",
            "released",
            "completed",
            "invalidated",
            "posted",
            "rescored",
            "promoted");
  }

  @Test
  void every_payload_record_names_its_own_kind() {
    assertThat(new Event.Admitted().kind()).isEqualTo(EventKind.ADMITTED);
    assertThat(new Event.Released().kind()).isEqualTo(EventKind.RELEASED);
    assertThat(new Event.Completed(null).kind()).isEqualTo(EventKind.COMPLETED);
    assertThat(new Event.HandoffLeft("h").kind()).isEqualTo(EventKind.HANDOFF_LEFT);
    assertThat(new Event.Posted("p").kind()).isEqualTo(EventKind.POSTED);
    assertThat(new Event.Rescored(1, "w").kind()).isEqualTo(EventKind.RESCORED);
    assertThat(new Event.Invalidated("r", null).kind()).isEqualTo(EventKind.INVALIDATED);
  }
}

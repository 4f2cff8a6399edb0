package dev.ledger.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Durations written as operators write them, and library messages rewritten into those words. */
class DurationsTest {

  @Test
  void format_writes_the_largest_units_first() {
    assertThat(Durations.format(Duration.ofDays(7))).isEqualTo("7d");
    assertThat(Durations.format(Duration.ofMinutes(90))).isEqualTo("1h30m");
    assertThat(Durations.format(Duration.ofMillis(100))).isEqualTo("100ms");
    assertThat(Durations.format(Duration.ofMillis(1500))).isEqualTo("1s500ms");
    assertThat(Durations.format(Duration.ofHours(24))).isEqualTo("24h");
    assertThat(Durations.format(Duration.ofHours(36))).isEqualTo("36h");
    assertThat(Durations.format(Duration.ofSeconds(604_800 + 61))).isEqualTo("168h1m1s");
    assertThat(Durations.format(Duration.ZERO)).isEqualTo("0s");
    assertThat(Durations.format(Duration.ofNanos(100))).isEqualTo("PT0.0000001S");
    for (String s : new String[] {"7d", "2h", "36h", "5m", "30s", "500ms"}) {
      assertThat(Durations.format(Durations.parse(s))).isEqualTo(s);
    }
  }

  @Test
  void humanize_rewrites_iso_durations_and_spaced_units() {
    assertThat(OptionNames.humanize("must be PT0.1S to PT24H, was PT0.01S"))
        .isEqualTo("must be 100ms to 24h, was 10ms");
    assertThat(OptionNames.humanize("must be at least 300 ms, was PT1H30M"))
        .isEqualTo("must be at least 300ms, was 1h30m");
    assertThat(OptionNames.humanize("must be 10 ms to 1 h")).isEqualTo("must be 10ms to 1h");
    assertThat(OptionNames.humanize("must be 1 to 1000, was 0"))
        .isEqualTo("must be 1 to 1000, was 0");
    assertThat(OptionNames.humanize("PTX stays")).isEqualTo("PTX stays");
  }
}

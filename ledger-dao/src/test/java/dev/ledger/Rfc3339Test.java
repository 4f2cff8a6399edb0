package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.codegen.convert.Rfc3339;
import java.time.Instant;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Times in the canonical form are read digit by digit, other RFC 3339 forms by the regular
 * expression: both read the same instant, and a canonical-looking text that names no valid time is
 * refused with the same message as before.
 */
class Rfc3339Test {

  @Property(tries = 2000)
  void every_canonical_time_reads_back_as_the_instant_it_was_written_from(
      @ForAll @LongRange(min = -62_167_219_200_000_000L, max = 253_402_300_799_999_999L)
          long micros) {
    Instant t =
        Instant.ofEpochSecond(
            Math.floorDiv(micros, 1_000_000), Math.floorMod(micros, 1_000_000) * 1000L);
    String text = Rfc3339.format(t);
    assertThat(Rfc3339.parse(text)).isEqualTo(t);
    // the same instant in another width, read by the expression
    assertThat(Rfc3339.parse(text.replace('T', ' ').replace("Z", "+00:00"))).isEqualTo(t);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "2024-02-29T23:59:59.999999Z|2024-02-29T23:59:59.999999Z",
        "0000-01-01T00:00:00.000000Z|0000-01-01T00:00:00Z",
        "9999-12-31T23:59:59.999999Z|9999-12-31T23:59:59.999999Z",
        "2026-11-29t23:35:59.123456z|2026-11-29T23:35:59.123456Z",
        "2026-11-29T23:35:59.1234567Z|2026-11-29T23:35:59.123456Z",
        "2026-11-30T01:35:59.123456+02:00|2026-11-29T23:35:59.123456Z",
      })
  void other_widths_and_cases_read_as_before(String text, String instant) {
    assertThat(Rfc3339.parse(text)).isEqualTo(Instant.parse(instant));
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "2025-02-29T00:00:00.000000Z|not a valid date-time",
        "2025-04-31T00:00:00.000000Z|not a valid date-time",
        "2025-13-01T00:00:00.000000Z|not a valid date-time",
        "2025-00-01T00:00:00.000000Z|not a valid date-time",
        "2025-01-00T00:00:00.000000Z|not a valid date-time",
        "2025-01-01T24:00:00.000000Z|not a valid date-time",
        "2025-01-01T23:60:00.000000Z|not a valid date-time",
        "2025-01-01T23:59:60.000000Z|leap seconds are not supported",
        "2025-01-01T23:59:59.00000aZ|not an RFC 3339 date-time",
        "2025-01-01T23:59:59.-00000Z|not an RFC 3339 date-time",
        "２025-01-01T23:59:59.000000Z|not an RFC 3339 date-time",
        "2025-01-01T23:59:59.000000X|not an RFC 3339 date-time",
      })
  void a_canonical_looking_text_that_names_no_time_is_refused(String text, String message) {
    assertThatThrownBy(() -> Rfc3339.parse(text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(message);
  }
}

package dev.ledger.app;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * Text output never hands a terminal a character that moves, reorders or breaks what follows, and a
 * cut to a column never splits an escape in half.
 */
class OutputEscapeTest {

  @Test
  void unicode_line_breaks_are_flattened_and_direction_marks_escaped() {
    assertThat(Output.fit("a\u2028b\u2029c", 80)).isEqualTo("a b c");
    assertThat(Output.fit("x\u200fy\u200ez\u061c", 80)).isEqualTo("x\\u200fy\\u200ez\\u061c");
    assertThat(Output.escape("\u2028")).isEqualTo("\\u2028");
  }

  @Test
  void a_cut_keeps_escapes_whole() {
    // "DEL" then U+007F: a cut at 6 columns must not leave "\x7" behind
    assertThat(Output.fit("DEL\u007fmore text", 6)).isEqualTo("DEL…");
    assertThat(Output.fit("DEL\u007fmore text", 8)).isEqualTo("DEL\\x7f…");
  }

  @Property
  void a_fitted_text_never_ends_in_a_split_escape_and_fits(
      @ForAll String anyText, @ForAll @IntRange(min = 2, max = 40) int width) {
    // a backslash of the text's own stays as it is; without one, any "\\x" or "\\u" is an escape
    String text = anyText.replace('\\', '/');
    String fitted = Output.fit(text, width);
    assertThat(Output.width(fitted)).isLessThanOrEqualTo(Math.max(width, 1));
    String body = fitted.endsWith("…") ? fitted.substring(0, fitted.length() - 1) : fitted;
    assertThat(body)
        .doesNotMatch("(?s).*\\\\x[0-9a-f]?$")
        .doesNotMatch("(?s).*\\\\u[0-9a-f]{0,3}$");
    assertThat(fitted.chars().noneMatch(c -> c == '\n' || c == 0x1b || c == 0x2028)).isTrue();
  }
}

package dev.ledger.codegen.convert;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

class StringListConverterTest {

  private final StringListConverter converter = new StringListConverter();

  @Property
  void every_list_of_strings_round_trips(@ForAll List<String> values) {
    String stored = converter.to(values);
    assertThat(converter.from(stored)).containsExactlyElementsOf(values);
  }

  @Test
  void the_empty_list_is_stored_as_the_reference_writes_it() {
    assertThat(converter.to(List.of())).isEqualTo("[]");
    assertThat(converter.from("[]")).isEmpty();
    assertThat(converter.from(" [ ] ")).isEmpty();
    assertThat(converter.to(List.of("a", "b"))).isEqualTo("[\"a\",\"b\"]");
    assertThat(converter.from(null)).isNull();
    assertThat(converter.to(null)).isNull();
  }

  @Test
  void text_that_is_not_an_array_of_strings_is_refused() {
    assertThatThrownBy(() -> converter.from("{\"a\":1}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("not a JSON array of strings");
    assertThatThrownBy(() -> converter.from("[null]")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> converter.from("[\"a\"")).isInstanceOf(IllegalArgumentException.class);
  }
}

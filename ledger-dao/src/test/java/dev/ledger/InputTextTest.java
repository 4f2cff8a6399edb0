package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.PostgresExtension;
import java.text.Normalizer;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Text input rules a newcomer trips over: whitespace-only titles and domains are refused with
 * nothing written; statuses parse in any case; domains are exact strings (no Unicode normalisation,
 * as the reference stack has them).
 */
class InputTextTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static Ledger ledger;

  @BeforeAll
  static void open() {
    ledger = Ledger.open(PG.dataSource());
  }

  @Test
  void a_whitespace_only_title_is_refused_naming_the_field_and_nothing_is_written() {
    assertThatThrownBy(() -> ledger.file(TaskSpec.builder("blank", " \t\n ").build()))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("title: must not be only whitespace or invisible characters");
    assertThat(ledger.domains()).doesNotContain("blank");
  }

  @Test
  void a_whitespace_only_domain_is_refused_naming_the_field_and_nothing_is_written() {
    assertThatThrownBy(() -> ledger.file(TaskSpec.builder("   ", "Title").build()))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("domain: must not be only whitespace or invisible characters");
    assertThatThrownBy(() -> ledger.provision("\u2003"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("domain: must not be only whitespace or invisible characters");
    assertThat(ledger.domains()).doesNotContain("   ", "\u2003");
  }

  @Test
  void a_title_of_invisible_characters_is_refused_and_one_with_a_word_among_them_is_kept() {
    for (String invisible : List.of("\u200B", "\u00A0\u00A0", "\u200B \uFEFF", "\u2060\t")) {
      assertThatThrownBy(() -> ledger.file(TaskSpec.builder("invisible", invisible).build()))
          .as(invisible.codePoints().mapToObj(Integer::toHexString).toList().toString())
          .isInstanceOf(InvalidInputException.class)
          .hasMessage("title: must not be only whitespace or invisible characters");
    }
    assertThat(ledger.domains()).doesNotContain("invisible");
    String id = ledger.file(TaskSpec.builder("invisible", "\u200Bword\u00A0").build());
    assertThat(ledger.get(id).spec().title()).isEqualTo("\u200Bword\u00A0");
  }

  @Test
  void an_unpaired_surrogate_is_refused_naming_the_field_and_a_paired_one_is_kept() {
    assertThatThrownBy(() -> ledger.file(TaskSpec.builder("surrogates", "a\uD800b").build()))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("title: is not valid Unicode: an unpaired surrogate U+D800 at index 1");
    assertThatThrownBy(
            () -> ledger.file(TaskSpec.builder("surrogates", "ok").body("tail \uDC00").build()))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("body: is not valid Unicode: an unpaired surrogate U+DC00 at index 5");
    assertThatThrownBy(() -> ledger.file(TaskSpec.builder("surrogates", "end \uD83D").build()))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("title: is not valid Unicode: an unpaired surrogate U+D83D at index 4");
    assertThat(ledger.domains()).doesNotContain("surrogates");
    String id = ledger.file(TaskSpec.builder("surrogates", "emoji \uD83D\uDE00").build());
    assertThat(ledger.get(id).spec().title()).isEqualTo("emoji \uD83D\uDE00");
  }

  @Test
  void a_null_lease_duration_says_so() {
    ledger.fileAndAdmit(TaskSpec.builder("null-lease", "t").build());
    assertThatThrownBy(() -> ledger.claimNext("null-lease", "w", null, List.of(), Label.PUBLIC))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("lease: must not be null");
  }

  @Test
  void whitespace_only_names_are_refused_but_text_around_words_is_kept() {
    assertThatThrownBy(
            () -> ledger.file(TaskSpec.builder("names", "T").requirements(List.of(" ")).build()))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("requirements: must not be only whitespace or invisible characters");
    String id = ledger.file(TaskSpec.builder("names", "  padded  ").build());
    assertThat(ledger.get(id).spec().title()).isEqualTo("  padded  ");
  }

  @Test
  void status_parses_in_any_case_as_labels_do() {
    assertThat(Status.parse("COMPLETED")).isEqualTo(Status.COMPLETED);
    assertThat(Status.parse("Admitted")).isEqualTo(Status.ADMITTED);
    assertThat(Label.parse("Internal")).isEqualTo(Label.INTERNAL);
    assertThatThrownBy(() -> Status.parse("done"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageStartingWith("status: unknown status 'done'");
  }

  @Test
  void an_nfd_domain_is_another_domain_than_its_nfc_form_as_documented() {
    String nfc = Normalizer.normalize("café", Normalizer.Form.NFC);
    String nfd = Normalizer.normalize("café", Normalizer.Form.NFD);
    assertThat(nfc).isNotEqualTo(nfd);
    assertThat(DomainSchemas.schemaName(nfc)).isNotEqualTo(DomainSchemas.schemaName(nfd));
    String a = ledger.file(TaskSpec.builder(nfc, "composed").build());
    String b = ledger.file(TaskSpec.builder(nfd, "decomposed").build());
    assertThat(ledger.get(a).spec().domain()).isEqualTo(nfc);
    assertThat(ledger.get(b).spec().domain()).isEqualTo(nfd);
    assertThat(ledger.list(nfc, Status.PROPOSED)).extracting(Task::id).containsExactly(a);
    assertThat(ledger.list(nfd, Status.PROPOSED)).extracting(Task::id).containsExactly(b);
  }

  @Test
  void a_null_requirement_or_dependency_is_refused_naming_the_field_and_its_index() {
    java.util.ArrayList<String> requirements = new java.util.ArrayList<>(List.of("sql"));
    requirements.add(null);
    assertThatThrownBy(() -> TaskSpec.builder("nulls", "Title").requirements(requirements).build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("requirements: item 1 is null");
    java.util.ArrayList<String> dependencies = new java.util.ArrayList<>();
    dependencies.add(null);
    assertThatThrownBy(() -> TaskSpec.builder("nulls", "Title").dependsOn(dependencies).build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("depends_on: item 0 is null");
    assertThat(ledger.domains()).doesNotContain("nulls");
  }

  @Test
  void a_task_cannot_be_invalidated_as_superseded_by_itself_and_stays_open() {
    String id = ledger.fileAndAdmit(TaskSpec.builder("selfish", "Title").build());
    assertThatThrownBy(() -> ledger.invalidate(id, "replaced", id))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage(
            "superseded_by: is the task being invalidated ('"
                + id
                + "'): a task cannot replace itself");
    assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
  }

  @Test
  void listing_a_null_status_is_refused_naming_the_field() {
    assertThatThrownBy(() -> ledger.list("any", null))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage(
            "status: must not be null (list one status at a time; countByStatus counts them all)");
  }
}

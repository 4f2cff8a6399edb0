package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The acceptance suite's cases ({@link AcceptanceCases}, split over several files by what they
 * cover): none lost or added unseen when the files are changed, every name unique. Fast: it runs no
 * case ({@link SchemaDiffAcceptanceTest} does, tagged slow).
 */
class AcceptanceCasesTest {

  /** The suite's size: change it only with the cases, and the figures in docs/schema-diff.md. */
  static final int CASES = 559;

  @Test
  void the_suite_holds_every_case_once() {
    List<AcceptanceCases.Case> all = AcceptanceCases.all();
    assertThat(all).hasSize(CASES);
    assertThat(all.stream().map(AcceptanceCases.Case::name).distinct().count())
        .isEqualTo(all.size());
    assertThat(all.stream().filter(c -> c.refused() != null).count()).isEqualTo(11);
  }
}

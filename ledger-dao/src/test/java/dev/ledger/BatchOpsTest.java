package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.testing.PostgresExtension;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The batch operations worker pools use: {@link Ledger#fileAll} and {@link Ledger#completeAll}. */
class BatchOpsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private Ledger ledger;

  @BeforeEach
  void open() {
    ledger = Ledger.open(PG.dataSource());
  }

  @Test
  void file_all_writes_what_file_and_admit_write_and_is_idempotent_on_origin() {
    String single = ledger.file(TaskSpec.builder("batch", "one").origin("o", "e0").build());
    ledger.admit(single);
    List<String> ids =
        ledger.fileAll(
            List.of(
                TaskSpec.builder("batch", "dup of one").origin("o", "e0").build(),
                TaskSpec.builder("batch", "two").origin("o", "e1").build(),
                TaskSpec.builder("batch", "two again").origin("o", "e1").build(),
                TaskSpec.builder("batch", "later")
                    .notBefore(Instant.now().plusSeconds(600))
                    .build(),
                TaskSpec.builder("batch", "plain").requirements(List.of("sql")).build()));
    assertThat(ids).hasSize(5);
    assertThat(ids.get(0)).isEqualTo(single);
    assertThat(ids.get(2)).isEqualTo(ids.get(1));
    assertThat(ledger.get(ids.get(1)).status()).isEqualTo(Status.ADMITTED);
    assertThat(ledger.get(ids.get(3)).status()).isEqualTo(Status.PROPOSED);
    assertThat(ledger.get(ids.get(4)).status()).isEqualTo(Status.ADMITTED);
    assertThat(ledger.history(ids.get(1)).stream().map(LoggedEvent::kind))
        .containsExactly("created", "admitted");
    assertThat(ledger.history(ids.get(3)).stream().map(LoggedEvent::kind))
        .containsExactly("created");
    assertThat(ledger.history(ids.get(1)).get(1).payload())
        .isEqualTo(ledger.history(single).get(1).payload());
    assertThat(
            ledger
                .claimBatch("batch", "w", Duration.ofMinutes(1), List.of("sql"), Label.PUBLIC, 10)
                .stream()
                .map(Lease::taskId))
        .containsExactlyInAnyOrder(single, ids.get(1), ids.get(4));
  }

  @Test
  void file_all_refuses_a_bad_spec_or_two_domains_and_writes_nothing() {
    long before = ledger.domains().contains("batch-bad") ? ledger.eventCount() : 0;
    assertThatThrownBy(
            () ->
                ledger.fileAll(
                    List.of(
                        TaskSpec.builder("batch-bad", "ok").build(),
                        TaskSpec.builder("batch-bad", "").build())))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("title");
    assertThatThrownBy(
            () ->
                ledger.fileAll(
                    List.of(
                        TaskSpec.builder("batch-bad", "a").build(),
                        TaskSpec.builder("batch-other", "b").build())))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("one domain");
    assertThat(ledger.domains()).doesNotContain("batch-bad", "batch-other");
    assertThat(before).isZero();
  }

  @Test
  void complete_all_completes_current_leases_and_returns_the_stale_ones() {
    List<String> ids =
        ledger.fileAll(
            List.of(
                TaskSpec.builder("complete-all", "a").build(),
                TaskSpec.builder("complete-all", "b").build(),
                TaskSpec.builder("complete-all", "c").build()));
    List<Lease> leases =
        ledger.claimBatch("complete-all", "w", Duration.ofMinutes(1), List.of(), Label.PUBLIC, 3);
    assertThat(leases).hasSize(3);
    ledger.release(leases.get(1));
    List<Lease> lost =
        ledger.completeAll(
            "complete-all",
            List.of(
                new Completion(leases.get(0), "done a"),
                new Completion(leases.get(1), "late"),
                new Completion(leases.get(2), null)));
    assertThat(lost).containsExactly(leases.get(1));
    Task a = ledger.get(leases.get(0).taskId());
    assertThat(a.status()).isEqualTo(Status.COMPLETED);
    assertThat(a.handoff()).isEqualTo("done a");
    assertThat(a.leaseUntil()).isNull();
    assertThat(ledger.get(leases.get(1).taskId()).status()).isEqualTo(Status.ADMITTED);
    assertThat(ledger.get(leases.get(2).taskId()).status()).isEqualTo(Status.COMPLETED);
    assertThat(ledger.history(leases.get(2).taskId()).stream().map(LoggedEvent::kind))
        .containsExactly("created", "admitted", "claimed", "completed");
    // the same payload complete() writes
    String c = ids.get(0);
    assertThat(ledger.history(leases.get(2).taskId()).get(3).payload())
        .isEqualTo("{\"handoff\":null}");
    assertThat(c).isNotNull();
  }
}

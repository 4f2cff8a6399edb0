package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.ledger.testing.PostgresExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link Claimer}: checked once, when made, with the messages the positional claim signatures gave
 * (and still give: they build a claimer); immutable; and a claim through it claims as the
 * deprecated signatures do.
 */
@SuppressWarnings("deprecation") // compares the claimer with the positional signatures
class ClaimerTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static Ledger ledger;

  @BeforeAll
  static void open() {
    ledger = Ledger.open(PG.dataSource());
  }

  /** One bad claimer: holder, lease, manifest, handling, and the message it must give. */
  static Stream<Arguments> badClaimers() {
    Duration ok = Duration.ofMinutes(1);
    return Stream.of(
        Arguments.of(null, ok, List.of(), Label.PUBLIC, "holder: must not be empty"),
        Arguments.of("", ok, List.of(), Label.PUBLIC, "holder: must not be empty"),
        Arguments.of(
            " \t",
            ok,
            List.of(),
            Label.PUBLIC,
            "holder: must not be only whitespace or invisible characters"),
        Arguments.of("w", null, List.of(), Label.PUBLIC, "lease: must not be null"),
        Arguments.of(
            "w", Duration.ZERO, List.of(), Label.PUBLIC, "lease: must be longer than zero"),
        Arguments.of(
            "w",
            Duration.ofSeconds(-5),
            List.of(),
            Label.PUBLIC,
            "lease: must be longer than zero"),
        Arguments.of(
            "w", Duration.ofDays(8), List.of(), Label.PUBLIC, "lease: must be at most 7 days"),
        Arguments.of("w", ok, null, Label.PUBLIC, "manifest: must not be null (use an empty list)"),
        Arguments.of("w", ok, List.of("sql", ""), Label.PUBLIC, "manifest: must not be empty"),
        Arguments.of(
            "w", ok, Arrays.asList("a", null), Label.PUBLIC, "manifest: must not be empty"),
        Arguments.of("w", ok, List.of(), null, "handling: must not be null"));
  }

  @ParameterizedTest
  @MethodSource("badClaimers")
  void a_bad_claimer_is_refused_when_made_with_the_message_of_the_positional_claims(
      String holder, Duration lease, Collection<String> manifest, Label handling, String message) {
    InvalidInputException made =
        catchThrowableOfType(
            () -> Claimer.of(holder).lease(lease).manifest(manifest).handling(handling),
            InvalidInputException.class);
    assertThat(made).hasMessage(message);
    assertThat(made.field()).isEqualTo(message.substring(0, message.indexOf(':')));
    // the deprecated signatures refuse it in the same words, before anything is read or written
    assertThat(
            catchThrowableOfType(
                () -> ledger.claimNext("claimer", holder, lease, manifest, handling),
                InvalidInputException.class))
        .hasMessage(message);
    assertThat(
            catchThrowableOfType(
                () -> ledger.claimBatch("claimer", holder, lease, manifest, handling, 3),
                InvalidInputException.class))
        .hasMessage(message);
    assertThat(
            catchThrowableOfType(
                () -> ledger.claimTasks("claimer", holder, lease, manifest, handling, 3),
                InvalidInputException.class))
        .hasMessage(message);
    assertThat(
            catchThrowableOfType(
                () -> ledger.claim("t-none", holder, lease, manifest, handling),
                InvalidInputException.class))
        .hasMessage(message);
  }

  @Test
  void the_domain_is_still_checked_before_the_claimer_in_the_positional_signatures() {
    assertThatThrownBy(() -> ledger.claimNext("", null, Duration.ZERO, List.of(), Label.PUBLIC))
        .isInstanceOf(InvalidInputException.class)
        .satisfies(e -> assertThat(((InvalidInputException) e).field()).isEqualTo("domain"));
    assertThatThrownBy(() -> ledger.claimNext("", Claimer.of("w")))
        .isInstanceOf(InvalidInputException.class)
        .satisfies(e -> assertThat(((InvalidInputException) e).field()).isEqualTo("domain"));
  }

  @Test
  void a_null_claimer_is_refused_naming_it() {
    for (Runnable call :
        List.<Runnable>of(
            () -> ledger.claimNext("claimer", null),
            () -> ledger.claimBatch("claimer", null, 1),
            () -> ledger.claim("t-none", null),
            () -> ledger.worker().claimTasks("claimer", null, 1))) {
      assertThatThrownBy(call::run)
          .isInstanceOf(InvalidInputException.class)
          .hasMessage("claimer: must not be null");
    }
  }

  @Test
  void a_claimer_is_immutable_and_has_defaults() {
    List<String> manifest = new ArrayList<>(List.of("sql"));
    Claimer base = Claimer.of("worker-1");
    Claimer full =
        base.lease(Duration.ofSeconds(40)).manifest(manifest).handling(Label.CONFIDENTIAL);
    manifest.add("java");

    assertThat(base.holder()).isEqualTo("worker-1");
    assertThat(base.lease()).isEqualTo(Claimer.DEFAULT_LEASE).isEqualTo(Duration.ofMinutes(5));
    assertThat(base.manifest()).isEmpty();
    assertThat(base.handling()).isEqualTo(Label.PUBLIC);
    assertThat(full.manifest()).containsExactly("sql");
    assertThatThrownBy(() -> full.manifest().add("x"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(full)
        .isEqualTo(
            Claimer.of("worker-1")
                .handling(Label.CONFIDENTIAL)
                .manifest(List.of("sql"))
                .lease(Duration.ofSeconds(40)))
        .hasSameHashCodeAs(
            Claimer.of("worker-1")
                .lease(Duration.ofSeconds(40))
                .manifest(List.of("sql"))
                .handling(Label.CONFIDENTIAL))
        .isNotEqualTo(base);
    assertThat(full)
        .hasToString(
            "Claimer[holder=worker-1, lease=PT40S, manifest=[sql], handling=confidential]");
  }

  @Test
  void a_claim_through_a_claimer_claims_as_the_positional_signatures_do() {
    String domain = "claimer-same";
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      ids.add(
          ledger.fileAndAdmit(
              TaskSpec.builder(domain, "task " + i)
                  .requirements(i % 2 == 0 ? List.of("sql") : List.of("gpu"))
                  .classification(i < 4 ? Label.INTERNAL : Label.RESTRICTED)
                  .priority(10 - i)
                  .build()));
    }
    Claimer sql =
        Claimer.of("w-new")
            .lease(Duration.ofMinutes(2))
            .manifest(List.of("sql"))
            .handling(Label.INTERNAL);

    // claimable by sql/internal: tasks 0 and 2, in priority order
    Optional<Lease> first = ledger.claimNext(domain, sql);
    assertThat(first).map(Lease::taskId).contains(ids.get(0));
    assertThat(first.get().holder()).isEqualTo("w-new");
    Optional<Lease> second =
        ledger.claimNext(domain, "w-old", Duration.ofMinutes(2), List.of("sql"), Label.INTERNAL);
    assertThat(second).map(Lease::taskId).contains(ids.get(2));
    assertThat(ledger.claimNext(domain, sql)).isEmpty();
    assertThat(
            ledger.claimBatch(
                domain, "w-old", Duration.ofMinutes(2), List.of("sql"), Label.INTERNAL, 5))
        .isEmpty();

    // batches: the gpu tasks 1 and 3 through the new form, none left for the old
    Claimer gpu = sql.manifest(List.of("gpu"));
    assertThat(ledger.claimBatch(domain, gpu, 5))
        .extracting(Lease::taskId)
        .containsExactly(ids.get(1), ids.get(3));
    assertThat(
            ledger.claimBatch(
                domain, "w-old", Duration.ofMinutes(2), List.of("gpu"), Label.INTERNAL, 5))
        .isEmpty();

    // by id: task 4 is restricted; refused alike, then claimed with the handling it needs
    WrongStateException newWay =
        catchThrowableOfType(() -> ledger.claim(ids.get(4), sql), WrongStateException.class);
    WrongStateException oldWay =
        catchThrowableOfType(
            () ->
                ledger.claim(
                    ids.get(4), "w-new", Duration.ofMinutes(2), List.of("sql"), Label.INTERNAL),
            WrongStateException.class);
    assertThat(newWay).isNotNull().hasMessage(oldWay.getMessage());
    Lease byId = ledger.claim(ids.get(4), sql.handling(Label.RESTRICTED));
    assertThat(byId.taskId()).isEqualTo(ids.get(4));
    assertThat(ledger.get(ids.get(4)).holder()).isEqualTo("w-new");
    Lease byIdOld =
        ledger.claim(ids.get(5), "w-old", Duration.ofMinutes(2), List.of("gpu"), Label.RESTRICTED);
    assertThat(byIdOld.attempt()).isEqualTo(byId.attempt()).isEqualTo(1);
  }
}

package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.ReferenceStack;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The reference stack and this ledger live on one database (issue 13 items 5 and 6): what the
 * reference files, completes or replays with its own SQL ({@link ReferenceStack}) is seen by our
 * claims, and a domain the reference made first is served. After every scenario our replay changes
 * no row: the derived state the database kept is the state a replay derives.
 */
class ReferenceSharingTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final Duration LEASE = Duration.ofMinutes(5);
  private static final String AT = "2026-12-01T10:00:00.000000Z";
  private static final String LATER = "2026-12-01T10:00:01.000000Z";
  private static final String FAR = "2099-01-01T00:00:00.000000Z";

  @Test
  void a_task_the_reference_filed_needing_a_new_requirement_is_claimed_by_claim_next()
      throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    ledger.file(TaskSpec.builder("gpu", "ours, no requirement").build());
    try (ReferenceStack ref = new ReferenceStack(PG.databaseName())) {
      ref.file("gpu", "t-ref-gpu", "needs a gpu", List.of("gpu"), List.of(), 5, AT);
      ref.append("t-ref-gpu", "admitted", AT, "{}");
    }

    Optional<Lease> lease = ledger.claimNext("gpu", "w", LEASE, List.of("gpu"), Label.PUBLIC);

    assertThat(lease).map(Lease::taskId).contains("t-ref-gpu");
    assertReplayChangesNothing(ledger, "gpu");
  }

  /**
   * Domain V12: one {@code INSERT} of many rows (an operator's SQL, or any writer filing set-wise)
   * adds every claim class of its rows once, sets {@code blocked} from the dependencies, and clears
   * a {@code blocked} written on a row that has none.
   */
  @Test
  void one_insert_of_many_rows_adds_their_claim_classes_and_flags() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    String dep = ledger.file(TaskSpec.builder("ops", "an open dependency").build());
    String s = quoted("ops");
    try (Connection c = PostgresExtension.connect(PG.databaseName())) {
      c.createStatement()
          .execute(
              "INSERT INTO "
                  + s
                  + ".tasks (id, domain, title, body, requirements, depends_on, created_by,"
                  + " label_rank, priority, created, status, blocked) VALUES"
                  + " ('t-a', 'ops', 'a', '', '[\"gpu\"]', '[]', 'op', 0, 0, '"
                  + AT
                  + "', 'admitted', false),"
                  + " ('t-b', 'ops', 'b', '', '[\"gpu\",\"ssd\"]', '[]', 'op', 2, 0, '"
                  + AT
                  + "', 'admitted', false),"
                  + " ('t-c', 'ops', 'c', '', '[]', '[\""
                  + dep
                  + "\"]', 'op', 0, 0, '"
                  + AT
                  + "', 'admitted', false),"
                  + " ('t-d', 'ops', 'd', '', '[\"gpu\"]', '[]', 'op', 0, 0, '"
                  + AT
                  + "', 'admitted', true)");
      c.createStatement()
          .execute(
              "INSERT INTO public.ledger_tasks (id, domain) VALUES ('t-a', 'ops'), ('t-b', 'ops'),"
                  + " ('t-c', 'ops'), ('t-d', 'ops')");
      assertThat(
              Fixtures.rows(
                  c,
                  "SELECT label_rank, requirements, requirements_md5 = md5(requirements) FROM "
                      + s
                      + ".claim_classes ORDER BY 1, 2"))
          .containsExactly(
              List.of("0", "[\"gpu\"]", "t"),
              List.of("0", "[]", "t"),
              List.of("2", "[\"gpu\",\"ssd\"]", "t"));
      assertThat(Fixtures.rows(c, "SELECT id, blocked FROM " + s + ".tasks"))
          .containsExactlyInAnyOrder(
              List.of(dep, "f"),
              List.of("t-a", "f"),
              List.of("t-b", "f"),
              List.of("t-c", "t"),
              List.of("t-d", "f"));
      assertThat(
              Fixtures.rows(
                  c, "SELECT depends_on, task_id FROM public.ledger_dependencies ORDER BY 1, 2"))
          .containsExactly(List.of(dep, "t-c"));
    }
    // every class is found by the claim's walk; the blocked one waits (and the dependency, filed
    // and not admitted, is not claimable)
    List<Lease> leases =
        ledger.claimBatch(
            "ops",
            Claimer.of("w")
                .lease(LEASE)
                .manifest(List.of("gpu", "ssd"))
                .handling(Label.CONFIDENTIAL),
            10);
    assertThat(leases).map(Lease::taskId).containsExactlyInAnyOrder("t-a", "t-b", "t-d");
  }

  @Test
  void a_dependency_the_reference_completed_makes_our_dependent_claimable() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    String dep = ledger.file(TaskSpec.builder("dep-ref", "the dependency").build());
    ledger.admit(dep);
    String dependent =
        ledger.file(TaskSpec.builder("dep-ours", "waits").dependsOn(List.of(dep)).build());
    ledger.admit(dependent);
    assertThat(ledger.claimNext("dep-ours", "w", LEASE, List.of(), Label.PUBLIC)).isEmpty();

    try (ReferenceStack ref = new ReferenceStack(PG.databaseName())) {
      ref.append(dep, "claimed", AT, "{\"holder\":\"ref-worker\",\"until\":\"" + FAR + "\"}");
      ref.append(dep, "completed", LATER, "{\"handoff\":\"done by the reference\"}");
    }

    assertThat(ledger.claimNext("dep-ours", "w", LEASE, List.of(), Label.PUBLIC))
        .map(Lease::taskId)
        .contains(dependent);
    assertReplayChangesNothing(ledger, "dep-ref", "dep-ours");
  }

  @Test
  void after_a_reference_replay_our_dependents_of_completed_tasks_stay_claimable()
      throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    String dep = ledger.file(TaskSpec.builder("replayed", "the dependency").build());
    ledger.admit(dep);
    Lease l = ledger.claim(dep, "w", LEASE, List.of(), Label.PUBLIC);
    ledger.complete(l, "done");
    String sameDomain =
        ledger.file(TaskSpec.builder("replayed", "waits here").dependsOn(List.of(dep)).build());
    ledger.admit(sameDomain);
    String otherDomain =
        ledger.file(
            TaskSpec.builder("replayed-other", "waits there").dependsOn(List.of(dep)).build());
    ledger.admit(otherDomain);

    try (ReferenceStack ref = new ReferenceStack(PG.databaseName())) {
      assertThat(ref.rebuild()).isEqualTo(ledger.eventCount());
    }

    assertThat(ledger.claimNext("replayed", "w", LEASE, List.of(), Label.PUBLIC))
        .map(Lease::taskId)
        .contains(sameDomain);
    assertThat(ledger.claimNext("replayed-other", "w", LEASE, List.of(), Label.PUBLIC))
        .map(Lease::taskId)
        .contains(otherDomain);
    assertReplayChangesNothing(ledger, "replayed", "replayed-other");
  }

  @Test
  void a_task_the_reference_filed_on_an_open_dependency_is_blocked_until_it_completes()
      throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    String dep = ledger.file(TaskSpec.builder("blocked", "the dependency").priority(1).build());
    ledger.admit(dep);
    try (ReferenceStack ref = new ReferenceStack(PG.databaseName())) {
      ref.file("blocked", "t-ref-waits", "waits", List.of(), List.of(dep), 9, AT);
      ref.append("t-ref-waits", "admitted", AT, "{}");
    }
    assertThat(blocked("blocked", "t-ref-waits")).isTrue();
    assertReplayChangesNothing(ledger, "blocked");

    Lease first = ledger.claimNext("blocked", "w", LEASE, List.of(), Label.PUBLIC).orElseThrow();
    assertThat(first.taskId()).isEqualTo(dep);
    ledger.complete(first, null);

    assertThat(blocked("blocked", "t-ref-waits")).isFalse();
    assertThat(ledger.claimNext("blocked", "w", LEASE, List.of(), Label.PUBLIC))
        .map(Lease::taskId)
        .contains("t-ref-waits");
    assertReplayChangesNothing(ledger, "blocked");
  }

  @Test
  void a_domain_the_reference_made_first_is_served_and_adopted_at_run_time() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    ledger.file(TaskSpec.builder("ours-first", "ours").build());
    try (ReferenceStack ref = new ReferenceStack(PG.databaseName())) {
      ref.file("ref-first", "t-ref-first", "filed by the reference", List.of(), List.of(), 3, AT);
      ref.append("t-ref-first", "admitted", AT, "{}");
    }

    assertThat(ledger.get("t-ref-first").spec().title()).isEqualTo("filed by the reference");
    String ours = ledger.file(TaskSpec.builder("ref-first", "filed by us").build());
    assertThat(
            ledger.recordPromotion(
                new PromotionSpec(
                    "ref-first", "e", "reviewed", "dan", "erin", "why", Label.PUBLIC, "d1", "")))
        .isTrue();
    long events = ledger.eventCount();
    assertThat(events).isEqualTo(2 + 1 + 1 + eventsOutside(ledger, "ref-first"));
    assertThat(ledger.describeDomains())
        .filteredOn(d -> d.domain().equals("ref-first"))
        .singleElement()
        .satisfies(
            d -> {
              assertThat(d.version()).isEqualTo(dev.ledger.schema.LedgerMigrations.DOMAIN_VERSION);
              assertThat(d.tasks().get(Status.ADMITTED)).isEqualTo(1L);
              assertThat(d.tasks().get(Status.PROPOSED)).isEqualTo(1L);
            });
    assertThat(ledger.claimNext("ref-first", "w", LEASE, List.of(), Label.PUBLIC))
        .map(Lease::taskId)
        .contains("t-ref-first");
    assertThat(ledger.get(ours).status()).isEqualTo(Status.PROPOSED);
    assertReplayChangesNothing(ledger, "ref-first");
    assertThat(ledger.eventCount()).isEqualTo(events + 1);
  }

  // ---------------------------------------------------------------------------------------------

  private static long eventsOutside(Ledger ledger, String domain) throws SQLException {
    long n = 0;
    try (Connection c = PostgresExtension.connect(PG.databaseName())) {
      for (String d : ledger.domains()) {
        if (!d.equals(domain)) {
          n += Fixtures.count(c, "SELECT count(*) FROM " + quoted(d) + ".events");
        }
      }
    }
    return n;
  }

  private static boolean blocked(String domain, String id) throws SQLException {
    try (Connection c = PostgresExtension.connect(PG.databaseName())) {
      return Fixtures.count(
              c,
              "SELECT count(*) FROM "
                  + quoted(domain)
                  + ".tasks WHERE blocked AND id = '"
                  + id
                  + "'")
          == 1;
    }
  }

  /** Our replay leaves every row of these domains' projection and derived state as it was. */
  private static void assertReplayChangesNothing(Ledger ledger, String... domains)
      throws SQLException {
    List<List<String>> before = state(domains);
    ledger.rebuild();
    assertThat(state(domains)).isEqualTo(before);
  }

  private static List<List<String>> state(String... domains) throws SQLException {
    List<List<String>> out = new ArrayList<>();
    try (Connection c = PostgresExtension.connect(PG.databaseName())) {
      for (String d : domains) {
        String s = quoted(d);
        out.addAll(Fixtures.rows(c, "SELECT * FROM " + s + ".tasks ORDER BY id"));
        out.addAll(Fixtures.rows(c, "SELECT * FROM " + s + ".claim_classes ORDER BY 1, 2"));
        out.addAll(
            Fixtures.rows(
                c, "SELECT * FROM public.ledger_tasks WHERE domain = '" + d + "' ORDER BY id"));
        out.addAll(
            Fixtures.rows(
                c,
                "SELECT e.* FROM public.ledger_dependencies e JOIN public.ledger_tasks r"
                    + " ON r.id = e.task_id WHERE r.domain = '"
                    + d
                    + "' ORDER BY 1, 2"));
      }
    }
    return out;
  }

  private static String quoted(String domain) {
    return "\"" + DomainSchemas.schemaName(domain) + "\"";
  }
}

package dev.ledger.retention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.Claimer;
import dev.ledger.InvalidInputException;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.Redaction;
import dev.ledger.TaskSpec;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.ReferenceStack;
import dev.ledger.testing.SettableClock;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Retention on PostgreSQL: exactly the old terminal tasks nothing open needs are removed, with
 * their events, routes and edges; replay equals the live projection after; bad input is refused
 * naming the field.
 */
class RetentionTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final Duration LEASE = Duration.ofMinutes(5);

  @Test
  void purge_removes_exactly_the_old_terminal_tasks_that_nothing_open_needs() throws Exception {
    SettableClock clock = new SettableClock(Instant.parse("2026-03-01T09:00:00Z"));
    Ledger ledger = Ledger.open(PG.dataSource(), LedgerConfig.builder().clock(clock).build());
    String d = "keep";
    List<String> gone = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      gone.add(completed(ledger, d, "done " + i, b -> b.requirements(List.of("only-old"))));
    }
    for (int i = 0; i < 2; i++) {
      String inv = ledger.file(TaskSpec.builder(d, "withdrawn " + i).build());
      ledger.invalidate(inv, "not needed", null);
      gone.add(inv);
    }
    // a terminal dependent of a terminal task: both go, dependency and all
    String base = completed(ledger, d, "base", b -> b);
    gone.add(base);
    gone.add(completed(ledger, d, "after base", b -> b.dependsOn(List.of(base))));

    List<String> kept = new ArrayList<>();
    String dep = completed(ledger, d, "an open task depends on me", b -> b);
    kept.add(dep);
    String waiting = ledger.file(TaskSpec.builder(d, "waits").dependsOn(List.of(dep)).build());
    ledger.admit(waiting);
    String crossDep = completed(ledger, d, "another domain depends on me", b -> b);
    kept.add(crossDep);
    ledger.file(TaskSpec.builder("elsewhere", "waits too").dependsOn(List.of(crossDep)).build());
    String continued = completed(ledger, d, "continued", b -> b);
    kept.add(continued);
    ledger.file(TaskSpec.builder(d, "continuation").origin("continues:" + continued, "c").build());
    String parent = completed(ledger, d, "parent", b -> b);
    kept.add(parent);
    ledger.file(TaskSpec.builder(d, "child").origin("task:" + parent, "c").build());
    String root = ledger.file(TaskSpec.builder(d, "retried").maxAttempts(3).build());
    ledger.admit(root);
    ledger.worker().fail(claim(ledger, root), "boom", 3, Duration.ZERO);
    kept.add(root);
    String superseded = ledger.file(TaskSpec.builder(d, "superseded").build());
    String successor = ledger.file(TaskSpec.builder(d, "successor").build());
    ledger.invalidate(superseded, "replaced", successor);
    kept.add(superseded);

    clock.advance(Duration.ofHours(2));
    String young = completed(ledger, d, "young", b -> b);
    kept.add(young);
    long openBefore =
        count(
            "SELECT count(*) FROM "
                + schema(d)
                + ".tasks WHERE status NOT IN"
                + " ('completed', 'invalidated')");
    long eventsOfGone =
        count(
            "SELECT count(*) FROM "
                + schema(d)
                + ".events WHERE task_id IN ("
                + quotedList(gone)
                + ")");
    long maxSeqOfGone =
        count(
            "SELECT max(seq) FROM "
                + schema(d)
                + ".events WHERE task_id IN ("
                + quotedList(gone)
                + ")");
    long tasksBefore = count("SELECT count(*) FROM " + schema(d) + ".tasks");

    ledger.retention().set(d, Duration.ofHours(1));
    List<PurgeReport.DomainPurge> seen = new ArrayList<>();
    PurgeReport report = ledger.retention().purge(d, 3, seen::add);

    assertThat(report.tasksRemoved()).isEqualTo(gone.size());
    assertThat(report.eventsRemoved()).isEqualTo(eventsOfGone);
    assertThat(report.domains())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.removedThroughSeq()).isEqualTo(maxSeqOfGone);
              assertThat(p.claimClassesRemoved()).isEqualTo(1);
              assertThat(p.busy()).isFalse();
            });
    assertThat(seen).hasSize((int) report.batches());
    assertThat(report.batches()).isEqualTo((tasksBefore + 2) / 3);
    assertThat(count("SELECT count(*) FROM " + schema(d) + ".tasks"))
        .isEqualTo(tasksBefore - gone.size());
    for (String table : List.of(".tasks WHERE id", ".events WHERE task_id")) {
      assertThat(
              count("SELECT count(*) FROM " + schema(d) + table + " IN (" + quotedList(gone) + ")"))
          .isZero();
      assertThat(
              count("SELECT count(*) FROM " + schema(d) + table + " IN (" + quotedList(kept) + ")"))
          .isGreaterThanOrEqualTo(kept.size());
    }
    assertThat(
            count(
                "SELECT count(*) FROM public.ledger_tasks WHERE id IN (" + quotedList(gone) + ")"))
        .isZero();
    assertThat(
            count(
                "SELECT count(*) FROM public.ledger_dependencies WHERE task_id IN ("
                    + quotedList(gone)
                    + ") OR depends_on IN ("
                    + quotedList(gone)
                    + ")"))
        .isZero();
    assertThat(
            count(
                "SELECT count(*) FROM "
                    + schema(d)
                    + ".tasks WHERE status NOT IN"
                    + " ('completed', 'invalidated')"))
        .isEqualTo(openBefore);
    assertThat(ledger.retention().get(d))
        .get()
        .satisfies(
            s -> {
              assertThat(s.retention()).contains(Duration.ofHours(1));
              assertThat(s.tasksRemoved()).isEqualTo(gone.size());
              assertThat(s.eventsRemoved()).isEqualTo(eventsOfGone);
              assertThat(s.removedThroughSeq()).isEqualTo(maxSeqOfGone);
            });
    // the dependent of a kept completed task is still claimable
    assertThat(ledger.claimNext(d, Claimer.of("w"))).map(Lease::taskId).isPresent();
    assertReplayChangesNothing(ledger, d, "elsewhere");

    PurgeReport again = purge(ledger, d);
    assertThat(again.tasksRemoved()).isZero();
    assertThat(ledger.retention().get(d).orElseThrow().removedThroughSeq()).isEqualTo(maxSeqOfGone);
  }

  @Test
  void a_retry_chain_goes_from_its_end_so_a_scrub_still_reaches_every_kept_copy() throws Exception {
    SettableClock clock = new SettableClock(Instant.parse("2026-03-01T09:00:00Z"));
    Ledger ledger = Ledger.open(PG.dataSource(), LedgerConfig.builder().clock(clock).build());
    String d = "chain";
    String root =
        ledger.file(TaskSpec.builder(d, "SECRET-77 title").origin("entry:e1", "u1").build());
    ledger.admit(root);
    ledger.worker().fail(claim(ledger, root), "boom", 3, Duration.ZERO);
    String retry = ledger.filedFrom(root).get(0).id();
    ledger.admit(retry);
    clock.advance(Duration.ofHours(2));
    ledger.complete(claim(ledger, retry), "done");
    ledger.retention().set(d, Duration.ofHours(1));

    // the root is old, its retry is young: the root stays, or a scrub would miss the retry's copy
    assertThat(purge(ledger, d).tasksRemoved()).isZero();
    ledger.scrubTasks(d, "entry:e1", new Redaction("[erased]", "[erased]", "[erased]"));
    assertThat(
            count(
                "SELECT count(*) FROM "
                    + schema(d)
                    + ".events WHERE payload LIKE"
                    + " '%SECRET-77%'"))
        .isZero();
    assertThat(
            count(
                "SELECT count(*) FROM " + schema(d) + ".tasks WHERE title LIKE" + " '%SECRET-77%'"))
        .isZero();

    // once both are old: the retry goes first, the root in the next run
    clock.advance(Duration.ofHours(2));
    assertThat(purge(ledger, d).tasksRemoved()).isEqualTo(1);
    assertThat(purge(ledger, d).tasksRemoved()).isEqualTo(1);
    assertThat(count("SELECT count(*) FROM " + schema(d) + ".tasks")).isZero();
    assertThat(
            count(
                "SELECT count(*) FROM "
                    + schema(d)
                    + ".events WHERE payload LIKE"
                    + " '%SECRET-77%'"))
        .isZero();
    assertReplayChangesNothing(ledger, d);
  }

  @Test
  void rows_the_reference_stack_wrote_are_purged_and_replay_still_agrees() throws Exception {
    SettableClock clock = new SettableClock(Instant.parse("2026-12-02T10:00:00Z"));
    Ledger ledger = Ledger.open(PG.dataSource(), LedgerConfig.builder().clock(clock).build());
    String d = "by-reference";
    try (ReferenceStack ref = new ReferenceStack(PG.databaseName())) {
      for (int i = 0; i < 4; i++) {
        String id = "t-ref-" + i;
        ref.file(d, id, "ref " + i, List.of("ref-only"), List.of(), 1, "2026-12-01T10:00:00Z");
        ref.append(id, "admitted", "2026-12-01T10:00:00.000000Z", "{}");
        ref.append(
            id,
            "claimed",
            "2026-12-01T10:00:00.000000Z",
            "{\"holder\":\"ref\",\"until\":\"2026-12-01T10:05:00.000000Z\"}");
        if (i < 3) {
          ref.append(id, "completed", "2026-12-01T10:00:01.000000Z", "{\"handoff\":\"h\"}");
        }
      }
    }
    ledger.retention().set(d, Duration.ofHours(1));

    PurgeReport r = ledger.retention().purge(d, Retention.DEFAULT_BATCH, p -> {});

    assertThat(r.tasksRemoved()).isEqualTo(3);
    assertThat(r.eventsRemoved()).isEqualTo(12);
    assertThat(count("SELECT count(*) FROM " + schema(d) + ".tasks")).isEqualTo(1);
    // the class of the claimed task remains; replay derives the same
    assertThat(count("SELECT count(*) FROM " + schema(d) + ".claim_classes")).isEqualTo(1);
    assertReplayChangesNothing(ledger, d);
  }

  @Test
  void bad_input_is_refused_naming_the_field_and_nothing_is_written() {
    Ledger ledger = Ledger.open(PG.dataSource());
    Retention r = ledger.retention();
    assertField(() -> r.set("", Duration.ofDays(1)), "domain");
    assertField(() -> r.set("d", null), "retention");
    assertField(() -> r.set("d", Duration.ZERO), "retention");
    assertField(() -> r.set("d", Duration.ofMillis(1500)), "retention");
    assertField(() -> r.set("d", Duration.ofDays(36_501)), "retention");
    assertField(() -> r.purge("d", 0, p -> {}), "batch");
    assertField(() -> r.purge("d", Retention.MAX_BATCH + 1, p -> {}), "batch");
    assertField(() -> r.purge("d", 10, null), "progress");
    assertField(() -> r.purge("no-retention", 10, p -> {}), "domain");
    assertField(() -> r.clear(" "), "domain");
    assertThat(r.get("d")).isEmpty();
    assertThat(r.list()).extracting(RetentionSetting::domain).doesNotContain("d");

    r.set("d", Duration.ofDays(2));
    assertThat(r.clear("d")).isTrue();
    assertThat(r.clear("d")).isFalse();
    assertThat(r.get("d")).get().satisfies(s -> assertThat(s.retention()).isEmpty());
    assertField(() -> r.purge("d", 10, p -> {}), "domain");
  }

  private static PurgeReport purge(Ledger ledger, String domain) {
    return ledger.retention().purge(domain, Retention.DEFAULT_BATCH, p -> {});
  }

  private static void assertField(Runnable call, String field) {
    assertThatThrownBy(call::run)
        .isInstanceOfSatisfying(
            InvalidInputException.class, e -> assertThat(e.field()).isEqualTo(field));
  }

  static String completed(
      Ledger ledger, String domain, String title, UnaryOperator<TaskSpec.Builder> spec) {
    String id = ledger.file(spec.apply(TaskSpec.builder(domain, title)).build());
    ledger.admit(id);
    ledger.complete(claim(ledger, id), "ok");
    return id;
  }

  static Lease claim(Ledger ledger, String id) {
    return ledger.claim(id, "w", LEASE, List.of("only-old"), Label.PUBLIC);
  }

  /** Our replay leaves every row of these domains' projection and derived state as it was. */
  static void assertReplayChangesNothing(Ledger ledger, String... domains) throws SQLException {
    List<List<String>> before = state(PG, domains);
    ledger.rebuild();
    assertThat(state(PG, domains)).isEqualTo(before);
  }

  static List<List<String>> state(PostgresExtension pg, String... domains) throws SQLException {
    List<List<String>> out = new ArrayList<>();
    try (Connection c = PostgresExtension.connect(pg.databaseName())) {
      for (String d : domains) {
        String s = schema(d);
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

  static long count(String sql) throws SQLException {
    try (Connection c = PostgresExtension.connect(PG.databaseName())) {
      return Fixtures.count(c, sql);
    }
  }

  static String schema(String domain) {
    return "\"" + DomainSchemas.schemaName(domain) + "\"";
  }

  static String quotedList(List<String> ids) {
    return String.join(", ", ids.stream().map(i -> "'" + i + "'").toList());
  }
}

package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** After a scrub, the erased text appears nowhere in the database (docs/state-machine.md). */
class ErasureTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final List<String> SECRETS =
      List.of(
          "TITLE-7f3a",
          "BODY-9c1e",
          "REASON-44d0",
          "HANDOFF-LEFT-b2b2",
          "HANDOFF-DONE-e5e5",
          "WHY-0a0a",
          "RESCORE-WHY-3d3d");

  @Test
  void scrub_entry_leaves_the_erased_text_in_no_text_column_of_any_table() {
    Ledger ledger = Ledger.open(PG.dataSource());
    String origin = "entry:runbook/oncall";
    // one task completed with handoffs, one invalidated with a reason, one left open
    String done =
        ledger.file(
            TaskSpec.builder("erase", "t " + SECRETS.get(0))
                .body("b " + SECRETS.get(1))
                .origin(origin, "e1")
                .build());
    ledger.admit(done);
    ledger.rescore(done, 1, SECRETS.get(6) + " too");
    Lease l = ledger.claim(done, "w", Duration.ofMinutes(1), List.of(), Label.PUBLIC);
    ledger.leaveHandoff(l, "h " + SECRETS.get(3));
    ledger.complete(l, "h " + SECRETS.get(4));
    String invalid =
        ledger.file(TaskSpec.builder("erase", "x " + SECRETS.get(0)).origin(origin, "e2").build());
    ledger.invalidate(invalid, "r " + SECRETS.get(2), null);
    String open =
        ledger.file(
            TaskSpec.builder("erase", "y " + SECRETS.get(0))
                .body(SECRETS.get(1))
                .origin(origin, "e3")
                .build());
    ledger.admit(open);
    ledger.rescore(open, 9, "bumped: " + SECRETS.get(6));
    String unrelated = ledger.file(TaskSpec.builder("erase", "keep me").build());
    ledger.recordPromotion(
        new PromotionSpec(
            "erase",
            "runbook/oncall",
            "reviewed",
            "dan",
            "erin",
            "w " + SECRETS.get(5),
            Label.PUBLIC,
            "d1",
            ""));
    ledger.recordPromotion(
        new PromotionSpec(
            "erase",
            "runbook/oncall",
            "canonical",
            "carol",
            "erin",
            SECRETS.get(5),
            Label.PUBLIC,
            "d1",
            "d2"));

    assertThat(occurrences(SECRETS)).as("the secrets are there before the scrub").isNotEmpty();

    ScrubResult result = ledger.scrubEntry("erase", "runbook/oncall", origin, Redaction.ERASED);

    assertThat(result).isEqualTo(new ScrubResult(2, 3));
    assertThat(occurrences(SECRETS)).isEmpty();
    assertThat(ledger.get(open).status()).isEqualTo(Status.INVALIDATED);
    assertThat(ledger.get(done).status()).isEqualTo(Status.COMPLETED);
    assertThat(ledger.get(unrelated).spec().title()).isEqualTo("keep me");
    // and a replay of the scrubbed log brings none of it back
    ledger.rebuild();
    assertThat(occurrences(SECRETS)).isEmpty();
    assertThat(ledger.get(open).spec().title()).isEqualTo("[erased]");
  }

  @Test
  void scrub_tasks_reaches_the_retries_filed_from_the_origin_s_tasks() {
    Ledger ledger = Ledger.open(PG.dataSource());
    String origin = "entry:retried";
    String root =
        ledger.file(
            TaskSpec.builder("erase-retry", "t " + SECRETS.get(0))
                .body("b " + SECRETS.get(1))
                .origin(origin, "e1")
                .build());
    ledger.admit(root);
    Lease lease = ledger.claim(root, "w", Duration.ofMinutes(1), List.of(), Label.PUBLIC);
    FailureRecord failure = ledger.fail(lease, "boom", 3, Duration.ZERO);
    assertThat(failure.retryId()).isNotNull();
    assertThat(ledger.get(failure.retryId()).spec().title()).isEqualTo("t " + SECRETS.get(0));
    assertThat(occurrences("erase-retry", List.of(SECRETS.get(0)))).isNotEmpty();

    int rewritten = ledger.scrubTasks("erase-retry", origin, Redaction.ERASED);

    assertThat(rewritten).isEqualTo(2);
    assertThat(occurrences("erase-retry", List.of(SECRETS.get(0), SECRETS.get(1)))).isEmpty();
    assertThat(ledger.get(failure.retryId()).status()).isEqualTo(Status.INVALIDATED);
    assertThat(ledger.get(failure.retryId()).spec().title()).isEqualTo("[erased]");
  }

  static final String ADDRESS = "alice@example.com";

  /** The address, the name, and the child's own text (which the scrub of the origin keeps). */
  static final List<String> ALICE = List.of(ADDRESS, "Liddell", "Alice");

  @Test
  void scrub_entry_erases_every_text_of_the_origin_s_tasks_and_their_retry_chain_but_not_a_child()
      throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    String domain = "erase-all";
    String origin = "entry:alice";
    Duration minute = Duration.ofMinutes(1);
    // the root: rescored, handed off, failed (a retry), the retry failed (a dead letter)
    String root =
        ledger.file(
            TaskSpec.builder(domain, "Write to Alice Liddell <" + ADDRESS + ">")
                .body(ADDRESS + " asked for her data")
                .origin(origin, "e1")
                .maxAttempts(2)
                .build());
    ledger.admit(root);
    ledger.rescore(root, 5, ADDRESS + " is waiting");
    Lease first = ledger.claim(root, "w", minute, List.of(), Label.PUBLIC);
    ledger.leaveHandoff(first, "drafted for " + ADDRESS);
    String error = "smtp 550 <" + ADDRESS + ">: mailbox full";
    FailureRecord attempt1 = ledger.fail(first, error, 2, Duration.ZERO);
    String retry = attempt1.retryId();
    assertThat(ledger.get(retry).spec().origin()).isEqualTo("retries:" + root);
    assertThat(ledger.admitDue(domain, 10)).containsExactly(retry);
    Lease second = ledger.claim(retry, "w", minute, List.of(), Label.PUBLIC);
    ledger.leaveHandoff(second, "second draft for " + ADDRESS);
    FailureRecord attempt2 = ledger.fail(second, error, 2, Duration.ZERO);
    assertThat(attempt2.deadLetter()).isTrue();
    // the dead letter re-filed: open, with the root's text
    String refiled = ledger.refile(retry);
    // one completed with a handoff and posted to a mailto address, one invalidated with a reason
    String done =
        ledger.file(TaskSpec.builder(domain, "Thank " + ADDRESS).origin(origin, "e2").build());
    ledger.admit(done);
    ledger.complete(ledger.claim(done, "w", minute, List.of(), Label.PUBLIC), "thanked " + ADDRESS);
    ledger.post(done, "mailto:" + ADDRESS);
    String duplicate =
        ledger.file(TaskSpec.builder(domain, "Same for Alice").origin(origin, "e3").build());
    ledger.invalidate(duplicate, "duplicate of " + ADDRESS + "'s request", null);
    // a child filed from the root: its own origin, its own text
    String child =
        ledger.file(
            TaskSpec.builder(domain, "child CHILD-4e4e")
                .body("child body CHILD-4e4e")
                .origin("task:" + root, "c1")
                .build());
    String unrelated = ledger.file(TaskSpec.builder(domain, "keep me").build());
    assertThat(occurrences(domain, ALICE)).as("the texts are there before the scrub").hasSize(6);

    ScrubResult result = ledger.scrubEntry(domain, "alice", origin, Redaction.ERASED);

    assertThat(result).isEqualTo(new ScrubResult(0, 5));
    assertThat(occurrences(domain, ALICE)).isEmpty();
    String erased = Redaction.ERASED.reason();
    Task r = ledger.get(root);
    assertThat(r.spec().title()).isEqualTo("[erased]");
    assertThat(r.spec().body()).isEmpty();
    assertThat(r.handoff()).isEqualTo(erased);
    // the failure's own header (attempt, time) stays; the error text is erased
    assertThat(r.reason())
        .isEqualTo("attempt 1 of 2 failed at " + attempt1.at() + ": " + erased)
        .isEqualTo(attempt1.reason().replace(error, erased));
    assertThat(r.supersededBy()).isEqualTo(retry);
    Task deadLetter = ledger.get(retry);
    assertThat(deadLetter.reason())
        .isEqualTo(
            FailureRecord.DEAD_LETTER
                + " attempt 2 of 2 failed at "
                + attempt2.at()
                + ": "
                + erased);
    assertThat(deadLetter.handoff()).isEqualTo(erased);
    assertThat(ledger.get(refiled).status()).isEqualTo(Status.INVALIDATED);
    assertThat(ledger.get(refiled).reason()).isEqualTo(erased);
    assertThat(ledger.get(refiled).spec().title()).isEqualTo("[erased]");
    assertThat(ledger.get(done).status()).isEqualTo(Status.COMPLETED);
    assertThat(ledger.get(done).handoff()).isEqualTo(erased);
    assertThat(ledger.get(done).postedTo()).isEqualTo(erased);
    assertThat(ledger.get(duplicate).reason()).isEqualTo(erased);
    assertThat(ledger.history(done))
        .filteredOn(e -> e.kind().equals("posted"))
        .extracting(LoggedEvent::payload)
        .containsExactly("{\"to\":\"erased on request\"}");
    // the child is filed under task:<root>, another origin: not reached
    assertThat(ledger.get(child).spec().title()).isEqualTo("child CHILD-4e4e");
    assertThat(ledger.get(child).status()).isEqualTo(Status.PROPOSED);
    assertThat(ledger.get(unrelated).spec().title()).isEqualTo("keep me");
    // a second scrub changes nothing
    var scrubbed = projectionAndLog(domain);
    assertThat(ledger.scrubEntry(domain, "alice", origin, Redaction.ERASED))
        .isEqualTo(new ScrubResult(0, 5));
    assertThat(projectionAndLog(domain)).isEqualTo(scrubbed);
    // a replay of the scrubbed log is the scrubbed projection, row for row
    ledger.rebuild();
    assertThat(projectionAndLog(domain)).isEqualTo(scrubbed);
    assertThat(occurrences(domain, ALICE)).isEmpty();
    // the child's own origin is scrubbed on its own
    assertThat(ledger.scrubTasks(domain, "task:" + root, Redaction.ERASED)).isEqualTo(1);
    assertThat(occurrences(domain, List.of("CHILD-4e4e"))).isEmpty();
  }

  @Test
  void scrub_tasks_reaches_a_retry_chain_at_any_depth() {
    Ledger ledger = Ledger.open(PG.dataSource());
    String domain = "erase-deep";
    String root =
        ledger.file(
            TaskSpec.builder(domain, "depth 0 " + ADDRESS).origin("entry:deep", "e1").build());
    // each link filed as retries:<the one before>, the shape a chain started by a re-filed task
    // takes; a continuation filed from the last link has an origin of its own and is not reached
    List<String> chain = new ArrayList<>(List.of(root));
    for (int depth = 1; depth <= 3; depth++) {
      chain.add(
          ledger.file(
              TaskSpec.builder(domain, "depth " + depth + " " + ADDRESS)
                  .origin("retries:" + chain.get(depth - 1), "attempt:2")
                  .build()));
    }
    String sibling =
        ledger.file(
            TaskSpec.builder(domain, "sibling SIBLING-5f5f")
                .origin("continues:" + chain.get(3), null)
                .build());

    assertThat(ledger.scrubTasks(domain, "entry:deep", Redaction.ERASED)).isEqualTo(4);

    assertThat(occurrences(domain, List.of(ADDRESS))).isEmpty();
    assertThat(chain)
        .allSatisfy(id -> assertThat(ledger.get(id).status()).isEqualTo(Status.INVALIDATED));
    assertThat(ledger.get(sibling).spec().title()).isEqualTo("sibling SIBLING-5f5f");
  }

  @Test
  void the_docs_erasure_of_an_origin_and_its_tasks_children_commits_in_one_transaction()
      throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    String her =
        ledger.file(
            TaskSpec.builder("support", "Call " + ADDRESS).origin("entry:alice", "e1").build());
    String child =
        ledger.file(
            TaskSpec.builder("support", "Ship to " + ADDRESS).origin("task:" + her, "c1").build());

    // docs/dao-and-transactions.md, "Erasure: what a scrub reaches, and what it cannot"
    try (Connection c = PG.dataSource().getConnection()) {
      c.setAutoCommit(false);
      LedgerTransaction tx = ledger.in(c);
      for (Task t : tx.withOrigin("support", "entry:alice")) {
        tx.scrubTasks("support", "task:" + t.id(), Redaction.ERASED); // her tasks' children
      }
      tx.scrubEntry("support", "alice", "entry:alice", Redaction.ERASED);
      c.commit(); // all of it, or nothing
    }

    assertThat(occurrences("support", List.of(ADDRESS))).isEmpty();
    assertThat(List.of(her, child))
        .allSatisfy(id -> assertThat(ledger.get(id).spec().title()).isEqualTo("[erased]"));
  }

  @Test
  void a_scrubbed_dead_letter_is_still_a_dead_letter_that_can_be_refiled() {
    Ledger ledger = Ledger.open(PG.dataSource());
    String domain = "erase-dead";
    String id =
        ledger.file(
            TaskSpec.builder(domain, "mail " + ADDRESS)
                .origin("entry:dead", "e1")
                .maxAttempts(1)
                .build());
    ledger.admit(id);
    FailureRecord failed =
        ledger.fail(
            ledger.claim(id, "w", Duration.ofMinutes(1), List.of(), Label.PUBLIC),
            "refused " + ADDRESS,
            1,
            Duration.ZERO);
    assertThat(failed.deadLetter()).isTrue();

    assertThat(ledger.scrubTasks(domain, "entry:dead", Redaction.ERASED)).isEqualTo(1);

    assertThat(occurrences(domain, List.of(ADDRESS))).isEmpty();
    assertThat(ledger.deadLetters(domain))
        .extracting(Task::id, Task::reason)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(
                id,
                FailureRecord.DEAD_LETTER
                    + " attempt 1 of 1 failed at "
                    + failed.at()
                    + ": erased on request"));
    String again = ledger.refile(id);
    assertThat(ledger.get(again).spec().title()).isEqualTo("[erased]");
    assertThat(ledger.get(again).status()).isEqualTo(Status.ADMITTED);
  }

  @Test
  void a_redaction_with_a_null_body_is_refused_naming_the_field_and_nothing_is_written() {
    Ledger ledger = Ledger.open(PG.dataSource());
    String id =
        ledger.file(TaskSpec.builder("erase-null", "keep").origin("entry:nb", "e1").build());
    long events = ledger.eventCount();

    assertThatThrownBy(
            () -> ledger.scrubTasks("erase-null", "entry:nb", new Redaction("[erased]", null, "r")))
        .isInstanceOfSatisfying(
            InvalidInputException.class, e -> assertThat(e.field()).isEqualTo("redaction.body"));
    assertThatThrownBy(
            () ->
                ledger.scrubEntry(
                    "erase-null", "nb", "entry:nb", new Redaction("[erased]", null, "r")))
        .isInstanceOfSatisfying(
            InvalidInputException.class, e -> assertThat(e.field()).isEqualTo("redaction.body"));

    assertThat(ledger.eventCount()).isEqualTo(events);
    assertThat(ledger.get(id).spec().title()).isEqualTo("keep");
    assertThat(ledger.get(id).status()).isEqualTo(Status.PROPOSED);
  }

  /** Where any secret appears in the domain schema's and the directory's tables. */
  private static List<String> occurrences(List<String> secrets) {
    return occurrences("erase", secrets);
  }

  /**
   * Where any secret appears in a row of any table of the domain's schema or the directory (every
   * column of every type: the whole row as text, events' payloads, arrays and all), as {@code
   * schema.table: secret}.
   */
  private static List<String> occurrences(String domain, List<String> secrets) {
    DSLContext ctx = DSL.using(PG.dataSource(), SQLDialect.POSTGRES);
    String domainSchema = DomainSchemas.schemaName(domain);
    List<String> found = new ArrayList<>();
    Field<String> schema = DSL.field(DSL.name("table_schema"), String.class);
    Field<String> table = DSL.field(DSL.name("table_name"), String.class);
    var tables =
        ctx.select(schema, table)
            .from(DSL.table(DSL.name("information_schema", "tables")))
            .where(schema.in(domainSchema, "public"))
            .and(DSL.field(DSL.name("table_type"), String.class).eq("BASE TABLE"))
            .orderBy(schema, table)
            .fetch();
    assertThat(tables).as("the tables searched").hasSizeGreaterThanOrEqualTo(6);
    for (var t : tables) {
      Field<String> row = DSL.field(DSL.name("x"), Object.class).cast(SQLDataType.CLOB);
      for (String secret : secrets) {
        int n =
            ctx.fetchCount(
                DSL.table(DSL.name(t.value1(), t.value2())).as("x"), row.contains(secret));
        if (n > 0) {
          found.add(t.value1() + "." + t.value2() + ": " + secret);
        }
      }
    }
    return found;
  }

  /** Every row of the domain's tasks, events and promotions, and of the directory's tables. */
  private static List<List<Map<String, Object>>> projectionAndLog(String domain) {
    DSLContext ctx = DSL.using(PG.dataSource(), SQLDialect.POSTGRES);
    String s = DomainSchemas.schemaName(domain);
    return List.of(
        ctx.selectFrom(DSL.table(DSL.name(s, "tasks")))
            .orderBy(DSL.field(DSL.name("id")))
            .fetchMaps(),
        ctx.selectFrom(DSL.table(DSL.name(s, "events")))
            .orderBy(DSL.field(DSL.name("seq")))
            .fetchMaps(),
        ctx.selectFrom(DSL.table(DSL.name(s, "promotions")))
            .orderBy(DSL.field(DSL.name("seq")))
            .fetchMaps(),
        ctx.selectFrom(DSL.table(DSL.name("public", "ledger_tasks")))
            .orderBy(DSL.field(DSL.name("id")))
            .fetchMaps(),
        ctx.selectFrom(DSL.table(DSL.name("public", "ledger_dependencies")))
            .orderBy(DSL.field(DSL.name("depends_on")), DSL.field(DSL.name("task_id")))
            .fetchMaps());
  }
}

package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.PostgresExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** After a scrub, the erased text appears nowhere in the database (DESIGN section 4). */
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

  /**
   * Every (schema.table.column, secret) where a text column of the domain schema or the directory
   * holds a secret.
   */
  private static List<String> occurrences(List<String> secrets) {
    return occurrences("erase", secrets);
  }

  /** Where any secret appears in a text column of the domain's schema or the directory. */
  private static List<String> occurrences(String domain, List<String> secrets) {
    DSLContext ctx = DSL.using(PG.dataSource(), SQLDialect.POSTGRES);
    String domainSchema = DomainSchemas.schemaName(domain);
    List<String> found = new ArrayList<>();
    Field<String> schema = DSL.field(DSL.name("table_schema"), String.class);
    Field<String> table = DSL.field(DSL.name("table_name"), String.class);
    Field<String> column = DSL.field(DSL.name("column_name"), String.class);
    for (var c :
        ctx.select(schema, table, column)
            .from(DSL.table(DSL.name("information_schema", "columns")))
            .where(schema.in(domainSchema, "public"))
            .and(
                DSL.field(DSL.name("data_type"), String.class)
                    .in("text", "character varying", "jsonb", "json"))
            .fetch()) {
      for (String secret : secrets) {
        Field<String> value = DSL.field(DSL.name(c.value3()), String.class).cast(String.class);
        int n = ctx.fetchCount(DSL.table(DSL.name(c.value1(), c.value2())), value.contains(secret));
        if (n > 0) {
          found.add(c.value1() + "." + c.value2() + "." + c.value3() + ": " + secret);
        }
      }
    }
    return found;
  }
}

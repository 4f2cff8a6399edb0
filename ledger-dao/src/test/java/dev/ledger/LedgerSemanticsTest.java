package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.SettableClock;
import dev.ledger.testing.TemplateSchemaGuard;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class LedgerSemanticsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final SettableClock CLOCK = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
  static final TemplateSchemaGuard GUARD = new TemplateSchemaGuard();
  static final Duration LEASE = Duration.ofMinutes(5);
  static Ledger ledger;

  @BeforeAll
  static void open() {
    ledger =
        Ledger.open(
            PG.dataSource(), LedgerConfig.builder().clock(CLOCK).executeListener(GUARD).build());
  }

  static String fileAdmitted(String domain, String title, long priority) {
    String id = ledger.file(TaskSpec.builder(domain, title).priority(priority).build());
    ledger.admit(id);
    return id;
  }

  @Test
  void a_task_walks_proposed_admitted_claimed_completed() {
    String id = ledger.file(TaskSpec.builder("walk", "Walk").body("b").createdBy("alice").build());
    assertThat(ledger.get(id).status()).isEqualTo(Status.PROPOSED);
    assertThat(ledger.claimNext("walk", "w", LEASE, List.of(), Label.RESTRICTED)).isEmpty();
    ledger.admit(id);
    assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
    Lease lease = ledger.claimNext("walk", "w1", LEASE, List.of(), Label.PUBLIC).orElseThrow();
    assertThat(lease.taskId()).isEqualTo(id);
    assertThat(lease.attempt()).isEqualTo(1);
    Task claimed = ledger.get(id);
    assertThat(claimed.status()).isEqualTo(Status.CLAIMED);
    assertThat(claimed.holder()).isEqualTo("w1");
    assertThat(claimed.leaseUntil()).isEqualTo(lease.until());
    ledger.leaveHandoff(lease, "half");
    assertThat(ledger.get(id).handoff()).isEqualTo("half");
    Lease extended = ledger.heartbeat(lease, Duration.ofMinutes(10));
    assertThat(ledger.get(id).leaseUntil()).isEqualTo(extended.until());
    ledger.complete(extended, "done");
    Task done = ledger.get(id);
    assertThat(done.status()).isEqualTo(Status.COMPLETED);
    assertThat(done.handoff()).isEqualTo("done");
    assertThat(done.holder()).isEqualTo("w1");
    assertThat(done.leaseUntil()).isNull();
    assertThat(ledger.history(id).stream().map(LoggedEvent::kind))
        .containsExactly(
            "created", "admitted", "claimed", "handoff_left", "heartbeat", "completed");
    assertThatThrownBy(() -> ledger.admit(id))
        .isInstanceOf(WrongStateException.class)
        .hasMessageContaining("completed");
    assertThat(GUARD.checked()).isPositive();
  }

  @Test
  void release_returns_the_task_to_the_queue_and_the_old_lease_is_dead() {
    String id = fileAdmitted("release", "R", 0);
    Lease first = ledger.claimNext("release", "w1", LEASE, List.of(), Label.PUBLIC).orElseThrow();
    ledger.release(first);
    Task t = ledger.get(id);
    assertThat(t.status()).isEqualTo(Status.ADMITTED);
    assertThat(t.holder()).isNull();
    assertThat(t.leaseUntil()).isNull();
    assertThatThrownBy(() -> ledger.complete(first, null)).isInstanceOf(LeaseLostException.class);
    Lease second = ledger.claimNext("release", "w2", LEASE, List.of(), Label.PUBLIC).orElseThrow();
    assertThat(second.attempt()).isEqualTo(2);
  }

  @Test
  void claims_follow_priority_then_creation() {
    String low = fileAdmitted("order", "low", 1);
    String high1 = fileAdmitted("order", "high1", 9);
    String high2 = fileAdmitted("order", "high2", 9);
    String mid = fileAdmitted("order", "mid", 5);
    List<String> order =
        java.util.stream.Stream.generate(
                () -> ledger.claimNext("order", "w", LEASE, List.of(), Label.PUBLIC))
            .limit(5)
            .map(o -> o.map(Lease::taskId).orElse("none"))
            .toList();
    assertThat(order).containsExactly(high1, high2, mid, low, "none");
  }

  @Test
  void a_batch_claim_logs_one_claimed_event_per_task_in_claim_order() {
    String low = fileAdmitted("batch", "low", 1);
    String high = fileAdmitted("batch", "high", 9);
    String mid = fileAdmitted("batch", "mid", 5);
    List<Lease> leases = ledger.claimBatch("batch", "w", LEASE, List.of(), Label.PUBLIC, 10);
    assertThat(leases).extracting(Lease::taskId).containsExactly(high, mid, low);
    // one statement appends the three events; their seq follows the claim order
    List<LoggedEvent> claimed =
        java.util.stream.Stream.of(low, high, mid)
            .flatMap(id -> ledger.history(id).stream())
            .filter(e -> e.kind().equals("claimed"))
            .sorted(java.util.Comparator.comparingLong(LoggedEvent::seq))
            .toList();
    assertThat(claimed).extracting(LoggedEvent::taskId).containsExactly(high, mid, low);
    assertThat(claimed)
        .extracting(LoggedEvent::payload)
        .containsOnly(
            "{\"holder\":\"w\",\"until\":\""
                + dev.ledger.codegen.convert.Rfc3339.format(leases.get(0).until())
                + "\"}");
  }

  @Test
  void a_claim_needs_every_requirement_and_a_high_enough_handling_level() {
    String needsSql =
        ledger.file(
            TaskSpec.builder("filters", "sql").requirements(List.of("sql", "java")).build());
    ledger.admit(needsSql);
    String secret =
        ledger.file(
            TaskSpec.builder("filters", "secret").classification(Label.CONFIDENTIAL).build());
    ledger.admit(secret);
    assertThat(ledger.claimNext("filters", "w", LEASE, List.of("sql"), Label.INTERNAL)).isEmpty();
    assertThat(
            ledger
                .claimNext("filters", "w", LEASE, List.of("java", "sql", "gpu"), Label.INTERNAL)
                .map(Lease::taskId))
        .contains(needsSql);
    assertThatThrownBy(() -> ledger.claim(secret, "w", LEASE, List.of(), Label.INTERNAL))
        .isInstanceOf(WrongStateException.class)
        .hasMessageContaining("confidential");
    assertThat(
            ledger
                .claimNext("filters", "w", LEASE, List.of(), Label.CONFIDENTIAL)
                .map(Lease::taskId))
        .contains(secret);
  }

  @Test
  void a_dependency_in_another_domain_must_be_completed_first() {
    String upstream = fileAdmitted("deps-a", "upstream", 0);
    String downstream =
        ledger.file(TaskSpec.builder("deps-b", "downstream").dependsOn(List.of(upstream)).build());
    ledger.admit(downstream);
    assertThat(ledger.claimNext("deps-b", "w", LEASE, List.of(), Label.PUBLIC)).isEmpty();
    assertThat(ledger.dependents(upstream)).isEmpty(); // dependents are read in the task's domain
    Lease up = ledger.claimNext("deps-a", "w", LEASE, List.of(), Label.PUBLIC).orElseThrow();
    ledger.complete(up, null);
    assertThat(ledger.claimNext("deps-b", "w", LEASE, List.of(), Label.PUBLIC).map(Lease::taskId))
        .contains(downstream);
  }

  @Test
  void an_open_continuation_keeps_its_parent_unclaimable() {
    String parent = fileAdmitted("cont", "parent", 0);
    String child =
        ledger.file(
            TaskSpec.builder("cont", "continuation").origin("continues:" + parent, null).build());
    assertThat(ledger.claimNext("cont", "w", LEASE, List.of(), Label.PUBLIC)).isEmpty();
    assertThat(ledger.filedFrom(parent)).extracting(Task::id).containsExactly(child);
    ledger.invalidate(child, "not needed", null);
    assertThat(ledger.claimNext("cont", "w", LEASE, List.of(), Label.PUBLIC).map(Lease::taskId))
        .contains(parent);
  }

  @Test
  void an_expired_lease_is_claimable_again_and_fenced() {
    String id = fileAdmitted("expiry", "E", 0);
    Lease a =
        ledger
            .claimNext("expiry", "a", Duration.ofSeconds(2), List.of(), Label.PUBLIC)
            .orElseThrow();
    assertThat(ledger.claimNext("expiry", "b", LEASE, List.of(), Label.PUBLIC)).isEmpty();
    CLOCK.advance(Duration.ofSeconds(3));
    Lease b = ledger.claimNext("expiry", "b", LEASE, List.of(), Label.PUBLIC).orElseThrow();
    assertThat(b.taskId()).isEqualTo(id);
    assertThat(b.attempt()).isEqualTo(2);
    assertThatThrownBy(() -> ledger.heartbeat(a, LEASE))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("claimed by b (attempt 2)");
    assertThatThrownBy(() -> ledger.complete(a, "late")).isInstanceOf(LeaseLostException.class);
    ledger.complete(b, "ok");
    assertThat(ledger.history(id).stream().filter(e -> e.kind().equals("completed"))).hasSize(1);
  }

  @Test
  void filing_the_same_upstream_event_twice_returns_the_first_task() {
    TaskSpec spec = TaskSpec.builder("idem", "from tracker").origin("tracker:ops", "evt-1").build();
    String first = ledger.file(spec);
    String again = ledger.file(spec);
    assertThat(again).isEqualTo(first);
    assertThat(ledger.withOrigin("idem", "tracker:ops")).hasSize(1);
    assertThat(ledger.findOrigin("idem", "tracker:ops", "evt-1")).contains(first);
    assertThat(ledger.findOrigin("idem", "tracker:ops", "evt-2")).isEmpty();
  }

  @Test
  void post_and_unposted() {
    String id = ledger.file(TaskSpec.builder("post", "P").origin("tracker:ops", "evt-9").build());
    ledger.admit(id);
    Lease l = ledger.claimNext("post", "w", LEASE, List.of(), Label.PUBLIC).orElseThrow();
    assertThatThrownBy(() -> ledger.post(id, "tracker:ops"))
        .isInstanceOf(WrongStateException.class);
    ledger.complete(l, null);
    assertThat(ledger.unposted("post")).extracting(Task::id).containsExactly(id);
    ledger.post(id, "tracker:ops");
    assertThat(ledger.unposted("post")).isEmpty();
    assertThat(ledger.get(id).postedTo()).isEqualTo("tracker:ops");
  }

  @Test
  void rescore_changes_the_claim_order() {
    String a = fileAdmitted("rescore", "a", 1);
    String b = fileAdmitted("rescore", "b", 2);
    ledger.rescore(a, 3, "urgent");
    assertThat(ledger.list("rescore", Status.ADMITTED)).extracting(Task::id).containsExactly(a, b);
  }

  @Test
  void a_promotion_is_recorded_once_per_entry_tier_digest_and_promoter() {
    PromotionSpec p =
        new PromotionSpec(
            "promo", "guide/setup", "reviewed", "dan", "erin", "good", Label.INTERNAL, "d1", "");
    assertThat(ledger.recordPromotion(p)).isTrue();
    assertThat(ledger.recordPromotion(p)).isFalse();
    PromotionSpec byCarol =
        new PromotionSpec(
            "promo", "guide/setup", "reviewed", "carol", "erin", "good", Label.INTERNAL, "d1", "");
    assertThat(ledger.recordPromotion(byCarol)).isTrue();
    List<Promotion> all = ledger.promotions("promo", "guide/setup");
    assertThat(all).extracting(x -> x.spec().by()).containsExactly("dan", "carol");
    assertThat(all.get(0).whyErased()).isFalse();
    assertThat(ledger.scrubPromotions("promo", "guide/setup")).isEqualTo(2);
    assertThat(ledger.promotions("promo", "guide/setup"))
        .allSatisfy(
            x -> {
              assertThat(x.spec().why()).isEmpty();
              assertThat(x.whyErased()).isTrue();
            });
  }

  @Test
  void scrub_tasks_redacts_and_invalidates_the_open_ones() {
    String open =
        ledger.file(
            TaskSpec.builder("scrub", "secret title")
                .body("secret body")
                .origin("mail:1", null)
                .build());
    String done =
        ledger.file(TaskSpec.builder("scrub", "secret two").origin("mail:1", null).build());
    ledger.admit(done);
    Lease l = ledger.claim(done, "w", LEASE, List.of(), Label.PUBLIC);
    ledger.leaveHandoff(l, "secret handoff");
    ledger.complete(l, "secret result");
    assertThat(ledger.scrubTasks("scrub", "mail:1", Redaction.ERASED)).isEqualTo(2);
    Task o = ledger.get(open);
    assertThat(o.status()).isEqualTo(Status.INVALIDATED);
    assertThat(o.spec().title()).isEqualTo("[erased]");
    assertThat(o.reason()).isEqualTo("erased on request");
    Task d = ledger.get(done);
    assertThat(d.status()).isEqualTo(Status.COMPLETED);
    assertThat(d.handoff()).isEqualTo("erased on request");
    assertThat(ledger.createdPayload(done)).doesNotContain("secret");
    assertThat(ledger.history(done))
        .allSatisfy(e -> assertThat(e.payload()).doesNotContain("secret"));
  }

  @Test
  void bad_input_names_the_field_and_writes_nothing() {
    long before = ledger.eventCount();
    assertField(() -> ledger.file(TaskSpec.builder("bad", "").build()), "title");
    assertField(() -> ledger.file(TaskSpec.builder("bad", "x".repeat(501)).build()), "title");
    assertField(() -> ledger.file(TaskSpec.builder("bad", "a\0b").build()), "title");
    assertField(() -> ledger.file(TaskSpec.builder("", "t").build()), "domain");
    assertField(() -> ledger.file(TaskSpec.builder("d".repeat(201), "t").build()), "domain");
    assertField(() -> ledger.file(TaskSpec.builder("a\0", "t").build()), "domain");
    assertField(() -> ledger.file(TaskSpec.builder("bad", "t").body("nul\0").build()), "body");
    assertField(
        () -> ledger.file(TaskSpec.builder("bad", "t").dependsOn(List.of("t-missing")).build()),
        "depends_on");
    assertField(
        () -> ledger.file(TaskSpec.builder("bad", "t").dependsOn(List.of("x", "x")).build()),
        "depends_on");
    assertField(
        () -> ledger.claimNext("bad", "w", Duration.ZERO, List.of(), Label.PUBLIC), "lease");
    assertField(
        () -> ledger.claimNext("bad", "w", Duration.ofSeconds(-1), List.of(), Label.PUBLIC),
        "lease");
    assertThatThrownBy(() -> ledger.admit("t-unknown")).isInstanceOf(TaskNotFoundException.class);
    assertThat(ledger.eventCount()).isEqualTo(before);
    assertThat(ledger.domains()).doesNotContain("bad");
  }

  @Test
  void times_are_written_with_six_fraction_digits_in_utc() {
    assertThat(Validation.time("at", "2024-12-31T23:59:59.9999996Z"))
        .isEqualTo(Instant.parse("2024-12-31T23:59:59.999999Z"));
    assertThat(
            dev.ledger.codegen.convert.Rfc3339.format(
                Instant.parse("2024-12-31T23:59:59.9999996Z")))
        .isEqualTo("2024-12-31T23:59:59.999999Z");
    assertThat(Validation.time("at", "2024-06-01T12:00:00+02:00"))
        .isEqualTo(Instant.parse("2024-06-01T10:00:00Z"));
    assertThat(Validation.time("at", "2024-06-01t12:00:00.5z"))
        .isEqualTo(Instant.parse("2024-06-01T12:00:00.500Z"));
    assertField(() -> Validation.time("at", "1990-12-31T23:59:60Z"), "at");
    assertField(() -> Validation.time("at", "2024-02-30T00:00:00Z"), "at");
    assertField(() -> Validation.time("at", "2024-06-01 12:00"), "at");
    String id = ledger.file(TaskSpec.builder("times", "t").build());
    assertThat(ledger.history(id).get(0).at().toString()).endsWith("Z");
    assertThat(ledger.createdPayload(id)).contains("\"domain\":\"times\"");
  }

  static void assertField(
      org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String field) {
    assertThatThrownBy(call)
        .isInstanceOf(InvalidInputException.class)
        .satisfies(e -> assertThat(((InvalidInputException) e).field()).isEqualTo(field));
  }

  @Test
  void unknown_domains_read_as_empty() {
    assertThat(ledger.list("nowhere", Status.ADMITTED)).isEmpty();
    assertThat(ledger.promotions("nowhere", "e")).isEmpty();
    Optional<Lease> none = ledger.claimNext("nowhere", "w", LEASE, List.of(), Label.PUBLIC);
    assertThat(none).isEmpty();
  }
}

package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
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

  // slow (5,000 filings one by one): run on purpose, -Dledger.test.groups=slow
  @Tag("slow")
  @Test
  void a_full_batch_writes_row_for_row_what_single_filings_write() throws SQLException {
    // the same 5,000 specs filed one by one into one domain and in one call into another; a third
    // of them name an origin filed before, a few repeat one of the batch, one depends on a task
    int n = 5000;
    String dep = ledger.file(TaskSpec.builder("full-dep", "dependency").build());
    List<TaskSpec> single = new ArrayList<>();
    List<TaskSpec> batch = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      for (String domain : List.of("full-single", "full-batch")) {
        TaskSpec.Builder b =
            TaskSpec.builder(domain, "task " + i)
                .body("body " + i)
                .priority(i % 7)
                .requirements(i % 5 == 0 ? List.of("gpu") : List.of())
                .classification(i % 11 == 0 ? Label.CONFIDENTIAL : Label.PUBLIC)
                .createdBy("creator " + (i % 3));
        if (i % 2 == 0) {
          b.origin("feed", "event " + (i % 4000));
        }
        if (i == 17) {
          b.dependsOn(List.of(dep));
        }
        if (i == 23) {
          b.notBefore(Instant.now().plusSeconds(3600)).maxAttempts(4);
        }
        (domain.equals("full-single") ? single : batch).add(b.build());
      }
    }
    // a third filed before, in both domains alike
    java.util.Set<String> keys = new java.util.HashSet<>();
    int rowsBefore = 0;
    for (int i = 0; i < n; i += 3) {
      fileAndAdmit(single.get(i));
      ledger.fileAll(List.of(batch.get(i)));
      rowsBefore++;
      if (batch.get(i).origin() != null) {
        keys.add(batch.get(i).upstreamEvent());
      }
    }
    // what the batch must file: each spec without an origin, and each origin not seen before
    int newTasks = 0;
    for (TaskSpec s : batch) {
      if (s.origin() == null || keys.add(s.upstreamEvent())) {
        newTasks++;
      }
    }
    List<String> singleIds = new ArrayList<>();
    for (TaskSpec s : single) {
      singleIds.add(fileAndAdmit(s));
    }
    long eventsBefore = ledger.eventCount();
    List<String> batchIds = ledger.fileAll(batch);
    assertThat(batchIds).hasSize(n);
    // the same sharing of ids: equal origins got one task, in the same places
    for (int i = 0; i < n; i++) {
      assertThat(batchIds.indexOf(batchIds.get(i))).isEqualTo(singleIds.indexOf(singleIds.get(i)));
    }
    assertThat(newTasks).isEqualTo(3666);
    // created + admitted for each new task, created alone for the delayed one
    assertThat(ledger.eventCount() - eventsBefore).isEqualTo(2L * newTasks - 1);
    List<List<String>> filed = rows("full-batch");
    assertThat(filed).hasSize(rowsBefore + newTasks).isEqualTo(rows("full-single"));
    Task blocked = ledger.get(batchIds.get(17));
    assertThat(blocked.status()).isEqualTo(Status.ADMITTED);
    assertThat(ledger.get(batchIds.get(23)).status()).isEqualTo(Status.PROPOSED);
    assertThat(filed.stream().filter(r -> r.get(11).equals("t")).count()).isEqualTo(1);
  }

  private String fileAndAdmit(TaskSpec spec) {
    String id = ledger.file(spec);
    if (ledger.get(id).status() == Status.PROPOSED && spec.notBefore() == null) {
      ledger.admit(id);
    }
    return id;
  }

  /** A domain's task rows and routes, without the columns that differ between two filings. */
  private List<List<String>> rows(String domain) throws SQLException {
    try (Connection c = PostgresExtension.connect(PG.databaseName())) {
      String schema;
      try (PreparedStatement ps =
          c.prepareStatement("SELECT schema FROM public.ledger_domains WHERE domain = ?")) {
        ps.setString(1, domain);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          schema = rs.getString(1);
        }
      }
      return Fixtures.rows(
          c,
          "SELECT t.title, t.body, t.requirements, t.depends_on, t.origin, t.upstream_event,"
              + " t.created_by, t.label_rank, t.priority, t.status, t.attempts, t.blocked,"
              + " t.not_before IS NOT NULL, t.max_attempts, r.completed,"
              + " (SELECT count(*) FROM public.ledger_dependencies e WHERE e.task_id = t.id),"
              + " (SELECT string_agg(kind, ',' ORDER BY seq) FROM "
              + schema
              + ".events v WHERE v.task_id = t.id),"
              + " EXISTS (SELECT 1 FROM "
              + schema
              + ".claim_classes k WHERE k.label_rank = t.label_rank"
              + " AND k.requirements_md5 = md5(t.requirements))"
              + " FROM "
              + schema
              + ".tasks t JOIN public.ledger_tasks r ON r.id = t.id AND r.domain = t.domain"
              + " ORDER BY t.title, t.origin, t.upstream_event");
    }
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

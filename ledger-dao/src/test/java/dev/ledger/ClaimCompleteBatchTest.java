package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.testing.PostgresExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a worker pool's batches write: {@link Ledger#claimTasks} (one statement claims, logs and
 * returns the rows) and {@link Ledger#completeAll} (one statement locks, fences, completes and
 * logs), each the same rows and events as the per-task operations.
 */
class ClaimCompleteBatchTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final Duration LEASE = Duration.ofMinutes(1);

  private Ledger ledger;

  @BeforeEach
  void open() {
    ledger = Ledger.open(PG.dataSource());
  }

  @Test
  void claim_tasks_returns_each_row_as_the_claim_left_it_and_logs_the_claims_in_claim_order() {
    List<String> ids = new ArrayList<>();
    for (int p : new int[] {1, 5, 3, 5, 0}) {
      ids.add(
          ledger.fileAndAdmit(TaskSpec.builder("ct-claim", "p" + p).priority(p).body("b").build()));
    }
    List<ClaimedTask> claimed =
        ledger.claimTasks("ct-claim", "w1", LEASE, List.of(), Label.PUBLIC, 3);
    // priority 5 (filed second, then fourth), then 3
    assertThat(claimed.stream().map(c -> c.task().id()))
        .containsExactly(ids.get(1), ids.get(3), ids.get(2));
    long lastSeq = -1;
    for (ClaimedTask c : claimed) {
      Task now = ledger.get(c.task().id());
      assertThat(c.task()).isEqualTo(now);
      assertThat(now.status()).isEqualTo(Status.CLAIMED);
      assertThat(now.holder()).isEqualTo("w1");
      assertThat(now.attempts()).isEqualTo(1);
      assertThat(c.lease()).isEqualTo(new Lease(now.id(), "w1", 1, now.leaseUntil()));
      List<LoggedEvent> history = ledger.history(now.id());
      assertThat(history.stream().map(LoggedEvent::kind))
          .containsExactly("created", "admitted", "claimed");
      LoggedEvent claim = history.get(2);
      assertThat(claim.payload())
          .isEqualTo(
              "{\"holder\":\"w1\",\"until\":\""
                  + dev.ledger.codegen.convert.Rfc3339.format(now.leaseUntil())
                  + "\"}");
      assertThat(claim.seq()).isGreaterThan(lastSeq);
      lastSeq = claim.seq();
    }
    // the rest, then nothing: a claim short of its max with the window not full asks once
    assertThat(ledger.claimTasks("ct-claim", "w2", LEASE, List.of(), Label.PUBLIC, 10))
        .extracting(c -> c.task().id())
        .containsExactly(ids.get(0), ids.get(4));
    assertThat(ledger.claimTasks("ct-claim", "w2", LEASE, List.of(), Label.PUBLIC, 10)).isEmpty();
    assertThat(ledger.claimTasks("ct-unknown-domain", "w2", LEASE, List.of(), Label.PUBLIC, 10))
        .isEmpty();
  }

  @Test
  void
      complete_all_logs_in_the_given_order_and_refuses_duplicates_other_domains_and_stale_leases() {
    for (int i = 0; i < 4; i++) {
      ledger.fileAndAdmit(TaskSpec.builder("ct-complete", "t" + i).build());
    }
    String elsewhere = ledger.fileAndAdmit(TaskSpec.builder("ct-other", "x").build());
    List<Lease> leases = ledger.claimBatch("ct-complete", "w1", LEASE, List.of(), Label.PUBLIC, 4);
    Lease other = ledger.claimBatch("ct-other", "w1", LEASE, List.of(), Label.PUBLIC, 1).get(0);
    assertThat(other.taskId()).isEqualTo(elsewhere);
    // the third task's lease goes stale: released, then claimed again by another holder
    ledger.release(leases.get(2));
    Lease again = ledger.claimBatch("ct-complete", "w2", LEASE, List.of(), Label.PUBLIC, 1).get(0);
    assertThat(again.taskId()).isEqualTo(leases.get(2).taskId());
    assertThat(again.attempt()).isEqualTo(2);

    List<Completion> batch =
        List.of(
            new Completion(leases.get(3), "fourth first"),
            new Completion(leases.get(0), null),
            new Completion(leases.get(2), "stale"),
            new Completion(leases.get(3), "twice"),
            new Completion(other, "wrong domain"),
            new Completion(leases.get(1), "last"));
    List<Lease> lost = ledger.completeAll("ct-complete", batch);
    assertThat(lost).containsExactlyInAnyOrder(leases.get(2), leases.get(3), other);

    Task fourth = ledger.get(leases.get(3).taskId());
    assertThat(fourth.status()).isEqualTo(Status.COMPLETED);
    assertThat(fourth.handoff()).isEqualTo("fourth first");
    assertThat(fourth.leaseUntil()).isNull();
    assertThat(ledger.get(leases.get(0).taskId()).handoff()).isNull();
    assertThat(ledger.get(leases.get(1).taskId()).handoff()).isEqualTo("last");
    // the stale lease wrote nothing: the task is still w2's
    Task third = ledger.get(leases.get(2).taskId());
    assertThat(third.status()).isEqualTo(Status.CLAIMED);
    assertThat(third.holder()).isEqualTo("w2");
    assertThat(ledger.history(third.id()).stream().map(LoggedEvent::kind))
        .containsExactly("created", "admitted", "claimed", "released", "claimed");
    assertThat(ledger.get(elsewhere).status()).isEqualTo(Status.CLAIMED);
    // one completed event each, numbered in the order given
    long a = completedSeq(leases.get(3));
    long b = completedSeq(leases.get(0));
    long c = completedSeq(leases.get(1));
    assertThat(a).isLessThan(b);
    assertThat(b).isLessThan(c);
    assertThat(ledger.history(fourth.id()).get(3).payload())
        .isEqualTo("{\"handoff\":\"fourth first\"}");
    // and again: every lease is now stale, nothing is written
    assertThat(ledger.completeAll("ct-complete", List.of(new Completion(leases.get(0), "again"))))
        .containsExactly(leases.get(0));
    assertThat(ledger.history(leases.get(0).taskId())).hasSize(4);
  }

  @Test
  void complete_all_of_a_dependency_completes_its_route_and_unblocks_its_dependent() {
    String dep = ledger.fileAndAdmit(TaskSpec.builder("ct-deps", "dependency").build());
    String other = ledger.fileAndAdmit(TaskSpec.builder("ct-deps", "unrelated").build());
    String dependent =
        ledger.fileAndAdmit(
            TaskSpec.builder("ct-deps-b", "dependent").dependsOn(List.of(dep)).build());
    List<Lease> leases = ledger.claimBatch("ct-deps", "w", LEASE, List.of(), Label.PUBLIC, 2);
    assertThat(leases).hasSize(2);
    assertThat(ledger.claimNext("ct-deps-b", "w", LEASE, List.of(), Label.PUBLIC)).isEmpty();

    assertThat(
            ledger.completeAll(
                "ct-deps",
                List.of(new Completion(leases.get(1), null), new Completion(leases.get(0), null))))
        .isEmpty();

    assertThat(ledger.get(dep).status()).isEqualTo(Status.COMPLETED);
    assertThat(ledger.get(other).status()).isEqualTo(Status.COMPLETED);
    assertThat(ledger.claimNext("ct-deps-b", "w", LEASE, List.of(), Label.PUBLIC))
        .map(Lease::taskId)
        .contains(dependent);
  }

  @Test
  void one_sql_update_of_many_rows_keeps_routes_and_dependents_right_both_ways() throws Exception {
    List<String> deps = new ArrayList<>();
    List<String> dependents = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      deps.add(ledger.fileAndAdmit(TaskSpec.builder("ct-sql", "dep " + i).build()));
      dependents.add(
          ledger.fileAndAdmit(
              TaskSpec.builder("ct-sql-b", "dependent " + i)
                  .dependsOn(List.of(deps.get(i)))
                  .build()));
    }
    String schema = dev.ledger.schema.DomainSchemas.schemaName("ct-sql");
    // an operator completes all three in one statement, as no ledger call does
    try (java.sql.Connection c = PG.dataSource().getConnection();
        java.sql.Statement st = c.createStatement()) {
      assertThat(
              st.executeUpdate(
                  "UPDATE \""
                      + schema
                      + "\".tasks SET status = 'completed' WHERE status = 'admitted'"))
          .isEqualTo(3);
    }
    assertThat(routesCompleted(deps)).containsExactly(true, true, true);
    assertThat(claimable("ct-sql-b")).containsExactlyInAnyOrderElementsOf(dependents);
    // and takes two of them back out of completed in one statement, leaving the third
    try (java.sql.Connection c = PG.dataSource().getConnection();
        java.sql.PreparedStatement st =
            c.prepareStatement(
                "UPDATE \""
                    + schema
                    + "\".tasks SET status = 'admitted' WHERE id = ANY (?) OR id = ?")) {
      st.setArray(1, c.createArrayOf("text", new Object[] {deps.get(0), deps.get(1)}));
      st.setString(2, "no such task");
      assertThat(st.executeUpdate()).isEqualTo(2);
    }
    assertThat(routesCompleted(deps)).containsExactly(false, false, true);
    assertThat(claimable("ct-sql-b")).containsExactly(dependents.get(2));
  }

  @Test
  void one_update_of_many_routes_recomputes_every_dependent_in_every_domain_once()
      throws Exception {
    String d0 = ledger.fileAndAdmit(TaskSpec.builder("rt-a", "dependency 0").build());
    String d1 = ledger.fileAndAdmit(TaskSpec.builder("rt-a", "dependency 1").build());
    String both =
        ledger.fileAndAdmit(
            TaskSpec.builder("rt-b", "needs both").dependsOn(List.of(d0, d1)).build());
    String first =
        ledger.fileAndAdmit(
            TaskSpec.builder("rt-c", "needs the first").dependsOn(List.of(d0)).build());
    assertThat(claimable("rt-b")).isEmpty();
    assertThat(claimable("rt-c")).isEmpty();
    // directory V6: one statement over the routes, as an operator (or another stack) may write it
    try (java.sql.Connection c = PG.dataSource().getConnection();
        java.sql.PreparedStatement st =
            c.prepareStatement(
                "UPDATE public.ledger_tasks SET completed = true WHERE id = ANY (?)")) {
      st.setArray(1, c.createArrayOf("text", new Object[] {d0, d1}));
      assertThat(st.executeUpdate()).isEqualTo(2);
    }
    assertThat(claimable("rt-b")).containsExactly(both);
    assertThat(claimable("rt-c")).containsExactly(first);
    // a route whose id changes: the old id is gone, so its dependents wait again
    try (java.sql.Connection c = PG.dataSource().getConnection();
        java.sql.PreparedStatement st =
            c.prepareStatement("UPDATE public.ledger_tasks SET id = id || '-moved' WHERE id = ?")) {
      st.setString(1, d1);
      assertThat(st.executeUpdate()).isEqualTo(1);
    }
    assertThat(claimable("rt-b")).isEmpty();
    assertThat(blocked("rt-b", both)).isTrue();
    assertThat(claimable("rt-c")).containsExactly(first);
    assertThat(blocked("rt-c", first)).isFalse();
  }

  @Test
  void two_dependencies_completed_in_concurrent_transactions_both_count_for_their_dependent()
      throws Exception {
    java.util.concurrent.ExecutorService second =
        java.util.concurrent.Executors.newSingleThreadExecutor();
    try {
      for (int i = 0; i < 4; i++) {
        String a = ledger.fileAndAdmit(TaskSpec.builder("race-a", "a " + i).build());
        String b = ledger.fileAndAdmit(TaskSpec.builder("race-b", "b " + i).build());
        String x =
            ledger.fileAndAdmit(
                TaskSpec.builder("race-x", "x " + i).dependsOn(List.of(a, b)).build());
        Lease la = ledger.claimBatch("race-a", "w", LEASE, List.of(), Label.PUBLIC, 1).get(0);
        Lease lb = ledger.claimBatch("race-b", "w", LEASE, List.of(), Label.PUBLIC, 1).get(0);
        // half the rounds complete b first
        Lease first = i % 2 == 0 ? la : lb;
        Lease then = i % 2 == 0 ? lb : la;
        try (java.sql.Connection c1 = PG.dataSource().getConnection();
            java.sql.Connection c2 = PG.dataSource().getConnection()) {
          c1.setAutoCommit(false);
          c2.setAutoCommit(false);
          // the first completion's route trigger sees the other dependency open, and holds the
          // dependent's row lock until it commits
          ledger.in(c1).complete(first, null);
          assertThat(blocked("race-x", x)).isTrue();
          java.util.concurrent.Future<?> other =
              second.submit(
                  () -> {
                    ledger.in(c2).complete(then, null);
                    return null;
                  });
          // the second waits for that lock: it must not read the flags before the first commits
          Thread.sleep(300);
          assertThat(other).isNotDone();
          c1.commit();
          other.get(30, java.util.concurrent.TimeUnit.SECONDS);
          c2.commit();
        }
        assertThat(blocked("race-x", x)).as("round %d", i).isFalse();
        assertThat(claimable("race-x")).containsExactly(x);
        ledger.complete(
            ledger.claimBatch("race-x", "w", LEASE, List.of(), Label.PUBLIC, 1).get(0), null);
      }
    } finally {
      second.shutdownNow();
    }
  }

  private static boolean blocked(String domain, String id) throws Exception {
    try (java.sql.Connection c = PG.dataSource().getConnection();
        java.sql.PreparedStatement st =
            c.prepareStatement(
                "SELECT blocked FROM \""
                    + dev.ledger.schema.DomainSchemas.schemaName(domain)
                    + "\".tasks WHERE id = ?")) {
      st.setString(1, id);
      try (java.sql.ResultSet rs = st.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getBoolean(1);
      }
    }
  }

  private List<Boolean> routesCompleted(List<String> ids) throws Exception {
    List<Boolean> out = new ArrayList<>();
    try (java.sql.Connection c = PG.dataSource().getConnection();
        java.sql.PreparedStatement st =
            c.prepareStatement("SELECT completed FROM public.ledger_tasks WHERE id = ?")) {
      for (String id : ids) {
        st.setString(1, id);
        try (java.sql.ResultSet rs = st.executeQuery()) {
          assertThat(rs.next()).isTrue();
          out.add(rs.getBoolean(1));
        }
      }
    }
    return out;
  }

  /** Every task a claimer may take now, claimed and released again. */
  private List<String> claimable(String domain) {
    List<Lease> leases = ledger.claimBatch(domain, "probe", LEASE, List.of(), Label.PUBLIC, 100);
    leases.forEach(ledger::release);
    return leases.stream().map(Lease::taskId).toList();
  }

  private long completedSeq(Lease l) {
    return ledger.history(l.taskId()).stream()
        .filter(e -> e.kind().equals("completed"))
        .mapToLong(LoggedEvent::seq)
        .reduce(
            (x, y) -> {
              throw new AssertionError("two completed events of " + l.taskId());
            })
        .orElseThrow();
  }
}

package dev.ledger.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.ClaimedTask;
import dev.ledger.Claimer;
import dev.ledger.CompletedBatch;
import dev.ledger.Completion;
import dev.ledger.FailureRecord;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.Pickup;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The worker runtime's port ({@link Ledger#worker()}): each operation does through the port what
 * its deprecated method on the facade does (which delegates to it), and a transaction view's port
 * runs in the caller's transaction. Each test uses a domain of its own.
 */
@SuppressWarnings("deprecation") // compares the port with the facade's deprecated methods
class WorkerPortTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static Ledger ledger;

  @BeforeAll
  static void open() {
    ledger = Ledger.open(PG.dataSource());
  }

  private static List<String> fileAdmitted(String domain, int n) {
    List<TaskSpec> specs = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      specs.add(TaskSpec.builder(domain, domain + " #" + i).priority(100 - i).build());
    }
    return ledger.fileAll(specs);
  }

  @Test
  void the_port_is_one_per_view() {
    assertThat(ledger.worker()).isSameAs(ledger.worker());
  }

  @Test
  void claims_and_batch_completions_through_the_port_and_the_facade_agree() {
    String domain = "port-claims";
    List<String> ids = fileAdmitted(domain, 6);
    Claimer me = Claimer.of("port").lease(Duration.ofMinutes(1));

    List<ClaimedTask> viaPort = ledger.worker().claimTasks(domain, me, 2);
    List<ClaimedTask> viaFacade =
        ledger.claimTasks(
            domain, "facade", Duration.ofMinutes(1), List.of(), dev.ledger.Label.PUBLIC, 2);
    assertThat(viaPort).extracting(c -> c.task().id()).containsExactly(ids.get(0), ids.get(1));
    assertThat(viaFacade).extracting(c -> c.task().id()).containsExactly(ids.get(2), ids.get(3));
    assertThat(viaPort)
        .allSatisfy(
            c -> {
              assertThat(c.task().status()).isEqualTo(Status.CLAIMED);
              assertThat(c.task().holder()).isEqualTo("port");
              assertThat(c.lease().attempt()).isEqualTo(1);
            });
    assertThat(viaFacade).allSatisfy(c -> assertThat(c.task().holder()).isEqualTo("facade"));

    // pickups: the same reads
    List<String> claimed = List.of(ids.get(0), ids.get(1), ids.get(2), ids.get(3));
    Map<String, Pickup> p1 = ledger.worker().pickups(domain, claimed);
    assertThat(p1).containsOnlyKeys(claimed).isEqualTo(ledger.pickups(domain, claimed));

    // completions: completeAll through the port, completeAvailable through the facade, and
    // the other way round; a completed lease is refused by completeAll either way
    List<Lease> refused =
        ledger.worker().completeAll(domain, List.of(new Completion(viaPort.get(0).lease(), "a")));
    assertThat(refused).isEmpty();
    assertThat(ledger.completeAll(domain, List.of(new Completion(viaPort.get(0).lease(), "a"))))
        .containsExactly(viaPort.get(0).lease());
    CompletedBatch b1 =
        ledger
            .worker()
            .completeAvailable(domain, List.of(new Completion(viaFacade.get(0).lease(), "b")));
    CompletedBatch b2 =
        ledger.completeAvailable(domain, List.of(new Completion(viaFacade.get(1).lease(), "c")));
    assertThat(b1.completed()).containsExactly(viaFacade.get(0).lease());
    assertThat(b2.completed()).containsExactly(viaFacade.get(1).lease());
    assertThat(List.of(ids.get(0), ids.get(2), ids.get(3)))
        .allSatisfy(id -> assertThat(ledger.get(id).status()).isEqualTo(Status.COMPLETED));
    assertThat(ledger.get(ids.get(1)).status()).isEqualTo(Status.CLAIMED);
  }

  @Test
  void failures_and_delayed_admissions_through_the_port_and_the_facade_agree() throws Exception {
    String domain = "port-fail";
    List<String> ids = fileAdmitted(domain, 2);
    List<Lease> leases = ledger.claimBatch(domain, Claimer.of("w").lease(Duration.ofMinutes(1)), 2);
    assertThat(leases).hasSize(2);

    FailureRecord viaPort = ledger.worker().fail(leases.get(0), "boom", 3, Duration.ofMillis(200));
    FailureRecord viaFacade = ledger.fail(leases.get(1), "boom", 3, Duration.ofMillis(200));
    for (FailureRecord r : List.of(viaPort, viaFacade)) {
      assertThat(r.attempt()).isEqualTo(1);
      assertThat(r.maxAttempts()).isEqualTo(3);
      assertThat(r.deadLetter()).isFalse();
      assertThat(r.retryId()).isNotNull();
      assertThat(ledger.get(r.retryId()).status()).isEqualTo(Status.PROPOSED);
    }
    assertThat(viaPort.taskId()).isEqualTo(ids.get(0));
    assertThat(viaFacade.taskId()).isEqualTo(ids.get(1));

    Instant due = ledger.worker().nextDue(domain).orElseThrow();
    assertThat(ledger.nextDue(domain)).contains(due);
    while (Instant.now().isBefore(due.plusMillis(50))) {
      Thread.sleep(20);
    }
    List<String> first = ledger.worker().admitDue(domain, 1);
    List<String> second = ledger.admitDue(domain, 1);
    assertThat(first).hasSize(1);
    assertThat(second).hasSize(1);
    assertThat(List.of(first.get(0), second.get(0)))
        .containsExactlyInAnyOrder(viaPort.retryId(), viaFacade.retryId());
    assertThat(ledger.worker().nextDue(domain)).isEmpty();
    assertThat(ledger.worker().admitDue(domain, 10)).isEmpty();
  }

  @Test
  void a_transactions_port_runs_in_the_callers_transaction() throws Exception {
    String domain = "port-tx";
    List<String> ids = fileAdmitted(domain, 1);
    Claimer me = Claimer.of("tx").lease(Duration.ofMinutes(1));
    try (Connection c = PG.dataSource().getConnection()) {
      c.setAutoCommit(false);
      List<ClaimedTask> claimed = ledger.in(c).worker().claimTasks(domain, me, 1);
      assertThat(claimed).extracting(t -> t.task().id()).containsExactly(ids.get(0));
      // not visible outside before the commit, and gone with the rollback
      assertThat(ledger.get(ids.get(0)).status()).isEqualTo(Status.ADMITTED);
      c.rollback();
      assertThat(ledger.get(ids.get(0)).status()).isEqualTo(Status.ADMITTED);

      List<ClaimedTask> again = ledger.in(c).worker().claimTasks(domain, me, 1);
      assertThat(
              ledger
                  .in(c)
                  .worker()
                  .completeAll(domain, List.of(new Completion(again.get(0).lease(), "ok"))))
          .isEmpty();
      c.commit();
    }
    assertThat(ledger.get(ids.get(0)).status()).isEqualTo(Status.COMPLETED);
  }

  @Test
  void replay_and_the_deprecated_rebuild_replay_the_same_events() {
    fileAdmitted("port-replay", 3);
    long replayed = ledger.replay();
    assertThat(replayed).isPositive().isEqualTo(ledger.rebuild()).isEqualTo(ledger.eventCount());
  }
}

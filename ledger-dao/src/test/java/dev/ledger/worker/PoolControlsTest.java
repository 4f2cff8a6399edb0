package dev.ledger.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.InvalidInputException;
import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Worker pools under queue controls: a pause stops a running pool's claims at once (no claimed
 * event after the pause committed), the pool backs off without a loop while paused, and a resume's
 * wake-up has it claiming within a second (the poll is 30 s, so only the notification can); a
 * handler past the pool's handler timeout is interrupted, its attempts fail as timed out, are
 * retried, and the task ends as a dead letter at its last attempt.
 */
class PoolControlsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static Ledger ledger;

  @BeforeAll
  static void open() {
    ledger = Ledger.open(PG.dataSource());
  }

  @Test
  void a_pause_stops_a_running_pools_claims_and_a_resume_wakes_it_within_a_second()
      throws Exception {
    String domain = "pausing";
    for (int i = 0; i < 400; i++) {
      ledger.fileAndAdmit(TaskSpec.builder(domain, "task " + i).build());
    }
    AtomicInteger handled = new AtomicInteger();
    AtomicInteger pausedClaims = new AtomicInteger();
    WorkerMetrics counting =
        new WorkerMetrics() {
          @Override
          public void heldBack(String d, String control) {
            if ("paused".equals(control)) {
              pausedClaims.incrementAndGet();
            }
          }
        };
    try (WorkerPool pool =
        WorkerPool.builder(ledger)
            .dataSource(PG.dataSource())
            .concurrency(4)
            .pollInterval(Duration.ofSeconds(30))
            .metrics(counting)
            .domain(
                domain,
                (task, ctx) -> {
                  handled.incrementAndGet();
                  Thread.sleep(5);
                  return Outcome.done();
                })
            .start()) {
      awaitAtLeast(handled, 20, Duration.ofSeconds(60));

      ledger.pause(domain);
      Instant paused = Instant.now(); // after the pause's commit

      Thread.sleep(2500);
      List<Instant> claims = claimTimes(domain);
      assertThat(claims).allSatisfy(at -> assertThat(at).isBefore(paused));
      // held back, the pool claims again at its 1 s recheck, not in a loop
      assertThat(pausedClaims.get()).isBetween(1, 5);
      int before = claims.size();

      Instant resumed = Instant.now();
      ledger.resume(domain);
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      List<Instant> after = List.of();
      while (after.isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(20);
        after = claimTimes(domain).stream().filter(at -> at.isAfter(resumed)).toList();
      }
      assertThat(after).as("claims after the resume").isNotEmpty();
      assertThat(Duration.between(resumed, after.get(0))).isLessThan(Duration.ofSeconds(1));
      assertThat(claimTimes(domain).size()).isGreaterThan(before);
    }
  }

  @Test
  void a_hanging_handler_times_out_is_retried_and_dead_letters_at_its_max_attempts()
      throws Exception {
    String domain = "hanging";
    String id = ledger.fileAndAdmit(TaskSpec.builder(domain, "hangs").build());
    AtomicInteger interrupted = new AtomicInteger();
    try (WorkerPool pool =
        WorkerPool.builder(ledger)
            .concurrency(2)
            .pollInterval(Duration.ofMillis(50))
            .handlerTimeout(Duration.ofMillis(300))
            .retry(new RetryPolicy(3, Duration.ofMillis(50), Duration.ofMillis(100), 2.0, 0))
            .domain(
                domain,
                (task, ctx) -> {
                  try {
                    Thread.sleep(600_000);
                  } catch (InterruptedException e) {
                    interrupted.incrementAndGet();
                    throw e;
                  }
                  return Outcome.done();
                })
            .start()) {
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (ledger.deadLetters(domain).isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
    }
    List<Task> dead = ledger.deadLetters(domain);
    assertThat(dead).hasSize(1);
    assertThat(interrupted.get()).isEqualTo(3);
    List<Task> attempts = new ArrayList<>(ledger.list(domain, Status.INVALIDATED));
    assertThat(attempts).hasSize(3);
    assertThat(attempts)
        .allSatisfy(
            t ->
                assertThat(t.reason())
                    .contains("timed out after PT0.3S (the handler was interrupted)"));
    assertThat(attempts).extracting(Task::id).contains(id);
    assertThat(ledger.list(domain, Status.COMPLETED)).isEmpty();
  }

  @Test
  void a_bad_handler_timeout_is_refused_naming_the_field() {
    for (Duration bad : List.of(Duration.ofMillis(9), Duration.ofDays(2), Duration.ZERO)) {
      assertThatThrownBy(() -> WorkerPool.builder(ledger).handlerTimeout(bad))
          .isInstanceOf(InvalidInputException.class)
          .satisfies(
              e -> assertThat(((InvalidInputException) e).field()).isEqualTo("handler_timeout"));
    }
  }

  private static void awaitAtLeast(AtomicInteger n, int at, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (n.get() < at && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(n.get()).isGreaterThanOrEqualTo(at);
  }

  private static List<Instant> claimTimes(String domain) throws Exception {
    String schema =
        ledger.describeDomains().stream()
            .filter(d -> d.domain().equals(domain))
            .findFirst()
            .orElseThrow()
            .schema();
    List<Instant> out = new ArrayList<>();
    try (Connection c = PG.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "SELECT at FROM \"" + schema + "\".events WHERE kind = 'claimed' ORDER BY seq");
        ResultSet r = s.executeQuery()) {
      while (r.next()) {
        out.add(Instant.parse(r.getString(1)));
      }
    }
    return out;
  }
}

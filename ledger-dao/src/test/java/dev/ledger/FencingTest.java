package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.testing.DomainLog;
import dev.ledger.testing.FileBarrier;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.SettableClock;
import dev.ledger.testing.WorkerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fencing and crashes (issue 3, item 3): a lease that expired and was claimed again is refused for
 * every fenced operation, whether its holder stalled or was killed; the log keeps every event and
 * exactly one {@code completed}. Expiry is a step of a {@link SettableClock}, except in one test
 * that stalls for real.
 */
class FencingTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final Duration LEASE = Duration.ofSeconds(2);
  private static final List<String> NONE = List.of();

  @TempDir Path dir;

  private SettableClock clock;
  private Ledger ledger;

  @BeforeEach
  void open() {
    clock = new SettableClock(Instant.now().truncatedTo(ChronoUnit.MICROS));
    ledger = Ledger.open(PG.dataSource(), LedgerConfig.builder().clock(clock).build());
  }

  @Test
  void stale_lease_cannot_complete_a_reclaimed_task() {
    String t = admitted(ledger, "fencing");
    Lease a = claimNext(ledger, "fencing", "worker-a");
    assertThat(a.taskId()).isEqualTo(t);
    assertThat(a.attempt()).isEqualTo(1L);

    clock.advance(Duration.ofSeconds(3)); // A stalls 3 s; its 2 s lease runs out
    Lease b = claimNext(ledger, "fencing", "worker-b");
    assertThat(b.taskId()).isEqualTo(t);
    assertThat(b.attempt()).isEqualTo(2L);
    ledger.complete(b, "done by b");

    assertLeaseLost(() -> ledger.heartbeat(a, LEASE), a, "heartbeat");
    assertLeaseLost(() -> ledger.complete(a, "done by a"), a, "complete");
    assertLeaseLost(() -> ledger.release(a), a, "release");
    assertLeaseLost(() -> ledger.leaveHandoff(a, "note from a"), a, "leave a handoff on");

    assertThat(kinds(t)).containsExactly("created", "admitted", "claimed", "claimed", "completed");
    Task done = ledger.get(t);
    assertThat(done.status()).isEqualTo(Status.COMPLETED);
    assertThat(done.holder()).isEqualTo("worker-b");
    assertThat(done.attempts()).isEqualTo(2L);
    assertThat(done.handoff()).isEqualTo("done by b");
  }

  @Test
  void stale_lease_is_refused_while_the_new_holder_still_works() {
    String t = admitted(ledger, "fencing-open");
    Lease a = claimNext(ledger, "fencing-open", "worker-a");
    clock.advance(Duration.ofSeconds(3));
    Lease b = claimNext(ledger, "fencing-open", "worker-b");

    assertLeaseLost(() -> ledger.complete(a, "done by a"), a, "complete");
    assertLeaseLost(() -> ledger.heartbeat(a, LEASE), a, "heartbeat");
    assertLeaseLost(() -> ledger.release(a), a, "release");
    Task held = ledger.get(t);
    assertThat(held.status()).isEqualTo(Status.CLAIMED);
    assertThat(held.holder()).isEqualTo("worker-b");
    assertThat(held.leaseUntil()).isEqualTo(b.until());

    ledger.complete(b, null);
    assertThat(kinds(t)).containsExactly("created", "admitted", "claimed", "claimed", "completed");
  }

  @Test
  void a_stalled_worker_is_fenced_off_in_real_time() throws Exception {
    Ledger real = Ledger.open(PG.dataSource()); // the system clock
    String t = admitted(real, "fencing-real");
    Lease a = claimNext(real, "fencing-real", "worker-a");
    Instant claimedAt = Instant.now();

    CountDownLatch bDone = new CountDownLatch(1);
    CompletableFuture<List<Throwable>> worker =
        CompletableFuture.supplyAsync(
            () -> {
              sleepUntil(claimedAt.plusSeconds(3)); // A stalls 3 s
              await(bDone);
              Throwable heartbeat = caught(() -> real.heartbeat(a, LEASE));
              Throwable complete = caught(() -> real.complete(a, "done by a"));
              return java.util.Arrays.asList(heartbeat, complete);
            });

    // B polls until A's lease has expired by the clock (about 2 s), then claims and completes
    Lease b = null;
    Instant giveUp = Instant.now().plusSeconds(30);
    while (b == null && Instant.now().isBefore(giveUp)) {
      Optional<Lease> got = real.claimNext("fencing-real", "worker-b", LEASE, NONE, Label.PUBLIC);
      if (got.isPresent()) {
        b = got.get();
      } else {
        Thread.sleep(50);
      }
    }
    assertThat(b).as("B claimed the task after A's lease expired").isNotNull();
    assertThat(b.taskId()).isEqualTo(t);
    assertThat(b.attempt()).isEqualTo(2L);
    real.complete(b, "done by b");
    bDone.countDown();

    List<Throwable> refused = worker.get(30, TimeUnit.SECONDS);
    assertThat(refused)
        .allSatisfy(
            e ->
                assertThat(e)
                    .isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("worker-a (attempt 1) is no longer current"));
    assertThat(new DomainLog(PG.dataSource(), "fencing-real").countOf("completed"))
        .isEqualTo(Map.of(t, 1));
    assertThat(kinds(t)).containsExactly("created", "admitted", "claimed", "claimed", "completed");
  }

  @Test
  void fencing_is_by_attempt_so_a_holder_cannot_use_its_own_earlier_lease() {
    String t = admitted(ledger, "fencing-same");
    Lease first = claimNext(ledger, "fencing-same", "worker");
    clock.advance(Duration.ofSeconds(3));
    Lease second = claimNext(ledger, "fencing-same", "worker");
    assertThat(second.holder()).isEqualTo(first.holder());
    assertThat(second.attempt()).isEqualTo(2L);

    assertLeaseLost(() -> ledger.complete(first, "stale"), first, "complete");
    ledger.complete(second, "fresh");
    assertThat(ledger.get(t).handoff()).isEqualTo("fresh");
    assertThat(kinds(t)).containsExactly("created", "admitted", "claimed", "claimed", "completed");
  }

  @Test
  void a_live_lease_keeps_other_claimers_off_until_it_expires() {
    String t = admitted(ledger, "fencing-live");
    Lease a = claimNext(ledger, "fencing-live", "worker-a");

    clock.set(a.until().minus(1, ChronoUnit.MILLIS));
    assertThat(ledger.claimNext("fencing-live", "worker-b", LEASE, NONE, Label.PUBLIC)).isEmpty();
    assertThatThrownBy(() -> ledger.claim(t, "worker-b", LEASE, NONE, Label.PUBLIC))
        .isInstanceOf(WrongStateException.class)
        .hasMessageContaining("held by worker-a");
    Lease extended = ledger.heartbeat(a, LEASE);
    assertThat(extended.until()).isAfter(a.until().plusSeconds(1));
    assertThat(ledger.get(t).leaseUntil()).isEqualTo(extended.until());

    clock.set(a.until().plusSeconds(1)); // past the first expiry, within the extension
    assertThat(ledger.claimNext("fencing-live", "worker-b", LEASE, NONE, Label.PUBLIC)).isEmpty();
    ledger.complete(extended, null);
    assertThat(kinds(t))
        .containsExactly("created", "admitted", "claimed", "heartbeat", "completed");
  }

  @Test
  void an_expired_lease_nobody_claimed_again_is_still_the_current_one() {
    String t = admitted(ledger, "fencing-late");
    Lease a = claimNext(ledger, "fencing-late", "worker-a");
    clock.advance(Duration.ofSeconds(3));
    ledger.complete(a, "late but unchallenged");
    assertThat(ledger.get(t).status()).isEqualTo(Status.COMPLETED);
    assertThat(ledger.claimNext("fencing-late", "worker-b", LEASE, NONE, Label.PUBLIC)).isEmpty();
  }

  @Test
  void a_released_lease_cannot_complete_the_task() {
    String t = admitted(ledger, "fencing-released");
    Lease a = claimNext(ledger, "fencing-released", "worker-a");
    ledger.release(a);
    assertLeaseLost(() -> ledger.complete(a, null), a, "complete");
    assertThat(ledger.get(t).status()).isEqualTo(Status.ADMITTED);
    Lease again = claimNext(ledger, "fencing-released", "worker-a");
    assertThat(again.attempt()).isEqualTo(2L);
    assertLeaseLost(() -> ledger.complete(a, null), a, "complete");
    ledger.complete(again, null);
    assertThat(kinds(t))
        .containsExactly("created", "admitted", "claimed", "released", "claimed", "completed");
  }

  @Test
  void a_worker_killed_while_holding_a_lease_loses_no_event() throws Exception {
    String domain = "crash";
    String t = admitted(ledger, domain);
    Path out = dir.resolve("doomed.lease");
    Lease dead;
    Instant until;
    try (WorkerProcess doomed =
        WorkerProcess.start(
            dir,
            "doomed",
            "hold",
            PG.jdbcUrl(),
            domain,
            "doomed",
            Long.toString(LEASE.toMillis()),
            out.toString())) {
      FileBarrier.await(
          () -> {
            if (!doomed.process().isAlive()) {
              throw new AssertionError(doomed.describe());
            }
            return Files.exists(out);
          },
          Duration.ofSeconds(90),
          "the worker's claim");
      String[] written = Files.readString(out).trim().split(" ");
      dead = Lease.parse(written[0]);
      until = Instant.parse(written[1]);
      assertThat(doomed.kill()).as("killed by SIGKILL").isEqualTo(128 + 9);
    }
    assertThat(dead.taskId()).isEqualTo(t);
    assertThat(dead.attempt()).isEqualTo(1L);
    assertThat(kinds(t)).containsExactly("created", "admitted", "claimed");

    // its lease outlives it
    clock.set(until.minus(1, ChronoUnit.MICROS));
    assertThat(ledger.claimNext(domain, "rescuer", LEASE, NONE, Label.PUBLIC)).isEmpty();

    clock.set(until.plus(1, ChronoUnit.MILLIS));
    Lease rescue = claimNext(ledger, domain, "rescuer");
    assertThat(rescue.taskId()).isEqualTo(t);
    assertThat(rescue.attempt()).isEqualTo(2L);
    ledger.complete(rescue, "rescued");
    assertLeaseLost(() -> ledger.complete(dead, "from beyond"), dead, "complete");

    List<LoggedEvent> history = ledger.history(t);
    assertThat(history.stream().map(LoggedEvent::kind))
        .containsExactly("created", "admitted", "claimed", "claimed", "completed");
    ObjectMapper json = new ObjectMapper();
    List<String> holders =
        history.stream()
            .filter(e -> e.kind().equals("claimed"))
            .map(e -> readHolder(json, e.payload()))
            .collect(Collectors.toList());
    assertThat(holders).containsExactly("doomed", "rescuer");
    assertThat(history.get(2).payload()).contains(until.toString().substring(0, 19));
  }

  // -------------------------------------------------------------------------------------------

  private static String admitted(Ledger ledger, String domain) {
    String id = ledger.file(TaskSpec.builder(domain, "the task").build());
    ledger.admit(id);
    return id;
  }

  private static Lease claimNext(Ledger ledger, String domain, String holder) {
    return ledger
        .claimNext(domain, holder, LEASE, NONE, Label.PUBLIC)
        .orElseThrow(() -> new AssertionError(holder + " found nothing to claim in " + domain));
  }

  private List<String> kinds(String id) {
    return ledger.history(id).stream().map(LoggedEvent::kind).collect(Collectors.toList());
  }

  private static void assertLeaseLost(Runnable operation, Lease stale, String verb) {
    assertThatThrownBy(operation::run)
        .isInstanceOfSatisfying(
            LeaseLostException.class, e -> assertThat(e.lease()).isEqualTo(stale))
        .hasMessageContaining("cannot " + verb + " task '" + stale.taskId() + "'")
        .hasMessageContaining(
            stale.holder() + " (attempt " + stale.attempt() + ") is no longer current");
  }

  private static Throwable caught(Runnable r) {
    try {
      r.run();
      return null;
    } catch (RuntimeException e) {
      return e;
    }
  }

  private static String readHolder(ObjectMapper json, String payload) {
    try {
      return json.readTree(payload).get("holder").asText();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static void sleepUntil(Instant when) {
    long ms = Duration.between(Instant.now(), when).toMillis();
    if (ms > 0) {
      try {
        Thread.sleep(ms);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      if (!latch.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("B did not finish");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}

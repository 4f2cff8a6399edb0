package dev.ledger.feed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.InvalidInputException;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.TaskSpec;
import dev.ledger.retention.PurgeReport;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.SettableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The retention horizon: a purge removes whole old terminal tasks, so the removed events are not a
 * prefix of the log (here seqs 1, 2, 5 and 6 go, 3 and 4 stay). A consumer is refused with a typed
 * error exactly when an event it had not received was removed: not when it had received them all,
 * not when it started after them, not when they were in its batch in flight; and it goes on after
 * accepting the loss.
 */
class FeedRetentionTest {

  @RegisterExtension static final PostgresExtension PG = PostgresExtension.ownCluster();

  private static final String D = "horizon";

  private static Feed reader(Ledger ledger, String consumer, int batch, boolean fromStart) {
    Feed f =
        ledger.feed(
            FeedSpec.builder(consumer, D)
                .batchSize(batch)
                .holder(consumer + "-reader")
                .fromStart(fromStart)
                .build());
    assertThat(f.acquire()).isTrue();
    return f;
  }

  /** Polls and commits until {@code n} events were delivered; returns them in order. */
  private static List<FeedEvent> deliver(Feed feed, int n) throws InterruptedException {
    List<FeedEvent> seqs = new java.util.ArrayList<>();
    long end = System.nanoTime() + Duration.ofMinutes(5).toNanos();
    while (seqs.size() < n && System.nanoTime() < end) {
      FeedBatch b = feed.poll();
      if (b.isEmpty()) {
        Thread.sleep(20); // the cluster's oldest transaction holds the watermark back a moment
        continue;
      }
      seqs.addAll(b.events());
      feed.commit(b);
    }
    return seqs;
  }

  @Test
  void onlyAConsumerThatHadNotReceivedARemovedEventIsRefused() throws Exception {
    SettableClock clock = new SettableClock(Instant.parse("2026-03-01T09:00:00Z"));
    Ledger ledger = Ledger.open(PG.dataSource(), LedgerConfig.builder().clock(clock).build());
    ledger.provision(D);
    Feed behind = reader(ledger, "behind", 100, true); // receives nothing before the purge
    Feed mid = reader(ledger, "mid", 1, true); // receives seqs 1-4
    Feed caughtUp = reader(ledger, "caught-up", 100, true); // receives 1-6
    Feed inFlight = reader(ledger, "in-flight", 1, true); // 1-5, then 6 in flight at the purge

    String old1 = ledger.file(TaskSpec.builder(D, "old one").build()); // seq 1, 2
    ledger.invalidate(old1, "done with", null);
    String kept = ledger.fileAndAdmit(TaskSpec.builder(D, "still open").build()); // seq 3, 4
    String old2 = ledger.file(TaskSpec.builder(D, "old two").build()); // seq 5, 6
    ledger.invalidate(old2, "done with", null);
    Feed late = reader(ledger, "late", 100, false); // starts after them: never to receive them

    assertThat(deliver(mid, 4)).extracting(FeedEvent::seq).containsExactly(1L, 2L, 3L, 4L);
    assertThat(deliver(caughtUp, 6))
        .extracting(FeedEvent::seq)
        .containsExactly(1L, 2L, 3L, 4L, 5L, 6L);
    assertThat(caughtUp.poll().isEmpty()).isTrue();
    assertThat(deliver(inFlight, 5)).extracting(FeedEvent::seq).containsExactly(1L, 2L, 3L, 4L, 5L);
    FeedBatch flying = FeedLeaseTest.pollFor(inFlight, 1);
    assertThat(flying.events().get(0).seq()).isEqualTo(6);

    clock.advance(Duration.ofHours(2));
    ledger.retention().set(D, Duration.ofHours(1));
    PurgeReport report = ledger.retention().purge(D, 100, p -> {});
    assertThat(report.domains().get(0).tasksRemoved()).isEqualTo(2);
    assertThat(report.domains().get(0).eventsRemoved()).isEqualTo(4);
    assertThat(ledger.retention().get(D).orElseThrow().removedThroughSeq()).isEqualTo(6);

    // received them all, or was never to receive them: not refused
    assertThat(caughtUp.poll().isEmpty()).isTrue();
    assertThat(late.poll().isEmpty()).isTrue();
    // its batch was read before the purge: its checkpoint covers the removed events
    inFlight.commit(flying);
    assertThat(inFlight.poll().isEmpty()).isTrue();

    // had received 1-4, not 5 and 6: refused, and stays refused
    for (int i = 0; i < 2; i++) {
      assertThatThrownBy(mid::poll)
          .isInstanceOfSatisfying(
              FeedBehindRetentionException.class,
              e -> {
                assertThat(e.consumer()).isEqualTo("mid");
                assertThat(e.domain()).isEqualTo(D);
                // 5 and 6 are in its window or after it, as the cluster's oldest transaction
                // placed the window's end when it was opened
                assertThat(List.of(e.missedSeq(), e.missedLater()))
                    .isIn(List.of(6L, 0L), List.of(5L, 1L), List.of(0L, 2L));
              });
    }
    // had received nothing: the four removed events were all beyond its (empty) window
    assertThatThrownBy(behind::poll)
        .isInstanceOfSatisfying(
            FeedBehindRetentionException.class,
            e -> {
              assertThat(e.missedSeq()).isZero();
              assertThat(e.missedLater()).isEqualTo(4);
            });

    // a second purge that removes nothing changes nothing
    ledger.retention().purge(D, 100, p -> {});
    assertThat(caughtUp.poll().isEmpty()).isTrue();

    String next = ledger.fileAndAdmit(TaskSpec.builder(D, "after the purge").build());
    assertThat(mid.acceptLoss(D)).isTrue();
    assertThat(deliver(mid, 2)).extracting(FeedEvent::taskId).containsExactly(next, next);
    assertThat(behind.acceptLoss(D)).isTrue();
    assertThat(deliver(behind, 4))
        .extracting(FeedEvent::taskId)
        .containsExactly(kept, kept, next, next);
    assertThat(caughtUp.acceptLoss(D)).as("nothing to accept").isFalse();
    assertThatThrownBy(() -> ledger.feed(FeedSpec.builder("x", D).build()).acceptLoss(D))
        .isInstanceOfSatisfying(
            InvalidInputException.class, e -> assertThat(e.field()).isEqualTo("domain"));
    for (Feed f : List.of(behind, mid, caughtUp, inFlight, late)) {
      f.close();
    }
  }

  @Test
  void aRunnerThatAcceptsLossGoesOnPastThePurgedEventsOneThatDoesNotDeliversNothing()
      throws Exception {
    String domain = "horizon-runner";
    SettableClock clock = new SettableClock(Instant.parse("2026-03-01T09:00:00Z"));
    Ledger ledger = Ledger.open(PG.dataSource(), LedgerConfig.builder().clock(clock).build());
    ledger.provision(domain);
    for (String consumer : List.of("refusing", "accepting")) {
      try (Feed f = ledger.feed(FeedSpec.builder(consumer, domain).fromStart(true).build())) {
        assertThat(f.acquire()).isTrue(); // its checkpoint, before any event
      }
    }
    String old = ledger.file(TaskSpec.builder(domain, "old").build());
    ledger.invalidate(old, "done with", null);
    String kept = ledger.fileAndAdmit(TaskSpec.builder(domain, "kept").build());
    clock.advance(Duration.ofHours(2));
    ledger.retention().set(domain, Duration.ofHours(1));
    assertThat(ledger.retention().purge(domain, 100, p -> {}).domains().get(0).eventsRemoved())
        .isEqualTo(2);

    List<FeedEvent> refused = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<FeedEvent> accepted = new java.util.concurrent.CopyOnWriteArrayList<>();
    FeedRunner refusing =
        FeedRunner.builder(
                ledger,
                FeedSpec.builder("refusing", domain).build(),
                PG.dataSource(),
                (events, tx) -> refused.addAll(events))
            .pollInterval(Duration.ofMillis(50))
            .build();
    FeedRunner accepting =
        FeedRunner.builder(
                ledger,
                FeedSpec.builder("accepting", domain).build(),
                PG.dataSource(),
                (events, tx) -> accepted.addAll(events))
            .pollInterval(Duration.ofMillis(50))
            .acceptLoss(true)
            .build();
    try {
      refusing.start();
      accepting.start();
      long end = System.nanoTime() + Duration.ofMinutes(5).toNanos();
      while ((accepted.size() < 2 || refusing.failures() < 2) && System.nanoTime() < end) {
        Thread.sleep(20);
      }
      assertThat(accepted).extracting(FeedEvent::taskId).containsExactly(kept, kept);
      assertThat(accepting.lossesAccepted()).isEqualTo(1);
      assertThat(accepting.failures()).isZero();
      assertThat(refusing.failures()).isGreaterThanOrEqualTo(2);
      assertThat(refused).isEmpty();
      assertThat(refusing.delivered()).isZero();
    } finally {
      refusing.close();
      accepting.close();
    }
  }
}

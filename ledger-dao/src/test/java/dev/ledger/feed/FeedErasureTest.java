package dev.ledger.feed;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Ledger;
import dev.ledger.Redaction;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The {@code erased} signal (docs/feed.md, "Erasure"): a task scrubbed after a consumer may have
 * received its events reaches that consumer as a {@link FeedErasure}, through {@link Feed#poll()}
 * and a {@link FeedRunner}; a consumer that had received none of them gets the redacted events and
 * no signal.
 */
class FeedErasureTest {

  @RegisterExtension static final PostgresExtension PG = PostgresExtension.ownCluster();

  private static FeedSpec spec(String consumer, String domain) {
    return FeedSpec.builder(consumer, domain)
        .fromStart(true)
        .lease(Duration.ofSeconds(30))
        .holder(consumer + "-reader")
        .build();
  }

  /** Polls, committing, until {@code n} events were read; returns them. */
  private static List<FeedEvent> readEvents(Feed feed, int n) throws InterruptedException {
    List<FeedEvent> all = new ArrayList<>();
    long end = System.nanoTime() + Duration.ofMinutes(5).toNanos();
    while (all.size() < n && System.nanoTime() < end) {
      FeedBatch b = feed.poll();
      assertThat(b.erasures()).isEmpty();
      all.addAll(b.events());
      feed.commit(b);
      if (b.isEmpty()) {
        Thread.sleep(20);
      }
    }
    assertThat(all).hasSize(n);
    return all;
  }

  private static List<Long> seqs(List<FeedEvent> events, String taskId) {
    return events.stream().filter(e -> e.taskId().equals(taskId)).map(FeedEvent::seq).toList();
  }

  @Test
  void aTaskScrubbedAfterDeliveryReachesTheConsumersThatMayHoldItsEventsAsAnErasedItem()
      throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    String domain = "erased-signal";
    String done =
        ledger.fileAndAdmit(
            TaskSpec.builder(domain, "Call Ada Lovelace").origin("crm-ada", "e1").build());
    ledger.invalidate(done, "called Ada", null);
    try (Feed mirror = ledger.feed(spec("mirror", domain));
        Feed inFlight = ledger.feed(spec("in-flight", domain));
        Feed late = ledger.feed(spec("late", domain))) {
      assertThat(mirror.acquire()).isTrue();
      assertThat(inFlight.acquire()).isTrue();
      assertThat(late.acquire()).isTrue();
      List<FeedEvent> delivered = readEvents(mirror, 3);
      assertThat(delivered)
          .extracting(FeedEvent::kind)
          .containsExactly("created", "admitted", "invalidated");
      assertThat(delivered.get(0).payload()).contains("Ada Lovelace");
      List<Long> adaSeqs = seqs(delivered, done);
      // read, not checkpointed, when the scrub runs: the batch in flight holds the text too
      FeedBatch flying = inFlight.poll();
      assertThat(flying.events()).isEqualTo(delivered);

      assertThat(ledger.scrubTasks(domain, "crm-ada", Redaction.ERASED)).isEqualTo(1);

      // a terminal task gets no new event: the signal is the erasure item, ids and seqs only
      FeedBatch signal = mirror.poll();
      assertThat(signal.events()).isEmpty();
      assertThat(signal.isEmpty()).isFalse();
      assertThat(signal.erasures()).hasSize(1);
      FeedErasure erased = signal.erasures().get(0);
      assertThat(erased.domain()).isEqualTo(domain);
      assertThat(erased.taskId()).isEqualTo(done);
      assertThat(erased.seqs()).isEqualTo(adaSeqs).hasSize(3);
      assertThat(erased.toString()).doesNotContain("Ada").doesNotContain("called");
      // at least once: not checkpointed, delivered again; checkpointed, gone
      assertThat(mirror.poll().erasures()).containsExactly(erased);
      mirror.commit(signal);
      assertThat(mirror.poll().isEmpty()).isTrue();

      inFlight.commit(flying);
      FeedBatch flyingSignal = inFlight.poll();
      assertThat(flyingSignal.events()).isEmpty();
      assertThat(flyingSignal.erasures())
          .extracting(FeedErasure::taskId, FeedErasure::seqs)
          .containsExactly(org.assertj.core.api.Assertions.tuple(done, adaSeqs));
      inFlight.commit(flyingSignal);
      assertThat(inFlight.poll().isEmpty()).isTrue();

      // a consumer that had received none of the events: the redacted events, no signal
      List<FeedEvent> redacted = readEvents(late, 3);
      assertThat(redacted).extracting(FeedEvent::seq).isEqualTo(adaSeqs);
      assertThat(redacted.get(0).payload()).doesNotContain("Ada Lovelace").contains("[erased]");
      assertThat(late.poll().isEmpty()).isTrue();

      // a task filed after the consumers' windows closed: delivered redacted, no signal
      String open =
          ledger.fileAndAdmit(
              TaskSpec.builder(domain, "Call Grace Hopper").origin("crm-grace", "e2").build());
      assertThat(ledger.scrubTasks(domain, "crm-grace", Redaction.ERASED)).isEqualTo(1);
      List<FeedEvent> grace = readEvents(mirror, 3);
      assertThat(grace)
          .extracting(FeedEvent::taskId, FeedEvent::kind)
          .containsExactly(
              org.assertj.core.api.Assertions.tuple(open, "created"),
              org.assertj.core.api.Assertions.tuple(open, "admitted"),
              org.assertj.core.api.Assertions.tuple(open, "invalidated"));
      assertThat(grace.get(0).payload()).doesNotContain("Grace Hopper");
      assertThat(mirror.poll().isEmpty()).isTrue();
    }
  }

  @Test
  void aRunnerHandsTheErasedItemToItsHandlerAfterTheEventsItDelivered() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    String domain = "erased-runner";
    List<FeedEvent> events = new CopyOnWriteArrayList<>();
    List<FeedErasure> erasures = new CopyOnWriteArrayList<>();
    FeedHandler handler =
        new FeedHandler() {
          @Override
          public void handle(List<FeedEvent> batch, Connection transaction) {
            events.addAll(batch);
          }

          @Override
          public void erased(List<FeedErasure> batch, Connection transaction) {
            erasures.addAll(batch);
          }
        };
    String id =
        ledger.fileAndAdmit(TaskSpec.builder(domain, "Mail Alan").origin("crm-alan", "e").build());
    ledger.invalidate(id, "mailed", null);
    FeedRunner runner =
        FeedRunner.builder(ledger, spec("runner-mirror", domain), PG.dataSource(), handler)
            .pollInterval(Duration.ofMillis(50))
            .build();
    try {
      runner.start();
      awaitSize(events, 3);
      ledger.scrubTasks(domain, "crm-alan", Redaction.ERASED);
      awaitSize(erasures, 1);
      assertThat(erasures.get(0).taskId()).isEqualTo(id);
      assertThat(erasures.get(0).seqs()).isEqualTo(seqs(events, id));
      long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (runner.erased() < 1 && System.nanoTime() < end) {
        Thread.sleep(20);
      }
      assertThat(runner.erased()).isEqualTo(1);
      assertThat(runner.delivered()).isEqualTo(3);
    } finally {
      runner.close();
    }
    assertThat(events).hasSize(3);
    assertThat(erasures).hasSize(1);
  }

  private static void awaitSize(List<?> list, int n) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofMinutes(5).toNanos();
    while (list.size() < n && System.nanoTime() < end) {
      Thread.sleep(20);
    }
    assertThat(list).hasSize(n);
  }
}

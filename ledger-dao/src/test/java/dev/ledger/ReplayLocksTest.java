package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A replay holds every domain's lock until it commits (issue 13 items 1 to 3, and the duplicate
 * {@code created} event of item 4): a scrub or a filing started while a replay is parked mid-way
 * waits for it and then works on the rebuilt projection; a replay that fails leaves the promotions
 * sequence where later promotions still fit.
 *
 * <p>The replay is parked for real: another session holds an {@code ACCESS EXCLUSIVE} lock on the
 * domain's {@code promotions}, so the replay, once it has deleted the domain's tasks, waits on it.
 * The test sees each session wait in {@code pg_stat_activity} before it lets the replay go on.
 */
class ReplayLocksTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final Duration LEASE = Duration.ofMinutes(5);

  private final ExecutorService threads = Executors.newCachedThreadPool();

  @AfterEach
  void stopThreads() {
    threads.shutdownNow();
  }

  @Test
  void a_scrub_of_tasks_during_a_parked_replay_waits_and_then_erases_every_task() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    List<String> secrets = fileSecrets(ledger, "scrub-tasks", 10);

    int scrubbed =
        duringParkedReplay(
            ledger,
            "scrub-tasks",
            () -> ledger.scrubTasks("scrub-tasks", "entry:secret", Redaction.ERASED));

    assertThat(scrubbed).isEqualTo(10);
    assertThat(textsHolding("scrub-tasks", secrets)).isZero();
    assertThat(ledger.withOrigin("scrub-tasks", "entry:secret"))
        .hasSize(10)
        .allSatisfy(t -> assertThat(t.spec().title()).isEqualTo("[erased]"))
        .extracting(Task::status)
        .containsOnly(Status.INVALIDATED, Status.COMPLETED)
        .filteredOn(st -> st == Status.COMPLETED)
        .hasSize(3);
  }

  @Test
  void a_scrub_of_an_entry_during_a_parked_replay_waits_and_then_erases_promotions_and_tasks()
      throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    List<String> secrets = new ArrayList<>(fileSecrets(ledger, "scrub-entry", 10));
    secrets.add("PROMOTION-WHY-77aa");
    ledger.recordPromotion(
        new PromotionSpec(
            "scrub-entry",
            "secret",
            "reviewed",
            "dan",
            "erin",
            "PROMOTION-WHY-77aa",
            Label.PUBLIC,
            "d1",
            ""));

    ScrubResult result =
        duringParkedReplay(
            ledger,
            "scrub-entry",
            () -> ledger.scrubEntry("scrub-entry", "secret", "entry:secret", Redaction.ERASED));

    assertThat(result).isEqualTo(new ScrubResult(1, 10));
    assertThat(textsHolding("scrub-entry", secrets)).isZero();
    assertThat(ledger.promotions("scrub-entry", "secret"))
        .singleElement()
        .satisfies(p -> assertThat(p.spec().why()).isEmpty());
  }

  @Test
  void a_filing_during_a_parked_replay_waits_and_the_replay_commits() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    fileSecrets(ledger, "filing", 3);
    long eventsBefore = ledger.eventCount();

    String id =
        duringParkedReplay(
            ledger, "filing", () -> ledger.file(TaskSpec.builder("filing", "filed late").build()));

    assertThat(ledger.get(id).spec().title()).isEqualTo("filed late");
    assertThat(ledger.eventCount()).isEqualTo(eventsBefore + 1);
    // the projection the replay and the filing left is what a replay of the log gives
    List<List<String>> before = projection("filing");
    assertThat(ledger.rebuild()).isEqualTo(ledger.eventCount());
    assertThat(projection("filing")).isEqualTo(before);
  }

  @Test
  void after_a_replay_that_failed_promotions_are_still_recorded() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    for (String digest : List.of("d1", "d2", "d3")) {
      assertThat(ledger.recordPromotion(promotion("seq", digest))).isTrue();
    }
    String schema = quoted("seq");
    try (Connection c = PostgresExtension.connect(PG.databaseName());
        Statement s = c.createStatement()) {
      s.execute(
          "INSERT INTO "
              + schema
              + ".events (task_id, kind, at, payload) VALUES ('t-x', 'admitted', 'yesterday', '{}')");
    }

    assertThatThrownBy(ledger::rebuild).isInstanceOf(LedgerException.class);

    assertThat(ledger.recordPromotion(promotion("seq", "d4"))).isTrue();
    try (Connection c = PostgresExtension.connect(PG.databaseName());
        Statement s = c.createStatement()) {
      s.execute("DELETE FROM " + schema + ".events WHERE task_id = 't-x'");
      assertThat(Fixtures.rows(c, "SELECT seq, digest FROM " + schema + ".promotions ORDER BY seq"))
          .containsExactly(
              List.of("1", "d1"), List.of("2", "d2"), List.of("3", "d3"), List.of("4", "d4"));
    }
    ledger.rebuild();
    assertThat(ledger.recordPromotion(promotion("seq", "d5"))).isTrue();
    try (Connection c = PostgresExtension.connect(PG.databaseName())) {
      assertThat(Fixtures.rows(c, "SELECT seq, digest FROM " + schema + ".promotions ORDER BY seq"))
          .containsExactly(
              List.of("1", "d1"),
              List.of("2", "d2"),
              List.of("3", "d3"),
              List.of("4", "d4"),
              List.of("5", "d5"));
    }
  }

  @Test
  void a_log_with_two_created_events_for_one_task_fails_the_replay_and_changes_nothing()
      throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    String id = ledger.file(TaskSpec.builder("twice", "first").build());
    ledger.admit(id);
    String schema = quoted("twice");
    try (Connection c = PostgresExtension.connect(PG.databaseName());
        Statement s = c.createStatement()) {
      s.execute(
          "INSERT INTO "
              + schema
              + ".events (task_id, kind, at, payload) SELECT task_id, kind, at, payload FROM "
              + schema
              + ".events WHERE kind = 'created'");
    }
    List<List<String>> before = projection("twice");

    assertThatThrownBy(ledger::rebuild)
        .isInstanceOf(LedgerException.class)
        .hasMessageContaining(id)
        .hasMessageContaining("two created events");

    assertThat(projection("twice")).isEqualTo(before);
    assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
    try (Connection c = PostgresExtension.connect(PG.databaseName());
        Statement s = c.createStatement()) {
      s.execute(
          "DELETE FROM "
              + schema
              + ".events WHERE seq = (SELECT max(seq) FROM "
              + schema
              + ".events WHERE kind = 'created')");
    }
    assertThat(ledger.rebuild()).isEqualTo(ledger.eventCount());
    assertThat(projection("twice")).isEqualTo(before);
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * Runs {@code operation} in another thread while a replay, in a third, is parked after deleting
   * the domain's tasks; lets the replay go once the operation waits (or has finished); returns the
   * operation's result after both are done. The replay must succeed.
   */
  private <T> T duringParkedReplay(Ledger ledger, String domain, Supplier<T> operation)
      throws Exception {
    try (Connection holder = PostgresExtension.connect(PG.databaseName())) {
      holder.setAutoCommit(false);
      try (Statement s = holder.createStatement()) {
        s.execute("LOCK TABLE " + quoted(domain) + ".promotions IN ACCESS EXCLUSIVE MODE");
      }
      CompletableFuture<Long> replay = CompletableFuture.supplyAsync(ledger::rebuild, threads);
      awaitWaiting(1, replay);
      CompletableFuture<T> op = CompletableFuture.supplyAsync(operation, threads);
      awaitWaiting(2, op);
      holder.commit();
      long replayed = replay.get(60, TimeUnit.SECONDS);
      assertThat(replayed).isPositive();
      return op.get(60, TimeUnit.SECONDS);
    }
  }

  /**
   * Waits until {@code sessions} sessions of this database wait on a lock, or {@code done}
   * finishes.
   */
  private static void awaitWaiting(int sessions, CompletableFuture<?> done) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    try (Connection c = PostgresExtension.connect(PG.databaseName());
        PreparedStatement q =
            c.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    + " AND wait_event_type = 'Lock'")) {
      while (!done.isDone()) {
        try (ResultSet rs = q.executeQuery()) {
          rs.next();
          if (rs.getInt(1) >= sessions) {
            return;
          }
        }
        if (System.nanoTime() > deadline) {
          throw new AssertionError("no " + sessions + " sessions waited on a lock within 30 s");
        }
        Thread.onSpinWait();
      }
    }
  }

  /** Files {@code n} tasks from origin {@code entry:secret}, each with its own secret text. */
  private static List<String> fileSecrets(Ledger ledger, String domain, int n) {
    List<String> secrets = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String secret = "SECRET-" + domain + "-" + i;
      secrets.add(secret);
      String id =
          ledger.file(
              TaskSpec.builder(domain, "title " + secret)
                  .body("body " + secret)
                  .origin("entry:secret", "e" + i)
                  .build());
      if (i % 2 == 0) {
        ledger.admit(id);
      }
      if (i % 4 == 0) {
        Lease l = ledger.claim(id, "w", LEASE, List.of(), Label.PUBLIC);
        ledger.complete(l, "handoff " + secret);
      }
    }
    return secrets;
  }

  /** How many rows of the domain's events, tasks and promotions hold any of the texts. */
  private static long textsHolding(String domain, List<String> texts) throws SQLException {
    String s = quoted(domain);
    long n = 0;
    try (Connection c = PostgresExtension.connect(PG.databaseName())) {
      for (String text : texts) {
        String like = "'%" + text + "%'";
        n += Fixtures.count(c, "SELECT count(*) FROM " + s + ".events WHERE payload LIKE " + like);
        n +=
            Fixtures.count(
                c,
                "SELECT count(*) FROM "
                    + s
                    + ".tasks WHERE concat(title, body, handoff, reason) LIKE "
                    + like);
        n += Fixtures.count(c, "SELECT count(*) FROM " + s + ".promotions WHERE why LIKE " + like);
      }
    }
    return n;
  }

  /** The domain's tasks and promotions rows and its routes, every column as text. */
  private static List<List<String>> projection(String domain) throws SQLException {
    String s = quoted(domain);
    List<List<String>> out = new ArrayList<>();
    try (Connection c = PostgresExtension.connect(PG.databaseName())) {
      out.addAll(Fixtures.rows(c, "SELECT * FROM " + s + ".tasks ORDER BY id"));
      out.addAll(Fixtures.rows(c, "SELECT * FROM " + s + ".promotions ORDER BY seq"));
      out.addAll(Fixtures.rows(c, "SELECT * FROM " + s + ".claim_classes ORDER BY 1, 2"));
      out.addAll(
          Fixtures.rows(
              c, "SELECT * FROM public.ledger_tasks WHERE domain = '" + domain + "' ORDER BY id"));
    }
    return out;
  }

  private static PromotionSpec promotion(String domain, String digest) {
    return new PromotionSpec(
        domain, "entry", "reviewed", "dan", "erin", "why", Label.PUBLIC, digest, "");
  }

  private static String quoted(String domain) {
    return "\"" + DomainSchemas.schemaName(domain) + "\"";
  }
}

package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Filings into an existing domain run concurrently (issue 26, B14): a filing holds the domain's
 * lock shared, so it does not wait for another transaction that filed into the domain and is still
 * open; two filings of one upstream event still run one after the other and file one task; a scrub
 * and a replay (the lock exclusive) still wait for an open filing, and a filing for them; two
 * transactions filing two upstream events in opposite orders deadlock, and the one PostgreSQL ends
 * gets a retryable {@link LedgerConflictException}.
 *
 * <p>Every wait is seen for real: a session waiting on a lock in {@code pg_stat_activity}, or an
 * operation that completes while the other transaction is still open; no timing is asserted.
 */
class ConcurrentFilingTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  /** How long a test waits for anything: a generous bound for a loaded machine, never reached. */
  private static final long WAIT_SECONDS = 30;

  private static Ledger ledger;

  private final ExecutorService threads = Executors.newCachedThreadPool();

  @BeforeAll
  static void open() {
    ledger = Ledger.open(PG.dataSource());
  }

  @AfterEach
  void stopThreads() {
    threads.shutdownNow();
  }

  @Test
  void a_filing_completes_while_another_transaction_that_filed_into_the_domain_stays_open()
      throws Exception {
    String domain = existingDomain("open-filing");
    try (Connection open = PG.dataSource().getConnection()) {
      open.setAutoCommit(false);
      String held =
          ledger.in(open).fileAndAdmit(spec(domain, "held open").origin("shop", "held").build());

      // the ledger's own transaction, a caller's, and a batch: each completes while `open` is open
      // (before issue 26 each waited for the domain's lock until `open` ended)
      String own =
          within(() -> ledger.fileAndAdmit(spec(domain, "own").origin("shop", "own").build()));
      String callers =
          within(
              () -> {
                try (Connection c = PG.dataSource().getConnection()) {
                  c.setAutoCommit(false);
                  String id = ledger.in(c).fileAndAdmit(spec(domain, "caller's").build());
                  c.commit();
                  return id;
                } catch (SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
      List<String> batch =
          within(
              () ->
                  ledger.fileAll(
                      List.of(
                          spec(domain, "batch 1").origin("shop", "b1").build(),
                          spec(domain, "batch 2").build())));

      assertThat(count(domain, "SELECT count(*) FROM %s.tasks WHERE id = '" + held + "'"))
          .isZero(); // still not committed: the others did not wait for it
      for (String id : List.of(own, callers, batch.get(0), batch.get(1))) {
        assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
      }
      open.commit();
      assertThat(ledger.get(held).status()).isEqualTo(Status.ADMITTED);
    }
    // the seed task, the held one, own, caller's, two of the batch: each one created event
    assertThat(count(domain, "SELECT count(*) FROM %s.tasks")).isEqualTo(6);
    assertThat(count(domain, "SELECT count(*) FROM %s.events WHERE kind = 'created'")).isEqualTo(6);
  }

  @Test
  void concurrent_filings_of_one_upstream_event_file_exactly_one_task() throws Exception {
    String domain = existingDomain("same-origin");
    int filers = 8;
    CountDownLatch start = new CountDownLatch(1);
    List<CompletableFuture<String>> filed = new ArrayList<>();
    for (int i = 0; i < filers; i++) {
      boolean inCallers = i % 2 == 0;
      filed.add(
          CompletableFuture.supplyAsync(
              () -> {
                await(start);
                TaskSpec spec = spec(domain, "charge order 9").origin("shop", "order-9").build();
                if (!inCallers) {
                  return ledger.fileAndAdmit(spec);
                }
                try (Connection c = PG.dataSource().getConnection()) {
                  c.setAutoCommit(false);
                  String id = ledger.in(c).fileAndAdmit(spec);
                  Thread.sleep(50); // the transaction stays open a while, holding the event's key
                  c.commit();
                  return id;
                } catch (SQLException | InterruptedException e) {
                  throw new IllegalStateException(e);
                }
              },
              threads));
    }
    start.countDown();
    List<String> ids = new ArrayList<>();
    for (CompletableFuture<String> f : filed) {
      ids.add(f.get(WAIT_SECONDS, TimeUnit.SECONDS));
    }
    assertThat(ids).hasSize(filers).containsOnly(ids.get(0));
    assertThat(ledger.withOrigin(domain, "shop")).singleElement();
    assertThat(ledger.get(ids.get(0)).status()).isEqualTo(Status.ADMITTED);
    assertThat(count(domain, "SELECT count(*) FROM %s.events WHERE task_id = '" + ids.get(0) + "'"))
        .isEqualTo(2); // created, admitted
  }

  @Test
  void a_second_filing_of_an_upstream_event_waits_for_the_open_first_and_returns_its_task()
      throws Exception {
    String domain = existingDomain("waits-for-first");
    TaskSpec spec = spec(domain, "refund 5").origin("shop", "refund-5").build();
    try (Connection first = PG.dataSource().getConnection()) {
      first.setAutoCommit(false);
      String won = ledger.in(first).fileAndAdmit(spec);
      CompletableFuture<String> second =
          CompletableFuture.supplyAsync(() -> ledger.fileAndAdmit(spec), threads);
      awaitSessionsWaiting(1, second);
      assertThat(second).isNotDone();
      first.commit();
      assertThat(second.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo(won);
    }
    assertThat(ledger.withOrigin(domain, "shop")).singleElement();
  }

  @Test
  void a_filing_that_meets_an_open_batchs_upstream_event_returns_its_task_in_a_usable_transaction()
      throws Exception {
    // a batch takes no origin key: the filing's lookup misses the batch's uncommitted task, its
    // one-statement insert waits on the unique key tasks_origin and, the batch committed, writes
    // nothing (ON CONFLICT DO NOTHING, issue 26 B13); the filing then finds the batch's task
    String domain = existingDomain("meets-batch");
    TaskSpec spec = spec(domain, "refund 9").origin("shop", "refund-9").build();
    try (Connection batch = PG.dataSource().getConnection()) {
      batch.setAutoCommit(false);
      String won = ledger.in(batch).fileAll(List.of(spec)).get(0);
      CompletableFuture<List<String>> filing =
          CompletableFuture.supplyAsync(
              () -> {
                try (Connection c = PG.dataSource().getConnection()) {
                  c.setAutoCommit(false);
                  String id = ledger.in(c).fileAndAdmit(spec);
                  // the transaction is still usable: another filing in it, then the commit
                  String next = ledger.in(c).fileAndAdmit(spec(domain, "next").build());
                  c.commit();
                  return List.of(id, next);
                } catch (SQLException e) {
                  throw new IllegalStateException(e);
                }
              },
              threads);
      awaitSessionsWaiting(1, filing);
      assertThat(filing).isNotDone();
      batch.commit();
      List<String> ids = filing.get(WAIT_SECONDS, TimeUnit.SECONDS);
      assertThat(ids.get(0)).isEqualTo(won);
      assertThat(ledger.get(ids.get(0)).status()).isEqualTo(Status.ADMITTED);
      assertThat(ledger.get(ids.get(1)).status()).isEqualTo(Status.ADMITTED);
    }
    assertThat(ledger.withOrigin(domain, "shop")).singleElement();
    // nothing of the losing insert: the seed, the batch's task and the next one, each with its
    // created and admitted events and its route
    assertRowsAndEvents(domain, 3);
    assertThat(
            count(
                domain,
                "SELECT count(*) FROM public.ledger_tasks r WHERE r.id NOT IN"
                    + " (SELECT id FROM %s.tasks) AND r.domain = '"
                    + domain
                    + "'"))
        .isZero();
  }

  @Test
  void a_batch_that_meets_an_open_filings_upstream_event_returns_its_task_and_files_the_rest()
      throws Exception {
    // the batch's one statement (issue 26, B12) waits on the unique key tasks_origin for the open
    // filing's row; the filing committed, that row writes nothing (ON CONFLICT DO NOTHING) and the
    // batch finds the filing's task; the batch's other specs are filed
    String domain = existingDomain("batch-meets-filing");
    TaskSpec taken = spec(domain, "refund 11").origin("shop", "refund-11").build();
    List<TaskSpec> batch =
        List.of(
            spec(domain, "refund 10").origin("shop", "refund-10").build(),
            taken,
            spec(domain, "refund 12").origin("shop", "refund-12").build(),
            taken);
    try (Connection first = PG.dataSource().getConnection()) {
      first.setAutoCommit(false);
      String won = ledger.in(first).fileAndAdmit(taken);
      CompletableFuture<List<String>> filed =
          CompletableFuture.supplyAsync(() -> ledger.fileAll(batch), threads);
      awaitSessionsWaiting(1, filed);
      assertThat(filed).isNotDone();
      first.commit();
      List<String> ids = filed.get(WAIT_SECONDS, TimeUnit.SECONDS);
      assertThat(ids).hasSize(4);
      assertThat(ids.get(1)).isEqualTo(won);
      assertThat(ids.get(3)).isEqualTo(won);
      assertThat(ids.get(0)).isNotEqualTo(won).isNotEqualTo(ids.get(2));
      assertThat(ids.get(2)).isNotEqualTo(won);
      for (String id : ids) {
        assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
      }
    }
    assertThat(ledger.withOrigin(domain, "shop")).hasSize(3);
    // the seed and the three tasks, each with its created and admitted events and its route;
    // nothing of the losing row
    assertRowsAndEvents(domain, 4);
    assertThat(
            count(
                domain,
                "SELECT count(*) FROM public.ledger_tasks r WHERE r.domain = '" + domain + "'"))
        .isEqualTo(4);
  }

  @Test
  void a_scrub_and_a_replay_wait_for_an_open_filing_and_see_its_task() throws Exception {
    String domain = existingDomain("scrub-waits");
    try (Connection open = PG.dataSource().getConnection()) {
      open.setAutoCommit(false);
      ledger.in(open).fileAndAdmit(spec(domain, "SECRET held").origin("entry:x", "e1").build());
      CompletableFuture<Integer> scrub =
          CompletableFuture.supplyAsync(
              () -> ledger.scrubTasks(domain, "entry:x", Redaction.ERASED), threads);
      awaitSessionsWaiting(1, scrub);
      assertThat(scrub).isNotDone();
      open.commit();
      assertThat(scrub.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo(1);
    }
    assertThat(count(domain, "SELECT count(*) FROM %s.tasks WHERE title LIKE '%%SECRET%%'"))
        .isZero();

    try (Connection open = PG.dataSource().getConnection()) {
      open.setAutoCommit(false);
      String held = ledger.in(open).fileAndAdmit(spec(domain, "before the replay").build());
      CompletableFuture<Long> replay = CompletableFuture.supplyAsync(ledger::rebuild, threads);
      awaitSessionsWaiting(1, replay);
      assertThat(replay).isNotDone();
      open.commit();
      assertThat(replay.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo(ledger.eventCount());
      assertThat(ledger.get(held).status()).isEqualTo(Status.ADMITTED);
    }
  }

  @Test
  void a_filing_waits_for_an_open_scrub_of_the_domain() throws Exception {
    String domain = existingDomain("filing-waits");
    ledger.file(spec(domain, "SECRET one").origin("entry:y", "e1").build());
    try (Connection scrubbing = PG.dataSource().getConnection()) {
      scrubbing.setAutoCommit(false);
      assertThat(ledger.in(scrubbing).scrubTasks(domain, "entry:y", Redaction.ERASED)).isEqualTo(1);
      CompletableFuture<String> filing =
          CompletableFuture.supplyAsync(
              () -> ledger.fileAndAdmit(spec(domain, "after the scrub").build()), threads);
      awaitSessionsWaiting(1, filing);
      assertThat(filing).isNotDone();
      scrubbing.commit();
      assertThat(ledger.get(filing.get(WAIT_SECONDS, TimeUnit.SECONDS)).status())
          .isEqualTo(Status.ADMITTED);
    }
  }

  @Test
  void
      two_transactions_filing_two_upstream_events_in_opposite_orders_one_gets_a_retryable_conflict()
          throws Exception {
    String domain = existingDomain("opposite-orders");
    TaskSpec a = spec(domain, "a").origin("shop", "a").build();
    TaskSpec b = spec(domain, "b").origin("shop", "b").build();
    try (Connection one = PG.dataSource().getConnection();
        Connection two = PG.dataSource().getConnection()) {
      one.setAutoCommit(false);
      two.setAutoCommit(false);
      ledger.in(one).fileAndAdmit(a);
      within(() -> ledger.in(two).fileAndAdmit(b)); // before issue 26 it waited for `one` here
      CompletableFuture<String> oneThenB =
          CompletableFuture.supplyAsync(() -> ledger.in(one).fileAndAdmit(b), threads);
      awaitSessionsWaiting(1, oneThenB);
      CompletableFuture<String> twoThenA =
          CompletableFuture.supplyAsync(() -> ledger.in(two).fileAndAdmit(a), threads);
      // PostgreSQL finds the deadlock after deadlock_timeout and ends one of the two (aborting its
      // transaction releases its locks), and the other goes on
      CompletableFuture.allOf(oneThenB, twoThenA)
          .exceptionally(e -> null)
          .get(WAIT_SECONDS, TimeUnit.SECONDS);
      boolean oneLost = oneThenB.isCompletedExceptionally();
      assertThat(oneLost).isNotEqualTo(twoThenA.isCompletedExceptionally());
      Throwable lost = failure(oneLost ? oneThenB : twoThenA);
      assertThat(lost).isInstanceOf(LedgerConflictException.class);
      LedgerConflictException conflict = (LedgerConflictException) lost;
      assertThat(conflict.sqlState()).isEqualTo("40P01");
      assertThat(conflict.retryable()).isTrue();
      assertThat(conflict.outcomeUnknown()).isFalse();
      assertThat(conflict.getMessage()).contains("roll back and run the transaction again");
      (oneLost ? one : two).rollback();
      (oneLost ? twoThenA : oneThenB).get(WAIT_SECONDS, TimeUnit.SECONDS);
      (oneLost ? two : one).commit();
    }
    assertThat(ledger.withOrigin(domain, "shop")).hasSize(2);
  }

  // ---------------------------------------------------------------------------------------------

  /** A provisioned domain holding one committed task of the class the tests file. */
  private static String existingDomain(String domain) {
    ledger.fileAndAdmit(spec(domain, "seed").build());
    return domain;
  }

  private static TaskSpec.Builder spec(String domain, String title) {
    return TaskSpec.builder(domain, title).createdBy("test");
  }

  /** Runs {@code body} on another thread and returns its result, within the wait bound. */
  private <T> T within(Supplier<T> body) throws Exception {
    return CompletableFuture.supplyAsync(body, threads).get(WAIT_SECONDS, TimeUnit.SECONDS);
  }

  private static Throwable failure(CompletableFuture<?> f) throws Exception {
    try {
      f.get(WAIT_SECONDS, TimeUnit.SECONDS);
      return null;
    } catch (ExecutionException e) {
      return e.getCause();
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      if (!latch.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
        throw new IllegalStateException("never started");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Waits until {@code sessions} sessions of the test database wait on a lock (or done ends). */
  private static void awaitSessionsWaiting(int sessions, CompletableFuture<?> done)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
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
          throw new AssertionError("no " + sessions + " sessions waited on a lock in time");
        }
        Thread.sleep(5);
      }
    }
  }

  /** The domain holds {@code tasks} rows, each with one created and one admitted event. */
  private static void assertRowsAndEvents(String domain, long tasks) throws SQLException {
    assertThat(count(domain, "SELECT count(*) FROM %s.tasks")).isEqualTo(tasks);
    assertThat(count(domain, "SELECT count(*) FROM %s.events WHERE kind = 'created'"))
        .isEqualTo(tasks);
    assertThat(count(domain, "SELECT count(*) FROM %s.events WHERE kind = 'admitted'"))
        .isEqualTo(tasks);
  }

  /** A count from a query on the domain's schema ({@code %s}), on a connection of its own. */
  private static long count(String domain, String sql) throws SQLException {
    String schema = "\"" + DomainSchemas.schemaName(domain) + "\"";
    try (Connection c = PostgresExtension.connect(PG.databaseName());
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(String.format(sql, schema))) {
      rs.next();
      return rs.getLong(1);
    }
  }
}

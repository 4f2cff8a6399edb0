package dev.ledger.control;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Claimer;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The controlled claim's two paths (domain V14, docs/controls.md "How it is enforced"): the fast
 * path of a claim far from its limits (one slot row, overlapping) and the exact gate near them (the
 * controls row and every slot row), interleaved by many threads: the concurrency limit proved from
 * the event log, the rate limit exact, a pause racing fast claims, a slow claimer among fast ones.
 */
class SlotGateTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final Claimer ME = Claimer.of("slots").lease(Duration.ofMinutes(5));
  private static final ExecutorService THREADS = Executors.newCachedThreadPool();

  private static Ledger ledger;

  @BeforeAll
  static void open() {
    ledger = Ledger.open(PG.dataSource());
  }

  @AfterAll
  static void close() {
    THREADS.shutdownNow();
  }

  private static void file(String domain, int n) {
    for (int i = 0; i < n; i++) {
      ledger.fileAndAdmit(TaskSpec.builder(domain, "task " + i).build());
    }
  }

  @Test
  void sixteen_threads_of_batches_never_hold_more_than_the_limit_on_either_path() throws Exception {
    String domain = "slots-limit";
    // the fast path's margin is 7 x 32 = 224: it holds below about 170 claimed; a thread mostly
    // completes what it claimed at once, sometimes hoards (the count climbs to the limit)
    int limit = 400;
    int tasks = 3_000;
    file(domain, tasks);
    // a rate limit that never binds, with a period longer than the test: every claim stays in the
    // window, so the rows' counts say which path took it
    ledger.setLimits(domain, limit, 1_000_000, Duration.ofDays(1));
    String schema = schema(domain);
    ledger.complete(ledger.claimNext(domain, ME).orElseThrow(), "done"); // the control found
    AtomicBoolean sampling = new AtomicBoolean(true);
    AtomicInteger maxSeen = new AtomicInteger();
    Future<?> sampler =
        THREADS.submit(
            () -> {
              while (sampling.get()) {
                maxSeen.accumulateAndGet((int) ledger.controls(domain).claimedNow(), Math::max);
                Thread.sleep(5);
              }
              return null;
            });
    AtomicInteger done = new AtomicInteger(1);
    List<Future<?>> workers = new ArrayList<>();
    for (int t = 0; t < 16; t++) {
      workers.add(
          THREADS.submit(
              () -> {
                ThreadLocalRandom r = ThreadLocalRandom.current();
                List<Lease> held = new ArrayList<>();
                int hold = hold(r);
                int idle = 0;
                while (done.get() < tasks && idle < 200) {
                  List<Lease> got = ledger.claimBatch(domain, ME, r.nextInt(1, 9));
                  held.addAll(got);
                  idle = got.isEmpty() ? idle + 1 : 0;
                  if (held.size() >= hold || got.isEmpty()) {
                    for (Lease l : held) {
                      ledger.complete(l, "done");
                      done.incrementAndGet();
                    }
                    held.clear();
                    hold = hold(r);
                  }
                }
                for (Lease l : held) {
                  ledger.complete(l, "done");
                  done.incrementAndGet();
                }
                return null;
              }));
    }
    for (Future<?> w : workers) {
      w.get(240, TimeUnit.SECONDS);
    }
    sampling.set(false);
    sampler.get(10, TimeUnit.SECONDS);

    assertThat(done.get()).isEqualTo(tasks);
    assertThat(maxSeen.get()).as("claimed at once, sampled").isBetween(1, limit);
    assertThat(mostAtOnceInTheEventLog(schema, tasks)).isBetween(1, limit);
    // both paths ran: the fast claims counted in the slot rows, the exact gate's in the controls
    // row, together every claim
    long fast = countsOf(schema, "queue_control_slots");
    long exact = countsOf(schema, "queue_controls");
    assertThat(fast).as("claims of the fast path").isPositive();
    assertThat(exact).as("claims of the exact gate").isPositive();
    assertThat(fast + exact).isEqualTo(tasks);
  }

  @Test
  void a_rate_limit_whose_margin_runs_out_lets_through_exactly_its_claims() throws Exception {
    String domain = "slots-rate";
    int limit = 400; // fast until about 170 claims are in the window, then the exact gate
    file(domain, 500);
    ledger.setLimits(domain, null, limit, Duration.ofDays(1));
    String schema = schema(domain);
    // the ledger's first claim finds the control (through the exact gate, in a transaction); the
    // threads' claims then commit themselves, fast first
    assertThat(ledger.claimBatch(domain, ME, 1)).hasSize(1);
    AtomicInteger claimed = new AtomicInteger(1);
    List<Future<?>> workers = new ArrayList<>();
    for (int t = 0; t < 16; t++) {
      workers.add(
          THREADS.submit(
              () -> {
                int empty = 0;
                while (empty < 20) {
                  int n =
                      ledger
                          .claimBatch(domain, ME, ThreadLocalRandom.current().nextInt(1, 9))
                          .size();
                  claimed.addAndGet(n);
                  empty = n == 0 ? empty + 1 : 0;
                }
                return null;
              }));
    }
    for (Future<?> w : workers) {
      w.get(240, TimeUnit.SECONDS);
    }

    assertThat(claimed.get()).isEqualTo(limit);
    assertThat(claimedEvents(schema)).isEqualTo(limit);
    long fast = countsOf(schema, "queue_control_slots");
    assertThat(fast).as("claims of the fast path").isPositive();
    assertThat(fast + countsOf(schema, "queue_controls")).isEqualTo(limit);
  }

  @Test
  void no_claim_commits_after_the_pause_that_races_fast_claims() throws Exception {
    String domain = "slots-pause";
    file(domain, 4_000);
    ledger.setLimits(domain, 1_000_000, 1_000_000, Duration.ofSeconds(1));
    String schema = schema(domain);
    AtomicBoolean running = new AtomicBoolean(true);
    ConcurrentLinkedQueue<Instant> returned = new ConcurrentLinkedQueue<>();
    List<Future<?>> workers = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      workers.add(
          THREADS.submit(
              () -> {
                while (running.get()) {
                  if (!ledger.claimBatch(domain, ME, 2).isEmpty()) {
                    returned.add(Instant.now());
                  }
                }
                return null;
              }));
    }
    while (returned.size() < 50) {
      Thread.sleep(5);
    }
    ledger.pause(domain); // committed when it returns
    int atPause = claimedEvents(schema);
    Thread.sleep(1_000); // the threads go on claiming
    int after = claimedEvents(schema);
    running.set(false);
    for (Future<?> w : workers) {
      w.get(30, TimeUnit.SECONDS);
    }

    assertThat(atPause).isPositive();
    assertThat(after).as("claims committed after the pause").isEqualTo(atPause);
    assertThat(ledger.claimBatch(domain, ME, 5)).isEmpty();
    ledger.resume(domain);
    assertThat(ledger.claimBatch(domain, ME, 5)).hasSize(5);
  }

  @Test
  void a_claim_of_the_exact_gate_is_not_starved_by_fast_ones() throws Exception {
    String domain = "slots-starve";
    file(domain, 6_000);
    ledger.setLimits(domain, 1_000_000, 1_000_000, Duration.ofSeconds(1));
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicInteger fastClaims = new AtomicInteger();
    List<Future<?>> workers = new ArrayList<>();
    for (int t = 0; t < 12; t++) {
      workers.add(
          THREADS.submit(
              () -> {
                while (running.get()) {
                  for (Lease l : ledger.claimBatch(domain, ME, 1)) {
                    fastClaims.incrementAndGet();
                    ledger.complete(l, "done");
                  }
                }
                return null;
              }));
    }
    while (fastClaims.get() < 100) {
      Thread.sleep(5);
    }
    // a batch of 40 is more than the fast path takes: the exact gate, which waits for every slot
    // row; within the ledger's lock timeout each time (a starved claim would fail with it)
    List<Integer> sizes = new ArrayList<>();
    try {
      for (int i = 0; i < 20; i++) {
        sizes.add(ledger.claimBatch(domain, ME, 40).size());
      }
    } finally {
      running.set(false);
    }
    for (Future<?> w : workers) {
      w.get(30, TimeUnit.SECONDS);
    }
    assertThat(sizes).hasSize(20).allSatisfy(n -> assertThat(n).isEqualTo(40));
    assertThat(fastClaims.get()).isGreaterThanOrEqualTo(100);
  }

  @Test
  void a_replay_leaves_the_slot_rows_and_their_window_as_they_are() throws Exception {
    String domain = "slots-replay";
    file(domain, 20);
    ledger.setLimits(domain, null, 1_000_000, Duration.ofDays(1));
    String schema = schema(domain);
    // the first claim finds the control (its ungated statement claims nothing) and passes a gate:
    // the fast path when that statement committed itself (issue 26), else the exact gate in its
    // transaction; the next ten take the fast path
    for (int i = 0; i < 11; i++) {
      ledger.complete(ledger.claimNext(domain, ME).orElseThrow(), "done");
    }
    List<String> before = slotRows(schema);
    long controlsBefore = countsOf(schema, "queue_controls");
    assertThat(before).hasSize(8);
    assertThat(countsOf(schema, "queue_control_slots")).isGreaterThanOrEqualTo(10);
    assertThat(countsOf(schema, "queue_control_slots") + controlsBefore).isEqualTo(11);

    ledger.replay();

    assertThat(slotRows(schema)).isEqualTo(before);
    assertThat(countsOf(schema, "queue_controls")).isEqualTo(controlsBefore);
    // the window goes on from the rows as they were (after a replay the first claim may pass the
    // exact gate in a transaction: the route is looked up again)
    assertThat(ledger.claimBatch(domain, ME, 5)).hasSize(5);
    assertThat(countsOf(schema, "queue_control_slots") + countsOf(schema, "queue_controls"))
        .isEqualTo(16);
  }

  private static List<String> slotRows(String schema) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Connection c = PG.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "SELECT slot || '/' || rate_slot || '/' || rate_counts FROM \""
                    + schema
                    + "\".queue_control_slots ORDER BY slot");
        ResultSet r = s.executeQuery()) {
      while (r.next()) {
        out.add(r.getString(1));
      }
    }
    return out;
  }

  /** How many tasks a thread holds before it completes them: mostly one batch, sometimes many. */
  private static int hold(ThreadLocalRandom r) {
    return r.nextInt(10) == 0 ? r.nextInt(40, 80) : r.nextInt(1, 9);
  }

  /** The most tasks claimed at once, from the event log (each claim until its completion). */
  private static int mostAtOnceInTheEventLog(String schema, int tasks) throws SQLException {
    List<long[]> edges = new ArrayList<>();
    try (Connection c = PG.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "SELECT kind, at FROM \""
                    + schema
                    + "\".events WHERE kind IN ('claimed', 'completed') ORDER BY seq");
        ResultSet r = s.executeQuery()) {
      while (r.next()) {
        Instant at = Instant.parse(r.getString(2));
        long micros = at.getEpochSecond() * 1_000_000 + at.getNano() / 1000;
        edges.add(new long[] {micros, "claimed".equals(r.getString(1)) ? 1 : -1});
      }
    }
    assertThat(edges.stream().filter(e -> e[1] == 1).count()).isEqualTo(tasks);
    // at one instant, an end before a start (a completion the count saw is earlier)
    edges.sort(Comparator.<long[]>comparingLong(e -> e[0]).thenComparingLong(e -> e[1]));
    int open = 0;
    int most = 0;
    for (long[] e : edges) {
      open += (int) e[1];
      most = Math.max(most, open);
    }
    assertThat(open).isZero();
    return most;
  }

  /** The claims counted in a table's rate windows (every row's counts). */
  private static long countsOf(String schema, String table) throws SQLException {
    try (Connection c = PG.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "SELECT coalesce(sum(cast(n AS bigint)), 0) FROM \""
                    + schema
                    + "\"."
                    + table
                    + " AS q CROSS JOIN LATERAL unnest(string_to_array(nullif(q.rate_counts, ''),"
                    + " ',')) AS n");
        ResultSet r = s.executeQuery()) {
      r.next();
      return r.getLong(1);
    }
  }

  private static int claimedEvents(String schema) throws SQLException {
    try (Connection c = PG.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "SELECT count(*) FROM \"" + schema + "\".events WHERE kind = 'claimed'");
        ResultSet r = s.executeQuery()) {
      r.next();
      return r.getInt(1);
    }
  }

  private static String schema(String domain) {
    return ledger.describeDomains().stream()
        .filter(d -> d.domain().equals(domain))
        .findFirst()
        .orElseThrow()
        .schema();
  }
}

package dev.ledger.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import dev.ledger.feed.Feed;
import dev.ledger.feed.FeedBatch;
import dev.ledger.feed.FeedEvent;
import dev.ledger.feed.FeedRunner;
import dev.ledger.feed.FeedSpec;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.postgresql.PGConnection;

/**
 * B17 (issue 27, the event feed). Live: four writers file and admit through the ledger's API in
 * transactions of 1 to 3 tasks, one in eight held open up to 200 ms while the others commit; our
 * feed ({@link FeedRunner}, woken by {@code LISTEN ledger_feed}, polling only every second besides)
 * and a naive "seq > last" reader (woken by the same notifications) follow the domain at once. The
 * lag is from the writer's commit returning to the event reaching the reader (the {@code created}
 * event of each task), p50 and p99; the naive reader's skipped events are counted. Catch-up: a new
 * consumer reads the whole log from the start in batches of 500, committing each checkpoint,
 * against the naive reader's batches of 500 (which commit nothing). Trigger cost: file+admit as in
 * B1 into a domain whose events trigger notifies (followed), or runs without notifying (not
 * followed), against the same with the trigger disabled.
 *
 * <p>Checked every run, quick or full: our feed delivered every committed event exactly once (no
 * failure, no duplicate, none missing), live and in each catch-up round. Nothing else: the naive
 * reader's skips, the lags and the rates are reported, never checked.
 */
final class FeedBench {

  private static final String DOMAIN = "b17";
  private static final String TRIGGER_DOMAIN = "b17-trigger";
  private static final int WRITERS = 4;
  private static final int BATCH = 500;

  private FeedBench() {}

  static void run(Context ctx) throws Exception {
    String db = ctx.server().createDatabase("b17");
    try (HikariDataSource pool = ctx.server().pool(db, 16)) {
      Ledger ledger = Context.ledger(pool);
      String schema = ledger.provision(DOMAIN);
      long total = live(ctx, pool, ledger, schema);
      catchUp(ctx, pool, ledger, schema, total);
      triggerCost(ctx, pool, ledger);
    } finally {
      ctx.server().dropDatabase(db);
    }
  }

  /** The live run; returns how many events the domain holds after it. */
  private static long live(Context ctx, HikariDataSource pool, Ledger ledger, String schema)
      throws Exception {
    Map<String, Long> committedAt = new ConcurrentHashMap<>();
    Map<String, Long> oursAt = new ConcurrentHashMap<>();
    Map<Long, Integer> oursTimes = new ConcurrentHashMap<>();
    FeedSpec spec = FeedSpec.builder("b17-live", DOMAIN).batchSize(BATCH).fromStart(true).build();
    FeedRunner runner =
        FeedRunner.builder(
                ledger,
                spec,
                pool,
                (events, tx) -> {
                  long now = System.nanoTime();
                  for (FeedEvent e : events) {
                    oursTimes.merge(e.seq(), 1, Integer::sum);
                    if (e.kind().equals("created")) {
                      oursAt.putIfAbsent(e.taskId(), now);
                    }
                  }
                })
            .build();
    Naive naive = new Naive(pool, schema);
    runner.start();
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    while (!runner.holdsAll()) {
      Context.check(System.nanoTime() < deadline, "B17: the feed never took its lease");
      Thread.sleep(10);
    }
    naive.start();

    int txPerWriter = ctx.size(150, 2_500);
    long t0 = System.nanoTime();
    double written =
        Workers.fixed(
            WRITERS,
            txPerWriter,
            (w, i) -> {
              ThreadLocalRandom r = ThreadLocalRandom.current();
              int tasks = 1 + r.nextInt(3);
              List<String> ids = new ArrayList<>(tasks);
              try (Connection c = pool.getConnection()) {
                c.setAutoCommit(false);
                for (int k = 0; k < tasks; k++) {
                  ids.add(ledger.in(c).fileAndAdmit(spec(DOMAIN, w, i * 3 + k)));
                }
                if (r.nextInt(8) == 0) {
                  Thread.sleep(r.nextInt(201)); // held open while the other writers commit
                }
                c.commit();
                long at = System.nanoTime();
                ids.forEach(id -> committedAt.put(id, at));
                c.setAutoCommit(true);
              }
              return 2L * tasks;
            });
    Set<Long> committed = seqs(pool, schema);
    long maxSeq = committed.stream().mapToLong(Long::longValue).max().orElse(0);
    deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
    while (oursTimes.size() < committed.size() || naive.last() < maxSeq) {
      Context.check(
          System.nanoTime() < deadline,
          "B17: the readers did not catch up in 5 minutes (ours "
              + oursTimes.size()
              + " of "
              + committed.size()
              + ")");
      Thread.sleep(20);
    }
    double drained = committed.size() / ((System.nanoTime() - t0) / 1e9);
    runner.close();
    naive.stop();

    Context.check(runner.failures() == 0, "B17: the feed failed " + runner.failures() + " batches");
    Context.check(
        oursTimes.keySet().equals(committed),
        "B17: the feed delivered "
            + oursTimes.size()
            + " distinct events, not the "
            + committed.size()
            + " committed ones");
    long dup = oursTimes.values().stream().filter(n -> n != 1).count();
    Context.check(dup == 0, "B17: the feed delivered " + dup + " events more than once");
    Set<Long> skipped = new HashSet<>(committed);
    skipped.removeAll(naive.seen);

    double[] ours = lags(committedAt, oursAt);
    double[] base = lags(committedAt, naive.at);
    String what = WRITERS + " writers, 1 in 8 transactions held ≤ 200 ms";
    ctx.results()
        .add(row("end-to-end lag p50, " + what, ours[0], base[0], "naive seq > last, LISTEN"));
    ctx.results()
        .add(row("end-to-end lag p99, " + what, ours[1], base[1], "naive seq > last, LISTEN"));
    ctx.results()
        .note(
            String.format(
                java.util.Locale.ROOT,
                "B17 live: %,d events committed (%,.0f events/s written, %,.0f events/s delivered"
                    + " from the first write to the last delivery); ours delivered each exactly"
                    + " once; the naive reader skipped %,d of them (%.2f%%). Lag: from the"
                    + " writer's commit returning to the task's created event reaching the"
                    + " reader, over %,d tasks; ours waits for every older transaction to end"
                    + " (the held ones), the naive reader does not and loses what commits late",
                committed.size(),
                written,
                drained,
                skipped.size(),
                100.0 * skipped.size() / committed.size(),
                committedAt.size()));
    return committed.size();
  }

  /** The whole log read from the start by a new consumer, against the naive reader. */
  private static void catchUp(
      Context ctx, HikariDataSource pool, Ledger ledger, String schema, long total)
      throws Exception {
    int rounds = ctx.size(2, 3);
    AtomicLong round = new AtomicLong();
    double[] m =
        Context.alternate(
            rounds,
            () -> {
              FeedSpec spec =
                  FeedSpec.builder("b17-catchup-" + round.incrementAndGet(), DOMAIN)
                      .batchSize(BATCH)
                      .fromStart(true)
                      .build();
              Set<Long> seen = new HashSet<>();
              long t0 = System.nanoTime();
              try (Feed feed = ledger.feed(spec)) {
                Context.check(feed.acquire(), "B17: the catch-up consumer's lease is taken");
                long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
                while (seen.size() < total) {
                  Context.check(System.nanoTime() < deadline, "B17: catch-up did not finish");
                  FeedBatch b = feed.poll();
                  for (FeedEvent e : b.events()) {
                    Context.check(
                        seen.add(e.seq()), "B17: catch-up delivered " + e.seq() + " twice");
                  }
                  if (!b.isEmpty()) {
                    feed.commit(b);
                  }
                }
              }
              double rate = total / ((System.nanoTime() - t0) / 1e9);
              Context.check(seen.size() == total, "B17: catch-up delivered " + seen.size());
              return rate;
            },
            () -> {
              long t0 = System.nanoTime();
              long n = 0;
              long last = 0;
              try (Connection c = pool.getConnection();
                  PreparedStatement ps =
                      c.prepareStatement(
                          "SELECT seq, task_id, kind, at, payload FROM \""
                              + schema
                              + "\".events WHERE seq > ? ORDER BY seq LIMIT "
                              + BATCH)) {
                while (true) {
                  ps.setLong(1, last);
                  int got = 0;
                  try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                      last = rs.getLong(1);
                      rs.getString(5);
                      got++;
                    }
                  }
                  n += got;
                  if (got < BATCH) {
                    break;
                  }
                }
              }
              return n / ((System.nanoTime() - t0) / 1e9);
            });
    ctx.results()
        .add(
            new Results.Row(
                "B17",
                String.format(
                    java.util.Locale.ROOT, "catch-up of %,d events, batches of %d", total, BATCH),
                "events/s",
                Results.Kind.RATE,
                m[0],
                m[1],
                "naive seq > last, no checkpoint",
                "",
                null));
  }

  /** B1's file+admit with the feed trigger notifying, or running without notifying, or disabled. */
  private static void triggerCost(Context ctx, HikariDataSource pool, Ledger ledger)
      throws Exception {
    String schema = "\"" + ledger.provision(TRIGGER_DOMAIN) + "\"";
    int perRound = ctx.size(200, 3_000);
    int rounds = ctx.size(2, 3);
    AtomicLong n = new AtomicLong();
    long filed = 0;
    for (int clients : new int[] {1, 4}) {
      long steps = perRound / clients;
      Context.Measurement file =
          () ->
              Workers.fixed(
                  clients,
                  steps,
                  (w, i) -> {
                    ledger.admit(ledger.file(spec(TRIGGER_DOMAIN, w, n.incrementAndGet())));
                    return 1;
                  });
      for (boolean followed : new boolean[] {true, false}) {
        double[] m =
            Context.alternate(
                rounds,
                () -> {
                  trigger(pool, schema, true, followed);
                  return file.run();
                },
                () -> {
                  trigger(pool, schema, false, false);
                  return file.run();
                });
        filed += 2L * rounds * steps * clients;
        ctx.results()
            .add(
                new Results.Row(
                    "B17",
                    "file+admit, "
                        + clients
                        + " client"
                        + (clients == 1 ? "" : "s")
                        + (followed
                            ? ", feed trigger notifying"
                            : ", trigger, domain not followed"),
                    "tasks/s",
                    Results.Kind.RATE,
                    m[0],
                    m[1],
                    "the same, feed trigger disabled",
                    "",
                    null));
      }
    }
    trigger(pool, schema, true, false);
    long events = Context.count(pool, "SELECT count(*) FROM " + schema + ".events");
    Context.check(events == 2 * filed, "B17 trigger cost: " + events + " events, not " + 2 * filed);
  }

  private static void trigger(DataSource pool, String schema, boolean enabled, boolean followed)
      throws SQLException {
    Context.execute(
        pool,
        "ALTER TABLE "
            + schema
            + ".events "
            + (enabled ? "ENABLE" : "DISABLE")
            + " TRIGGER feed_events_inserted",
        followed
            ? "INSERT INTO " + schema + ".feed_followed DEFAULT VALUES ON CONFLICT DO NOTHING"
            : "DELETE FROM " + schema + ".feed_followed");
  }

  private static Results.Row row(String workload, double ours, double base, String baseName) {
    return new Results.Row(
        "B17", workload, "ms", Results.Kind.TIME, ours, base, baseName, "", null);
  }

  /** p50 and p99 of the lags, in ms, of the tasks both maps know. */
  private static double[] lags(Map<String, Long> committedAt, Map<String, Long> seenAt) {
    List<Double> lags = new ArrayList<>();
    committedAt.forEach(
        (id, c) -> {
          Long s = seenAt.get(id);
          if (s != null) {
            lags.add(Math.max(0, s - c) / 1e6);
          }
        });
    double[] a = lags.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    if (a.length == 0) {
      return new double[] {Double.NaN, Double.NaN};
    }
    return new double[] {Stats.percentile(a, 50), Stats.percentile(a, 99)};
  }

  private static Set<Long> seqs(DataSource pool, String schema) throws SQLException {
    Set<Long> all = new HashSet<>();
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT seq FROM \"" + schema + "\".events")) {
      while (rs.next()) {
        all.add(rs.getLong(1));
      }
    }
    return all;
  }

  private static TaskSpec spec(String domain, int worker, long i) {
    return TaskSpec.builder(domain, "feed " + worker + "/" + i)
        .body("filed by the feed benchmark")
        .createdBy("bench")
        .build();
  }

  /** The naive reader: "seq > last seen", woken by the feed's notifications, on its own thread. */
  private static final class Naive {
    final Set<Long> seen = ConcurrentHashMap.newKeySet();
    final Map<String, Long> at = new ConcurrentHashMap<>();
    private final DataSource pool;
    private final String schema;
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicLong last = new AtomicLong();
    private final Thread thread;
    private volatile Exception failure;

    Naive(DataSource pool, String schema) {
      this.pool = pool;
      this.schema = schema;
      this.thread = new Thread(this::run, "b17-naive");
    }

    void start() {
      thread.start();
    }

    long last() {
      Context.check(failure == null, "B17: the naive reader failed: " + failure);
      return last.get();
    }

    void stop() throws InterruptedException {
      stop.set(true);
      thread.join(60_000);
    }

    private void run() {
      try (Connection c = pool.getConnection();
          PreparedStatement ps =
              c.prepareStatement(
                  "SELECT seq, task_id, kind FROM \""
                      + schema
                      + "\".events WHERE seq > ? ORDER BY seq LIMIT "
                      + BATCH)) {
        try (Statement s = c.createStatement()) {
          s.execute("LISTEN ledger_feed");
        }
        PGConnection pg = c.unwrap(PGConnection.class);
        while (!stop.get()) {
          ps.setLong(1, last.get());
          int got = 0;
          long now = System.nanoTime();
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              long seq = rs.getLong(1);
              seen.add(seq);
              if (rs.getString(3).equals("created")) {
                at.putIfAbsent(rs.getString(2), now);
              }
              last.set(seq);
              got++;
            }
          }
          if (got == 0) {
            pg.getNotifications(200); // wakes at the next commit that inserted events
          }
        }
        try (Statement s = c.createStatement()) {
          s.execute("UNLISTEN ledger_feed");
        }
      } catch (Exception e) {
        failure = e;
      }
    }
  }
}

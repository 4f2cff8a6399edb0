package dev.ledger.feed;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.ReferenceStack;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The issue's main test: eight writers (four through the ledger's API in their own transactions,
 * four with the reference stack's SQL), each holding some transactions open up to 500 ms while
 * later ones commit, and rolling some back; three consumers of two domains, one killed between a
 * poll and its commit and restarted under another holder (it takes over once the dead one's lease
 * expires). Each consumer gets exactly the committed events, each once (twice only for the batch in
 * flight at the kill), in commit-safe order. A naive "seq > last" reader beside them loses the
 * events that committed late, one of them on purpose.
 */
class FeedOrderTest {

  @RegisterExtension static final PostgresExtension PG = PostgresExtension.ownCluster();

  /** The run's two domains: each test method has its own (the class shares one database). */
  private static volatile List<String> DOMAINS = List.of("feed-a", "feed-b");

  private static final Duration LEASE = Duration.ofSeconds(2);
  private static final long DEADLINE_NANOS = Duration.ofMinutes(10).toNanos();

  /** One event as the database holds it. */
  record Stored(String domain, long seq, long xid, String taskId) {}

  @Test
  void everyConsumerGetsEveryCommittedEventOnceInCommitSafeOrder() throws Exception {
    run(1_500);
  }

  @Test
  @Tag("slow")
  void fiftyThousandEvents() throws Exception {
    run(50_000);
  }

  private void run(int target) throws Exception {
    DOMAINS = List.of("feed-a-" + target, "feed-b-" + target);
    Ledger ledger = Ledger.open(PG.dataSource());
    for (String d : DOMAINS) {
      ledger.provision(d);
    }
    AtomicBoolean writing = new AtomicBoolean(true);
    Naive naive = new Naive();
    List<Consumer> consumers = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      consumers.add(new Consumer(ledger, "consumer-" + i, i == 2, writing));
    }
    Thread naiveThread =
        new Thread(
            () -> {
              try {
                while (writing.get()) {
                  naive.pollOnce();
                  Thread.sleep(5);
                }
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    consumers.forEach(Consumer::start);
    naiveThread.start();

    long lateSeq = lateCommitSkippedByNaive(naive);

    AtomicLong written = new AtomicLong();
    List<Thread> writers = new ArrayList<>();
    List<Throwable> failures = new CopyOnWriteArrayList<>();
    for (int w = 0; w < 8; w++) {
      int id = w;
      Thread t =
          new Thread(
              () -> {
                try {
                  if (id % 2 == 0) {
                    ourWriter(ledger, id, written, target);
                  } else {
                    referenceWriter(id, written, target);
                  }
                } catch (Throwable e) {
                  failures.add(e);
                }
              });
      writers.add(t);
      t.start();
    }
    for (Thread t : writers) {
      t.join(DEADLINE_NANOS / 1_000_000);
    }
    assertThat(writers).as("writers done in time").noneMatch(Thread::isAlive);
    assertThat(failures).isEmpty();
    writing.set(false);
    naiveThread.join(10_000);
    naive.pollOnce(); // drains what committed in order

    Map<String, List<Stored>> committed = committed();
    long total = committed.values().stream().mapToLong(List::size).sum();
    assertThat(total).isGreaterThanOrEqualTo(target);

    for (Consumer c : consumers) {
      c.finish(total);
    }
    for (Consumer c : consumers) {
      assertThat(c.failure).as(c.name).isNull();
      check(c, committed);
    }
    Consumer killed = consumers.get(1);
    assertThat(killed.abandoned).as("the batch in flight at the kill").isNotEmpty();
    assertThat(killed.takeoverWaited)
        .as("the restarted reader waited for the dead one's lease")
        .isTrue();

    Set<Long> naiveSeen = naive.seen.get(DOMAINS.get(0));
    Set<Long> allA = new HashSet<>();
    committed.get(DOMAINS.get(0)).forEach(s -> allA.add(s.seq()));
    long skipped = 0;
    for (String d : DOMAINS) {
      for (Stored s : committed.get(d)) {
        if (!naive.seen.get(d).contains(s.seq())) {
          skipped++;
        }
      }
    }
    assertThat(allA).contains(lateSeq);
    assertThat(naiveSeen).doesNotContain(lateSeq);
    assertThat(skipped).as("events the naive reader skipped").isGreaterThanOrEqualTo(1);
    for (Consumer c : consumers) {
      assertThat(
              c.delivered.stream()
                  .filter(e -> e.seq() == lateSeq && e.domain().equals(DOMAINS.get(0))))
          .as(c.name + " got the late event")
          .isNotEmpty();
    }
  }

  /** Each consumer: exactly the committed events, once apart from the abandoned batch, in order. */
  private static void check(Consumer c, Map<String, List<Stored>> committed) {
    Map<String, Integer> abandoned = new HashMap<>();
    c.abandoned.forEach(e -> abandoned.merge(key(e.domain(), e.seq()), 1, Integer::sum));
    Map<String, Integer> times = new HashMap<>();
    c.delivered.forEach(e -> times.merge(key(e.domain(), e.seq()), 1, Integer::sum));
    Set<String> expected = new HashSet<>();
    for (String d : DOMAINS) {
      committed.get(d).forEach(s -> expected.add(key(d, s.seq())));
    }
    assertThat(times.keySet()).as(c.name + ": the committed events, none more").isEqualTo(expected);
    for (Map.Entry<String, Integer> t : times.entrySet()) {
      assertThat(t.getValue())
          .as(c.name + ": deliveries of " + t.getKey())
          .isEqualTo(1 + abandoned.getOrDefault(t.getKey(), 0));
    }
    // commit-safe order, per domain, counting each event's last delivery (the one checkpointed)
    Map<String, Stored> byKey = new HashMap<>();
    committed.values().forEach(l -> l.forEach(s -> byKey.put(key(s.domain(), s.seq()), s)));
    for (String d : DOMAINS) {
      List<Stored> order = new ArrayList<>();
      Set<String> seen = new HashSet<>();
      List<FeedEvent> reversed = new ArrayList<>(c.delivered);
      java.util.Collections.reverse(reversed);
      for (FeedEvent e : reversed) {
        if (e.domain().equals(d) && seen.add(key(d, e.seq()))) {
          order.add(0, byKey.get(key(d, e.seq())));
        }
      }
      Map<String, Long> lastSeqOfTask = new HashMap<>();
      int top = order.stream().mapToInt(x -> (int) x.seq()).max().orElse(0) + 2;
      long[] maxXidAbove = new long[top + 1]; // a Fenwick tree of maxima over reversed seqs
      java.util.Arrays.fill(maxXidAbove, -1);
      for (Stored s : order) {
        Long before = lastSeqOfTask.put(s.taskId(), s.seq());
        assertThat(before == null || before < s.seq())
            .as(c.name + ": task " + s.taskId() + "'s events in order")
            .isTrue();
        // an event delivered after one with a larger seq must have a larger xid: it belongs to a
        // later window (its transaction had not ended when the earlier one's window opened)
        long above = -1;
        for (int i = top - (int) s.seq() - 1; i > 0; i -= i & -i) {
          above = Math.max(above, maxXidAbove[i]);
        }
        assertThat(s.xid())
            .as(c.name + ": " + s + " delivered after a later event of an older transaction")
            .isGreaterThan(above);
        for (int i = top - (int) s.seq(); i <= top; i += i & -i) {
          maxXidAbove[i] = Math.max(maxXidAbove[i], s.xid());
        }
      }
    }
  }

  private static String key(String domain, long seq) {
    return domain + "#" + seq;
  }

  /**
   * A late commit on purpose: an event inserted and held uncommitted while a later one commits and
   * the naive reader reads past it; then it commits. Returns its seq.
   */
  private static long lateCommitSkippedByNaive(Naive naive) throws Exception {
    String schema = DomainSchemas.quotedSchemaName(DOMAINS.get(0));
    try (Connection early = PG.connect();
        Connection later = PG.connect()) {
      early.setAutoCommit(false);
      long seq = insertReference(early, schema, "late-task", "held open");
      insertReference(later, schema, "later-task", "committed first");
      naive.pollOnce();
      naive.pollOnce();
      early.commit();
      return seq;
    }
  }

  /** The reference stack's INSERT of an event: its own column list, no xid. */
  private static long insertReference(Connection c, String schema, String task, String what)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO "
                + schema
                + ".events (task_id, kind, at, payload) VALUES (?, 'heartbeat', ?, ?)"
                + " RETURNING seq")) {
      ps.setString(1, task);
      ps.setString(2, "2026-12-01T10:00:00.000000Z");
      ps.setString(3, "{\"note\":\"" + what + "\"}");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** Files through the API in its own transactions, some held open, some rolled back. */
  private static void ourWriter(Ledger ledger, int id, AtomicLong written, int target)
      throws Exception {
    ThreadLocalRandom r = ThreadLocalRandom.current();
    int n = 0;
    while (written.get() < target) {
      try (Connection c = PG.dataSource().getConnection()) {
        c.setAutoCommit(false);
        int filings = 1 + r.nextInt(4);
        String domain = DOMAINS.get(r.nextInt(DOMAINS.size()));
        for (int i = 0; i < filings; i++) {
          ledger.in(c).fileAndAdmit(TaskSpec.builder(domain, "w" + id + "-" + n++).build());
        }
        hold(r, target);
        if (r.nextInt(20) == 0) {
          c.rollback();
        } else {
          c.commit();
          written.addAndGet(2L * filings);
        }
        c.setAutoCommit(true);
      }
    }
  }

  /**
   * Writes with the reference stack's SQL: its filings (a transaction each), and its event INSERT
   * in transactions held open, some rolled back.
   */
  private static void referenceWriter(int id, AtomicLong written, int target) throws Exception {
    ThreadLocalRandom r = ThreadLocalRandom.current();
    int n = 0;
    try (ReferenceStack ref = new ReferenceStack(PG.connect());
        Connection c = PG.connect()) {
      while (written.get() < target) {
        String domain = DOMAINS.get(r.nextInt(DOMAINS.size()));
        if (r.nextBoolean()) {
          ref.file(
              domain,
              "r" + target + "-" + id + "-" + n++,
              "reference filing",
              List.of(),
              List.of(),
              0,
              "2026-12-01T10:00:00.000000Z");
          written.incrementAndGet();
          continue;
        }
        c.setAutoCommit(false);
        int events = 1 + r.nextInt(6);
        String task = "r" + target + "-" + id + "-" + n++;
        for (int i = 0; i < events; i++) {
          insertReference(c, DomainSchemas.quotedSchemaName(domain), task, "event " + i);
        }
        hold(r, target);
        if (r.nextInt(20) == 0) {
          c.rollback();
        } else {
          c.commit();
          written.addAndGet(events);
        }
        c.setAutoCommit(true);
      }
    }
  }

  /**
   * Holds some transactions open for up to 500 ms while the others commit: one in six, one in
   * twenty in the large run (which would otherwise spend most of its time waiting).
   */
  private static void hold(ThreadLocalRandom r, int target) throws InterruptedException {
    if (r.nextInt(target > 5_000 ? 20 : 6) == 0) {
      Thread.sleep(r.nextInt(501));
    }
  }

  private static Map<String, List<Stored>> committed() throws SQLException {
    Map<String, List<Stored>> all = new HashMap<>();
    try (Connection c = PG.connect();
        Statement s = c.createStatement()) {
      for (String d : DOMAINS) {
        List<Stored> events = new ArrayList<>();
        try (ResultSet rs =
            s.executeQuery(
                "SELECT seq, xid::text, task_id FROM "
                    + DomainSchemas.quotedSchemaName(d)
                    + ".events ORDER BY seq")) {
          while (rs.next()) {
            events.add(
                new Stored(d, rs.getLong(1), Long.parseLong(rs.getString(2)), rs.getString(3)));
          }
        }
        all.put(d, events);
      }
    }
    return all;
  }

  /** The naive reader: "seq > last seen" per domain, the trap of the issue. */
  static final class Naive {
    final Map<String, Set<Long>> seen = new ConcurrentHashMap<>();
    private final Map<String, Long> last = new HashMap<>();
    private Connection c;

    synchronized void pollOnce() throws SQLException {
      if (c == null) {
        c = PG.connect();
      }
      for (String d : DOMAINS) {
        long after = last.getOrDefault(d, 0L);
        try (PreparedStatement ps =
            c.prepareStatement(
                "SELECT seq FROM "
                    + DomainSchemas.quotedSchemaName(d)
                    + ".events WHERE seq > ? ORDER BY seq")) {
          ps.setLong(1, after);
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              long seq = rs.getLong(1);
              seen.computeIfAbsent(d, k -> ConcurrentHashMap.newKeySet()).add(seq);
              after = seq;
            }
          }
        }
        last.put(d, after);
        seen.computeIfAbsent(d, k -> ConcurrentHashMap.newKeySet());
      }
    }
  }

  /** A consumer on its own thread; the second is killed once between a poll and its commit. */
  static final class Consumer {
    final String name;
    final List<FeedEvent> delivered = new CopyOnWriteArrayList<>();
    final List<FeedEvent> abandoned = new CopyOnWriteArrayList<>();
    private final Ledger ledger;
    private final boolean kill;
    private final AtomicBoolean writing;
    private final Thread thread;
    private volatile long expected = -1;
    volatile Throwable failure;
    volatile boolean takeoverWaited;

    Consumer(Ledger ledger, String name, boolean kill, AtomicBoolean writing) {
      this.ledger = ledger;
      this.name = name;
      this.kill = kill;
      this.writing = writing;
      this.thread = new Thread(this::run, name);
    }

    void start() {
      thread.start();
    }

    void finish(long total) throws InterruptedException {
      expected = total;
      thread.join(DEADLINE_NANOS / 1_000_000);
      assertThat(thread.isAlive()).as(name + " caught up in time").isFalse();
    }

    private Feed open(String holder) {
      return ledger.feed(
          FeedSpec.builder(name, DOMAINS)
              .batchSize(100)
              .lease(LEASE)
              .holder(holder)
              .fromStart(true)
              .build());
    }

    private void run() {
      try {
        Feed feed = open(name + "-first");
        assertThat(feed.acquire()).isTrue();
        int batches = 0;
        boolean killed = !kill;
        long end = System.nanoTime() + DEADLINE_NANOS;
        while (System.nanoTime() < end) {
          FeedBatch batch = feed.poll();
          delivered.addAll(batch.events());
          if (!killed && batches >= 5 && !batch.isEmpty()) {
            // killed between delivery and checkpoint: no commit, no close; the lease stays
            abandoned.addAll(batch.events());
            killed = true;
            feed = open(name + "-restarted");
            takeoverWaited = !feed.acquire();
            while (!feed.acquire()) {
              Thread.sleep(50);
            }
            continue;
          }
          if (batch.isEmpty()) {
            if (expected >= 0 && distinct() >= expected) {
              break;
            }
            Thread.sleep(20);
            continue;
          }
          feed.commit(batch);
          batches++;
        }
        feed.close();
      } catch (Throwable e) {
        failure = e;
      }
    }

    private long distinct() {
      Set<String> keys = new HashSet<>();
      delivered.forEach(e -> keys.add(key(e.domain(), e.seq())));
      return keys.size();
    }
  }
}

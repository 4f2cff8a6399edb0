package dev.ledger.feed;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.WorkerProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The feed's consumers as separate JVMs ({@code LedgerWorkerMain feed}), killed with SIGKILL while
 * a writer (the ledger's API, transactions held open, and the reference stack's raw event INSERTs)
 * keeps committing: three consumers, one killed and restarted, each get every committed event once,
 * apart from the killed one's batch in flight; two processes of one consumer never both deliver,
 * and the second takes over once the first's lease expires.
 */
@Tag("slow")
class FeedProcessTest {

  @RegisterExtension static final PostgresExtension PG = PostgresExtension.ownCluster();

  private static final long LEASE_MS = 5_000;
  private static final Duration DEADLINE = Duration.ofMinutes(4);

  @TempDir Path dir;

  private final List<WorkerProcess> started = new ArrayList<>();

  /** Stops the writer and kills whatever a failed test left running. */
  @AfterEach
  void cleanUp() {
    STOP.set(true);
    started.forEach(WorkerProcess::close);
  }

  /** One logged delivery: {@code <domain> <seq> <task> <holder>}. */
  record Line(String domain, long seq, String task, String holder) {
    String key() {
      return domain + "#" + seq;
    }
  }

  @Test
  void threeConsumersOneKilledAndRestartedEachGetEveryCommittedEventOnce() throws Exception {
    List<String> domains = List.of("proc-a", "proc-b");
    Ledger ledger = Ledger.open(PG.dataSource());
    domains.forEach(ledger::provision);
    Map<String, WorkerProcess> running = new HashMap<>();
    for (String c : List.of("c1", "c2", "c3")) {
      running.put(c, start(c, c + "-first", domains));
    }
    Thread writer = writer(ledger, domains);
    writer.start();

    Path killedLog = log("c2-first");
    awaitLines(killedLog, 60);
    running.get("c2").kill();
    int atKill = read(log("c1-first")).size();
    awaitLines(log("c1-first"), atKill + 60); // written while c2 is dead
    WorkerProcess restarted = start("c2", "c2-second", domains);
    awaitLines(log("c2-second"), 60);
    STOP.set(true);
    writer.join(DEADLINE.toMillis());
    assertThat(writer.isAlive()).isFalse();
    assertThat(WRITE_FAILURE.get()).isNull();

    Set<String> committed = committed(domains);
    for (String holder : List.of("c1-first", "c3-first")) {
      awaitAll(List.of(log(holder)), committed);
    }
    awaitAll(List.of(killedLog, log("c2-second")), committed);
    for (WorkerProcess p : List.of(running.get("c1"), running.get("c3"), restarted)) {
      p.process().destroy(); // SIGTERM: finishes the batch in hand, gives the leases back
      assertThat(p.awaitExit(Duration.ofMinutes(1))).isEqualTo(143);
    }
    WorkerProcess.awaitBackendsGone(PG.dataSource(), Duration.ofMinutes(1));

    for (String holder : List.of("c1-first", "c3-first")) {
      List<Line> got = read(log(holder));
      assertThat(keys(got)).as(holder + ": each once").doesNotHaveDuplicates();
      assertThat(new HashSet<>(keys(got))).as(holder).isEqualTo(committed);
      checkTaskOrder(holder, got);
    }
    List<Line> first = read(killedLog);
    List<Line> second = read(log("c2-second"));
    checkTaskOrder("c2-first", first);
    checkTaskOrder("c2-second", second);
    assertThat(keys(first)).as("no event twice in one process").doesNotHaveDuplicates();
    assertThat(keys(second)).doesNotHaveDuplicates();
    Set<String> both = new HashSet<>(keys(first));
    both.retainAll(keys(second));
    Set<String> union = new HashSet<>(keys(first));
    union.addAll(keys(second));
    assertThat(union).as("c2: every committed event, none more").isEqualTo(committed);
    // twice only for the batch in flight at the kill: the last lines the first process logged
    // (one batch, at most 50 per domain)
    assertThat(both.size()).isLessThanOrEqualTo(100);
    Set<String> tail = new HashSet<>(keys(first.subList(first.size() - both.size(), first.size())));
    assertThat(tail).as("the duplicates are the killed process's last batch").isEqualTo(both);
  }

  @Test
  void twoProcessesOfOneConsumerNeverBothDeliverAndTheSecondTakesOver() throws Exception {
    List<String> domains = List.of("proc-lease");
    Ledger ledger = Ledger.open(PG.dataSource());
    domains.forEach(ledger::provision);
    WorkerProcess one = start("shared", "one", domains);
    Thread writer = writer(ledger, domains);
    writer.start();
    awaitLines(log("one"), 10);
    WorkerProcess two = start("shared", "two", domains);
    awaitOutput("two", "following");
    int before = read(log("one")).size();
    awaitLines(log("one"), before + 60); // "two" polls for the lease all along
    assertThat(read(log("two")))
        .as("the second process delivered nothing while the first lived")
        .isEmpty();
    one.kill();
    awaitLines(log("two"), 60); // takes over once the dead one's lease expires
    STOP.set(true);
    writer.join(DEADLINE.toMillis());
    assertThat(writer.isAlive()).isFalse();
    assertThat(WRITE_FAILURE.get()).isNull();
    Set<String> committed = committed(domains);
    awaitAll(List.of(log("one"), log("two")), committed);
    two.process().destroy();
    assertThat(two.awaitExit(Duration.ofMinutes(1))).isEqualTo(143);
    WorkerProcess.awaitBackendsGone(PG.dataSource(), Duration.ofMinutes(1));

    List<Line> first = read(log("one"));
    List<Line> second = read(log("two"));
    assertThat(second).as("the second took over").isNotEmpty();
    Set<String> both = new HashSet<>(keys(first));
    both.retainAll(keys(second));
    assertThat(both.size()).isLessThanOrEqualTo(50);
    assertThat(new HashSet<>(keys(first.subList(first.size() - both.size(), first.size()))))
        .isEqualTo(both);
    Set<String> union = new HashSet<>(keys(first));
    union.addAll(keys(second));
    assertThat(union).isEqualTo(committed);
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT epoch, holder IS NULL, delivered FROM ledger_feed_consumers"
                    + " WHERE consumer = 'shared'")) {
      assertThat(rs.next()).isTrue();
      // the first took epoch 1; the second took the lease once, after it expired, never before
      assertThat(rs.getLong(1)).isEqualTo(2);
      assertThat(rs.getBoolean(2)).as("given back at SIGTERM").isTrue();
      assertThat(rs.getLong(3)).isEqualTo(first.size() - both.size() + second.size());
    }
  }

  private static final AtomicReference<Throwable> WRITE_FAILURE = new AtomicReference<>();
  private static final java.util.concurrent.atomic.AtomicBoolean STOP =
      new java.util.concurrent.atomic.AtomicBoolean();

  /**
   * Writes transactions until {@link #STOP} (at most 20,000): through the API (1 to 3 filings, one
   * in five held open up to 300 ms while others commit) and the reference stack's event INSERTs,
   * alternately on two threads so one's held transaction is passed by the other's commits.
   */
  private static Thread writer(Ledger ledger, List<String> domains) {
    WRITE_FAILURE.set(null);
    STOP.set(false);
    return new Thread(
        () -> {
          Thread reference =
              new Thread(() -> write(ledger, domains, 10_000, true), "reference-writer");
          reference.start();
          write(ledger, domains, 10_000, false);
          try {
            reference.join();
          } catch (InterruptedException e) {
            WRITE_FAILURE.compareAndSet(null, e);
          }
        },
        "writers");
  }

  private static void write(Ledger ledger, List<String> domains, int n, boolean reference) {
    ThreadLocalRandom r = ThreadLocalRandom.current();
    try (Connection c = PG.dataSource().getConnection()) {
      for (int i = 0; i < n && !STOP.get(); i++) {
        String domain = domains.get(r.nextInt(domains.size()));
        c.setAutoCommit(false);
        for (int k = 0; k <= r.nextInt(3); k++) {
          if (reference) {
            try (PreparedStatement ps =
                c.prepareStatement(
                    "INSERT INTO "
                        + DomainSchemas.quotedSchemaName(domain)
                        + ".events (task_id, kind, at, payload) VALUES (?, 'heartbeat',"
                        + " '2026-12-01T10:00:00.000000Z', '{}')")) {
              ps.setString(1, "ref-" + i);
              ps.executeUpdate();
            }
          } else {
            ledger.in(c).fileAndAdmit(TaskSpec.builder(domain, "process " + i).build());
          }
        }
        if (r.nextInt(5) == 0) {
          Thread.sleep(r.nextInt(301));
        }
        c.commit();
        c.setAutoCommit(true);
        Thread.sleep(5); // spread over the consumers' lifetimes
      }
    } catch (Throwable e) {
      WRITE_FAILURE.compareAndSet(null, e);
    }
  }

  private WorkerProcess start(String consumer, String holder, List<String> domains) {
    List<String> args = new ArrayList<>();
    args.addAll(
        List.of(
            "feed",
            PG.jdbcUrl(),
            consumer,
            holder,
            Long.toString(LEASE_MS),
            log(holder).toString()));
    args.addAll(domains);
    WorkerProcess p = WorkerProcess.start(dir, holder, args.toArray(String[]::new));
    started.add(p);
    return p;
  }

  private Path log(String holder) {
    return dir.resolve(holder + ".log");
  }

  private void awaitOutput(String name, String text) throws Exception {
    Path out = dir.resolve(name + ".out");
    long end = System.nanoTime() + DEADLINE.toNanos();
    while (!(Files.exists(out) && Files.readString(out).contains(text))) {
      assertThat(System.nanoTime()).as(name + " started").isLessThan(end);
      Thread.sleep(50);
    }
  }

  private static void awaitLines(Path log, int n) throws Exception {
    long end = System.nanoTime() + DEADLINE.toNanos();
    while (read(log).size() < n) {
      assertThat(System.nanoTime()).as(log + " reached " + n + " lines").isLessThan(end);
      Thread.sleep(50);
    }
  }

  private static void awaitAll(List<Path> logs, Set<String> committed) throws Exception {
    long end = System.nanoTime() + DEADLINE.toNanos();
    while (true) {
      Set<String> got = new HashSet<>();
      for (Path l : logs) {
        got.addAll(keys(read(l)));
      }
      if (got.containsAll(committed)) {
        return;
      }
      assertThat(System.nanoTime()).as(logs + " caught up").isLessThan(end);
      Thread.sleep(100);
    }
  }

  /** A task's events in seq order in each process's log (each task's transactions are serial). */
  private static void checkTaskOrder(String holder, List<Line> lines) {
    Map<String, Long> last = new HashMap<>();
    for (Line l : lines) {
      Long before = last.put(l.domain() + "/" + l.task(), l.seq());
      assertThat(before == null || before < l.seq()).as(holder + ": " + l).isTrue();
    }
  }

  private static Set<String> committed(List<String> domains) throws Exception {
    Set<String> all = new HashSet<>();
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement()) {
      for (String d : domains) {
        try (ResultSet rs =
            s.executeQuery("SELECT seq FROM " + DomainSchemas.quotedSchemaName(d) + ".events")) {
          while (rs.next()) {
            all.add(d + "#" + rs.getLong(1));
          }
        }
      }
    }
    return all;
  }

  private static List<String> keys(List<Line> lines) {
    return lines.stream().map(Line::key).toList();
  }

  /** The whole lines of a log (a line being written at the moment is left for the next read). */
  private static List<Line> read(Path log) throws IOException {
    if (!Files.exists(log)) {
      return List.of();
    }
    String text = Files.readString(log, StandardCharsets.UTF_8);
    List<Line> lines = new ArrayList<>();
    int start = 0;
    for (int nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      String[] f = text.substring(start, nl).split(" ");
      lines.add(new Line(f[0], Long.parseLong(f[1]), f[2], f[3]));
      start = nl + 1;
    }
    return lines;
  }
}

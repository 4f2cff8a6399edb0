package dev.ledger;

import static java.util.stream.Collectors.joining;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.RenderMappedDsl;
import dev.ledger.testing.DomainLog;
import dev.ledger.testing.FileBarrier;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.SettableClock;
import dev.ledger.testing.WorkerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.jooq.Query;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Claims at depth under contention (issue 3, item 2): one domain of 2,000 admitted tasks drained by
 * 8 threads of this JVM and 2 worker JVMs at once, after EXPLAIN ANALYZE has shown that a claim
 * reads no more of that queue than its window; and claimers stalling past their lease while others
 * take their tasks over.
 */
class ClaimConcurrencyTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final int DEPTH = 2_000;
  private static final int THREADS = 8;
  private static final List<String> PROCESSES = List.of("proc-1", "proc-2");
  private static final Duration LONG_LEASE = Duration.ofMinutes(5);

  @TempDir Path dir;

  /** What one claim returned, as the claimer recorded it. */
  record Claim(String holder, String taskId, long attempt) {}

  // slow (worker JVMs): run on purpose, -Dledger.test.groups=slow
  @Tag("slow")
  @Test
  void threads_and_processes_draining_one_deep_domain_complete_every_task_exactly_once()
      throws Exception {
    String domain = "depth";
    ClaimCapture capture = new ClaimCapture();
    Ledger ledger =
        Ledger.open(PG.dataSource(), LedgerConfig.builder().executeListener(capture).build());
    Path barrier = dir.resolve("barrier");
    List<Claim> claims = new ArrayList<>();
    Map<String, Integer> largestBatch = new ConcurrentHashMap<>();
    ExecutorService threads = Executors.newFixedThreadPool(THREADS);
    Set<String> filed;
    // the worker JVMs start while the queue is filled, and wait at the barrier
    try (WorkerProcess p1 = drainer(domain, PROCESSES.get(0), barrier);
        WorkerProcess p2 = drainer(domain, PROCESSES.get(1), barrier)) {
      filed = fileAdmitted(ledger, domain, DEPTH);
      assertThat(filed).hasSize(DEPTH);
      // before the race, while the queue is 2,000 deep and the workers wait
      assertClaimReadsNoMoreThanItsWindow(ledger, capture, domain);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<List<Claim>>> futures = new ArrayList<>();
      for (int i = 0; i < THREADS; i++) {
        String holder = "thread-" + i;
        futures.add(threads.submit(() -> drain(ledger, domain, holder, go, largestBatch)));
      }
      FileBarrier.awaitAllThenGo(
          barrier,
          PROCESSES,
          Duration.ofSeconds(90),
          () -> p1.process().isAlive() && p2.process().isAlive());
      go.countDown();

      for (Future<List<Claim>> f : futures) {
        claims.addAll(f.get(3, TimeUnit.MINUTES));
      }
      for (WorkerProcess p : List.of(p1, p2)) {
        assertThat(p.awaitExit(Duration.ofMinutes(3))).as(p.describe()).isZero();
      }
      for (String name : PROCESSES) {
        List<Claim> mine = readClaims(name);
        assertThat(mine).as("claims of worker process " + name).isNotEmpty();
        claims.addAll(mine);
      }
    } finally {
      threads.shutdownNow();
    }

    // no claim of one returned more than one task
    assertThat(largestBatch.values()).allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(1));
    // never held by two claimers at once: each (task, attempt) was handed out once, and as no
    // lease expired, each task was claimed once, at attempt 1, and by the holder the row names
    assertThat(claims).hasSize(DEPTH);
    assertThat(claims.stream().map(c -> c.taskId() + "#" + c.attempt()).distinct().count())
        .isEqualTo(DEPTH);
    assertThat(claims.stream().map(Claim::taskId).collect(Collectors.toSet())).isEqualTo(filed);
    assertThat(claims).allSatisfy(c -> assertThat(c.attempt()).isEqualTo(1L));
    Map<String, String> claimer =
        claims.stream().collect(Collectors.toMap(Claim::taskId, Claim::holder));
    assertThat(claimer.values()).containsAll(PROCESSES);

    DomainLog log = new DomainLog(PG.dataSource(), domain);
    Map<String, Integer> once = filed.stream().collect(Collectors.toMap(id -> id, id -> 1));
    assertThat(log.countOf("completed")).isEqualTo(once);
    assertThat(log.countOf("claimed")).isEqualTo(once);
    assertThat(log.eventCount()).isEqualTo(4 * DEPTH); // created, admitted, claimed, completed
    List<Task> completed = ledger.list(domain, Status.COMPLETED);
    assertThat(completed).hasSize(DEPTH);
    assertThat(completed)
        .allSatisfy(
            t -> {
              assertThat(t.holder()).isEqualTo(claimer.get(t.id()));
              assertThat(t.attempts()).isEqualTo(1L);
              assertThat(t.handoff()).isEqualTo("done by " + claimer.get(t.id()));
            });
    assertThat(ledger.list(domain, Status.ADMITTED)).isEmpty();
    assertThat(ledger.list(domain, Status.CLAIMED)).isEmpty();
    assertThat(log.routes()).containsExactly(DEPTH, DEPTH);
  }

  @Test
  void claimers_stalling_past_their_lease_under_contention_never_complete_a_task_twice()
      throws Exception {
    // a quarter of the first claims stall: the claimer keeps the lease and goes on; when nothing
    // is claimable, a claimer moves the shared clock past every lease, so stalled tasks (and any
    // in flight) are claimed again while their earlier holders may still try to finish them
    String domain = "stalls";
    int depth = 250;
    Duration lease = Duration.ofSeconds(10);
    SettableClock clock = new SettableClock(Instant.now().truncatedTo(ChronoUnit.MICROS));
    Ledger ledger = Ledger.open(PG.dataSource(), LedgerConfig.builder().clock(clock).build());
    Set<String> filed = fileAdmitted(ledger, domain, depth);

    List<Claim> claims = Collections.synchronizedList(new ArrayList<>());
    List<Claim> completions = Collections.synchronizedList(new ArrayList<>());
    List<Lease> stalled = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger done = new AtomicInteger();
    ExecutorService threads = Executors.newFixedThreadPool(THREADS);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int i = 0; i < THREADS; i++) {
        String holder = "thread-" + i;
        futures.add(
            threads.submit(
                () -> {
                  while (done.get() < depth) {
                    Optional<Lease> got =
                        ledger.claimNext(domain, holder, lease, List.of(), Label.PUBLIC);
                    if (got.isEmpty()) {
                      clock.advance(lease.plusSeconds(1));
                      Thread.yield();
                      continue;
                    }
                    Lease l = got.get();
                    claims.add(new Claim(holder, l.taskId(), l.attempt()));
                    if (l.attempt() == 1 && Math.floorMod(l.taskId().hashCode(), 4) == 0) {
                      stalled.add(l);
                      continue;
                    }
                    try {
                      ledger.complete(l, "done by " + holder);
                      completions.add(new Claim(holder, l.taskId(), l.attempt()));
                      done.incrementAndGet();
                    } catch (LeaseLostException e) {
                      // expired and claimed again meanwhile: the new holder finishes it
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : futures) {
        f.get(3, TimeUnit.MINUTES);
      }
    } finally {
      threads.shutdownNow();
    }

    // every stalled holder comes back too late
    assertThat(stalled).isNotEmpty();
    for (Lease l : stalled) {
      assertThatThrownBy(() -> ledger.complete(l, "too late"))
          .isInstanceOf(LeaseLostException.class);
      assertThatThrownBy(() -> ledger.heartbeat(l, lease)).isInstanceOf(LeaseLostException.class);
    }

    DomainLog log = new DomainLog(PG.dataSource(), domain);
    Map<String, Integer> once = filed.stream().collect(Collectors.toMap(id -> id, id -> 1));
    assertThat(completions).hasSize(depth);
    assertThat(completions.stream().map(Claim::taskId).collect(Collectors.toSet()))
        .isEqualTo(filed);
    assertThat(log.countOf("completed")).isEqualTo(once);
    // each claim handed out a (task, attempt) of its own, attempts 1, 2, ... in the log's order
    Map<String, List<Long>> attempts =
        claims.stream()
            .collect(
                Collectors.groupingBy(
                    Claim::taskId, Collectors.mapping(Claim::attempt, Collectors.toList())));
    assertThat(attempts.keySet()).isEqualTo(filed);
    attempts.forEach(
        (id, list) ->
            assertThat(list.stream().sorted().collect(Collectors.toList()))
                .as(id)
                .isEqualTo(
                    LongStream.rangeClosed(1, list.size()).boxed().collect(Collectors.toList())));
    Map<String, Integer> claimedEvents = log.countOf("claimed");
    attempts.forEach((id, list) -> assertThat(claimedEvents.get(id)).as(id).isEqualTo(list.size()));
    // the completing claim is the task's last one, and its holder is the one the row names
    Map<String, Task> rows =
        ledger.list(domain, Status.COMPLETED).stream().collect(Collectors.toMap(Task::id, t -> t));
    assertThat(rows).hasSize(depth);
    for (Claim c : completions) {
      Task row = rows.get(c.taskId());
      assertThat(row.attempts()).as(c.taskId()).isEqualTo(c.attempt());
      assertThat(row.attempts()).isEqualTo(attempts.get(c.taskId()).size());
      assertThat(row.holder()).isEqualTo(c.holder());
    }
    assertThat(log.routes()).containsExactly(depth, depth);
  }

  /**
   * EXPLAIN ANALYZE of the real claim statement over a deep queue: every scan of the tasks table,
   * however the planner joins and sorts, reads at most the claim's window (its cost is bounded by
   * the window, not by the queue's depth), and no scan of tasks or of the directory's routes is
   * sequential. The statement is captured from a claim in a probe domain and rendered for {@code
   * domain}, so the deep queue is not touched.
   */
  private static void assertClaimReadsNoMoreThanItsWindow(
      Ledger ledger, ClaimCapture capture, String domain) throws Exception {
    String probe = domain + "-probe";
    ledger.admit(ledger.file(TaskSpec.builder(probe, "probe").build()));
    capture.query.set(null);
    ledger.complete(
        ledger.claimNext(probe, "probe", LONG_LEASE, List.of(), Label.PUBLIC).get(), null);
    Query claim = capture.query.get();
    assertThat(claim).as("the claim statement was captured").isNotNull();
    // the claim is rendered once per schema (RenderedStatement): retarget the probe's text
    String claimSql =
        new RenderMappedDsl(PG.dataSource(), "public", List.of())
            .forSchema(DomainSchemas.schemaName(probe))
            .renderInlined(claim)
            .replace(
                "\"" + DomainSchemas.schemaName(probe) + "\"",
                "\"" + DomainSchemas.schemaName(domain) + "\"");
    assertThat(claimSql).contains("\"" + DomainSchemas.schemaName(domain) + "\".\"tasks\"");

    JsonNode plan;
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute("ANALYZE \"" + DomainSchemas.schemaName(domain) + "\".tasks");
      c.setAutoCommit(false);
      // EXPLAIN ANALYZE runs the claim for real: inside a transaction rolled back afterwards
      try (ResultSet rs = s.executeQuery("EXPLAIN (ANALYZE, FORMAT JSON) " + claimSql)) {
        rs.next();
        plan = new ObjectMapper().readTree(rs.getString(1)).get(0).get("Plan");
      } finally {
        c.rollback();
        c.setAutoCommit(true);
      }
    }
    List<JsonNode> nodes = new ArrayList<>();
    collect(plan, nodes);
    String shown = nodes.stream().map(ClaimConcurrencyTest::describe).collect(joining("\n"));
    assertThat(nodes.get(0).path("Actual Rows").asLong()).as(shown).isEqualTo(1L); // one claimed
    List<JsonNode> taskScans =
        nodes.stream()
            .filter(n -> n.path("Relation Name").asText().equals("tasks"))
            .filter(n -> n.path("Actual Loops").asLong() > 0)
            .filter(n -> !n.path("Node Type").asText().equals("ModifyTable"))
            .collect(Collectors.toList());
    assertThat(taskScans).as(shown).isNotEmpty();
    long window = Ledger.claimWindow(1);
    assertThat(taskScans)
        .as(shown)
        .allSatisfy(
            n -> {
              assertThat(n.path("Node Type").asText()).isNotEqualTo("Seq Scan");
              assertThat(rowsRead(n)).as(describe(n)).isLessThanOrEqualTo(window);
            });
    assertThat(nodes)
        .as(shown)
        .noneMatch(
            n ->
                n.path("Node Type").asText().equals("Seq Scan")
                    && n.path("Relation Name").asText().equals("ledger_tasks")
                    && n.path("Actual Loops").asLong() > 0);
  }

  /** Rows a scan node fetched over all its loops, kept or filtered out. */
  private static long rowsRead(JsonNode n) {
    return (n.path("Actual Rows").asLong() + n.path("Rows Removed by Filter").asLong(0))
        * n.path("Actual Loops").asLong();
  }

  private static String describe(JsonNode n) {
    return n.path("Node Type").asText()
        + " "
        + n.path("Relation Name").asText("")
        + " "
        + n.path("Alias").asText("")
        + " "
        + n.path("Index Name").asText("")
        + " rows="
        + n.path("Actual Rows").asLong()
        + " removed="
        + n.path("Rows Removed by Filter").asLong(0)
        + " loops="
        + n.path("Actual Loops").asLong();
  }

  @Test
  void a_claim_takes_a_free_task_behind_more_locked_ones_than_its_window() throws Exception {
    // 100 in-flight transactions holding the head of the queue (here one transaction holding 100
    // row locks, as 100 claimers, heartbeats or completions would): SKIP LOCKED must walk past
    // them to the free tasks behind, however many there are
    String domain = "locked-head";
    Ledger ledger = Ledger.open(PG.dataSource());
    int locked = 100;
    List<String> queue = new ArrayList<>();
    for (int i = 0; i < locked + 3; i++) {
      String id = ledger.file(TaskSpec.builder(domain, "task " + i).priority(1_000 - i).build());
      ledger.admit(id);
      queue.add(id);
    }
    try (Connection holder = PG.dataSource().getConnection();
        PreparedStatement lock =
            holder.prepareStatement(
                "SELECT id FROM \""
                    + DomainSchemas.schemaName(domain)
                    + "\".tasks WHERE id = ANY (?) FOR UPDATE")) {
      holder.setAutoCommit(false);
      lock.setArray(1, holder.createArrayOf("text", queue.subList(0, locked).toArray()));
      try (ResultSet rs = lock.executeQuery()) {
        int n = 0;
        while (rs.next()) {
          n++;
        }
        assertThat(n).isEqualTo(locked);
      }
      Optional<Lease> got = ledger.claimNext(domain, "behind", LONG_LEASE, List.of(), Label.PUBLIC);
      assertThat(got).as("a free task behind %d locked ones", locked).isPresent();
      assertThat(got.get().taskId()).isEqualTo(queue.get(locked));
      holder.rollback();
    }
  }

  // -------------------------------------------------------------------------------------------

  /** Files {@code n} tasks and admits them; the first alone (it provisions the domain). */
  static Set<String> fileAdmitted(Ledger ledger, String domain, int n) throws Exception {
    Function<Integer, String> fileOne =
        i -> {
          String id = ledger.file(TaskSpec.builder(domain, "task " + i).priority(i % 7).build());
          ledger.admit(id);
          return id;
        };
    Set<String> ids = new HashSet<>();
    ids.add(fileOne.apply(0));
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<String>> futures = new ArrayList<>();
      for (int i = 1; i < n; i++) {
        int k = i;
        futures.add(pool.submit(() -> fileOne.apply(k)));
      }
      for (Future<String> f : futures) {
        ids.add(f.get(2, TimeUnit.MINUTES));
      }
    } finally {
      pool.shutdownNow();
    }
    return ids;
  }

  private static List<Claim> drain(
      Ledger ledger,
      String domain,
      String holder,
      CountDownLatch go,
      Map<String, Integer> largestBatch)
      throws InterruptedException {
    go.await();
    List<Claim> mine = new ArrayList<>();
    while (true) {
      List<Lease> got = ledger.claimBatch(domain, holder, LONG_LEASE, List.of(), Label.PUBLIC, 1);
      largestBatch.merge(holder, got.size(), Math::max);
      if (got.isEmpty()) {
        return mine;
      }
      for (Lease lease : got) {
        mine.add(new Claim(holder, lease.taskId(), lease.attempt()));
        ledger.complete(lease, "done by " + holder);
      }
    }
  }

  private WorkerProcess drainer(String domain, String name, Path barrier) {
    return WorkerProcess.start(
        dir,
        name,
        "drain",
        PG.jdbcUrl(),
        domain,
        name,
        barrier.toString(),
        dir.resolve(name + ".claims").toString());
  }

  private List<Claim> readClaims(String name) throws Exception {
    List<Claim> claims = new ArrayList<>();
    for (String line : Files.readAllLines(dir.resolve(name + ".claims"))) {
      String[] parts = line.split(" ");
      claims.add(new Claim(name, parts[0], Long.parseLong(parts[1])));
    }
    return claims;
  }

  private static void collect(JsonNode node, List<JsonNode> into) {
    into.add(node);
    for (JsonNode child : node.path("Plans")) {
      collect(child, into);
    }
  }

  /** Keeps the first claim statement seen since it was reset, for EXPLAIN. */
  static final class ClaimCapture implements ExecuteListener {
    private static final long serialVersionUID = 1L;

    final transient AtomicReference<Query> query = new AtomicReference<>();

    @Override
    public void executeStart(ExecuteContext ctx) {
      String s = ctx.sql();
      if (s != null && s.toLowerCase(java.util.Locale.ROOT).contains("skip locked")) {
        query.compareAndSet(null, ctx.query());
      }
    }
  }
}

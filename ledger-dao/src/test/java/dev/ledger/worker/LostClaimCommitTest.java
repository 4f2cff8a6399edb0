package dev.ledger.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A claim whose commit succeeded on the server while its answer was lost (the connection aborted
 * right after a real commit, SQLState 08006; for a claim that commits itself, right after its
 * execute, issue 26) costs no attempt: the tasks it claimed are given back at the pool's next claim
 * and run once each as the same attempt, long before their lease would have run out (issue 23,
 * "never lose").
 */
class LostClaimCommitTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final int TASKS = 6;
  private static final Duration LEASE = Duration.ofSeconds(30);

  private WorkerPool pool;
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final Map<String, AtomicInteger> ran = new ConcurrentHashMap<>();

  @AfterEach
  void close() {
    if (pool != null) {
      pool.close(Duration.ZERO);
    }
  }

  /**
   * A data source whose connections, while armed, lose the answer of the next commit of a
   * transaction that ran the claim statement (or of the claim statement's execute, when it commits
   * itself): the commit is made for real, then the connection is aborted and the commit (or the
   * execute) throws a connection-loss error, as when the network drops the answer.
   */
  private static final class LosesClaimAnswer {
    /** A fragment only the claim statement's SQL has: its CTE that logs the claims. */
    private static final String CLAIM_TOKEN = "\"logged\"";

    final AtomicBoolean armed = new AtomicBoolean();
    final AtomicInteger fired = new AtomicInteger();

    DataSource wrap(DataSource real) {
      return (DataSource)
          Proxy.newProxyInstance(
              DataSource.class.getClassLoader(),
              new Class<?>[] {DataSource.class},
              (proxy, m, args) -> {
                Object out = invoke(real, m, args);
                return out instanceof Connection c ? connection(c) : out;
              });
    }

    private Connection connection(Connection real) {
      boolean[] claimRan = {false};
      InvocationHandler h =
          (proxy, m, args) -> {
            String name = m.getName();
            if ((name.equals("prepareStatement") || name.equals("prepareCall"))
                && args != null
                && args[0] instanceof String sql
                && sql.contains(CLAIM_TOKEN)
                && sql.contains("'claimed'")) {
              if (real.getAutoCommit()) {
                // a claim that commits itself (issue 26): the server commits before it answers,
                // so the answer of the execute itself is what gets lost
                return selfCommitting(real, (PreparedStatement) invoke(real, m, args));
              }
              claimRan[0] = true;
            }
            if (name.equals("commit") && claimRan[0] && armed.compareAndSet(true, false)) {
              claimRan[0] = false;
              real.commit();
              real.abort(Runnable::run);
              fired.incrementAndGet();
              throw new SQLException("connection lost", "08006");
            }
            if (name.equals("commit") || name.equals("rollback")) {
              claimRan[0] = false;
            }
            return invoke(real, m, args);
          };
      return (Connection)
          Proxy.newProxyInstance(
              Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, h);
    }

    /** The claim's statement, losing the answer of its execute once while armed. */
    private PreparedStatement selfCommitting(Connection real, PreparedStatement ps) {
      InvocationHandler h =
          (proxy, m, args) -> {
            if (m.getName().equals("execute") && armed.compareAndSet(true, false)) {
              ps.execute();
              real.abort(Runnable::run);
              fired.incrementAndGet();
              throw new SQLException("connection lost", "08006");
            }
            return invoke(ps, m, args);
          };
      return (PreparedStatement)
          Proxy.newProxyInstance(
              PreparedStatement.class.getClassLoader(),
              new Class<?>[] {PreparedStatement.class},
              h);
    }

    private static Object invoke(Object target, Method m, Object[] args) throws Throwable {
      try {
        return m.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }
  }

  private double count(String meter, String domain) {
    Counter c = registry.find(meter).tag("domain", domain).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void
      tasks_claimed_by_a_commit_whose_answer_was_lost_run_once_as_the_same_attempt_before_their_lease_ends()
          throws Exception {
    LosesClaimAnswer lossy = new LosesClaimAnswer();
    Ledger ledger = Ledger.open(lossy.wrap(PG.dataSource()));
    String domain = "lost-claim";
    ledger.provision(domain);
    List<TaskSpec> specs = new ArrayList<>();
    for (int i = 0; i < TASKS; i++) {
      specs.add(TaskSpec.builder(domain, "task " + i).build());
    }
    List<String> ids = ledger.fileAll(specs);
    lossy.armed.set(true);
    long t0 = System.nanoTime();
    pool =
        WorkerPool.builder(ledger)
            .concurrency(2)
            .prefetch(2)
            .lease(LEASE)
            .pollInterval(Duration.ofMillis(200))
            .retry(new RetryPolicy(1, Duration.ofMillis(50), Duration.ofMillis(50), 1.0, 0.0))
            .metrics(MicrometerWorkerMetrics.of(registry))
            .domain(
                domain,
                (task, ctx) -> {
                  ran.computeIfAbsent(task.id(), id -> new AtomicInteger()).incrementAndGet();
                  return Outcome.done("ok");
                })
            .start();
    // well within the lease: without the give-back the lost claim's tasks wait for its end
    long end = t0 + Duration.ofSeconds(12).toNanos();
    while (count("ledger.tasks.completed", domain) < TASKS && System.nanoTime() < end) {
      Thread.sleep(20);
    }
    Duration took = Duration.ofNanos(System.nanoTime() - t0);

    assertThat(lossy.fired.get()).isEqualTo(1);
    assertThat(took).isLessThan(LEASE.dividedBy(2));
    assertThat(ledger.countByStatus(domain))
        .containsEntry(Status.COMPLETED, (long) TASKS)
        .containsEntry(Status.INVALIDATED, 0L)
        .containsEntry(Status.CLAIMED, 0L)
        .containsEntry(Status.ADMITTED, 0L);
    assertThat(ledger.deadLetters(domain)).isEmpty();
    assertThat(ran).containsOnlyKeys(ids);
    assertThat(ran.values()).allMatch(n -> n.get() == 1);
    int released = 0;
    for (String id : ids) {
      Task t = ledger.get(id);
      assertThat(t.status()).isEqualTo(Status.COMPLETED);
      assertThat(t.supersededBy()).isNull();
      long claims = ledger.history(id).stream().filter(e -> e.kind().equals("claimed")).count();
      long releases = ledger.history(id).stream().filter(e -> e.kind().equals("released")).count();
      // a task the lost claim took was released once and claimed again; the others claimed once
      assertThat(claims).isEqualTo(1 + releases);
      assertThat(releases).isBetween(0L, 1L);
      released += (int) releases;
    }
    // the lost claim's batch: concurrency 2 and prefetch 2
    assertThat(released).isEqualTo(4);
    assertThat(count("ledger.tasks.failed", domain)).isZero();
    assertThat(count("ledger.tasks.retried", domain)).isZero();
    assertThat(count("ledger.tasks.dead", domain)).isZero();
    assertThat(count("ledger.tasks.lease.lost", domain)).isZero();
  }
}

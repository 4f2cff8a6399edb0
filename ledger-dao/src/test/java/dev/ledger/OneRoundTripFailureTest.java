package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.testing.PostgresExtension;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The failure paths of a filing and a claim that commit themselves in one round trip (issue 26,
 * {@link OneRoundTripTest}): a lock wait past {@code lock_timeout} (set inside the execute) is the
 * typed error and leaves nothing; a statement the server refuses is a typed error and leaves
 * nothing (the server rolled its implicit transaction back); a backend killed during the execute is
 * an unknown outcome, and the server rolled it back; the connection goes back to the pool each time
 * (no connection of the pool stays in use, and the next call succeeds).
 */
class OneRoundTripFailureTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final Claimer ME = Claimer.of("me").lease(Duration.ofMinutes(5));

  private static final ExecutorService THREADS = Executors.newCachedThreadPool();

  private static HikariDataSource quickPool;
  private static HikariDataSource patientPool;

  /** Lock waits bounded at 300 ms. */
  private static Ledger quick;

  /** Lock waits bounded at 30 s: the test kills the backend first. */
  private static Ledger patient;

  @BeforeAll
  static void open() {
    quickPool = PostgresExtension.pool(PG.jdbcUrl(), 2);
    patientPool = PostgresExtension.pool(PG.jdbcUrl(), 2);
    quick =
        Ledger.open(
            quickPool,
            LedgerConfig.builder()
                .timeouts(Timeouts.defaults().withLock(Duration.ofMillis(300)))
                .build());
    patient =
        Ledger.open(
            patientPool,
            LedgerConfig.builder()
                .timeouts(Timeouts.defaults().withLock(Duration.ofSeconds(30)))
                .build());
  }

  @AfterAll
  static void close() {
    THREADS.shutdownNow();
    quickPool.close();
    patientPool.close();
  }

  @Test
  void a_filing_waiting_past_lock_timeout_is_the_typed_error_and_leaves_nothing() throws Exception {
    quick.fileAndAdmit(TaskSpec.builder("f-bounded", "warm").build()); // the route cached
    try (Connection holder = holdDomainExclusively("f-bounded")) {
      long t0 = System.nanoTime();
      assertThatThrownBy(() -> quick.fileAndAdmit(TaskSpec.builder("f-bounded", "late").build()))
          .isInstanceOfSatisfying(
              LedgerTimeoutException.class,
              e -> {
                assertThat(e.bound()).isEqualTo(LedgerTimeoutException.Bound.LOCK);
                assertThat(e.outcomeUnknown()).isFalse();
              });
      assertThatThrownBy(
              () -> quick.fileAll(List.of(TaskSpec.builder("f-bounded", "late batch").build())))
          .isInstanceOfSatisfying(
              LedgerTimeoutException.class,
              e -> assertThat(e.bound()).isEqualTo(LedgerTimeoutException.Bound.LOCK));
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
      assertThat(quickPool.getHikariPoolMXBean().getActiveConnections()).isZero();
      holder.rollback();
    }
    assertThat(rows("f-bounded")).isEqualTo("tasks 1, events 2, routes 1");
    quick.fileAndAdmit(TaskSpec.builder("f-bounded", "after").build());
    assertThat(rows("f-bounded")).isEqualTo("tasks 2, events 4, routes 2");
  }

  @Test
  void a_filing_the_server_refuses_is_a_typed_error_and_leaves_nothing() throws Exception {
    quick.fileAndAdmit(TaskSpec.builder("f-refused", "warm").build());
    String schema = OneRoundTripTest.schemaOf(PG, "f-refused");
    execute(
        "CREATE FUNCTION "
            + schema
            + ".refuse() RETURNS trigger LANGUAGE plpgsql AS"
            + " $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$");
    execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON "
            + schema
            + ".events FOR EACH ROW EXECUTE FUNCTION "
            + schema
            + ".refuse()");
    try {
      assertThatThrownBy(
              () ->
                  quick.fileAndAdmit(
                      TaskSpec.builder("f-refused", "refused").origin("shop", "o-1").build()))
          .isExactlyInstanceOf(LedgerStorageException.class)
          .isInstanceOfSatisfying(
              LedgerStorageException.class,
              e -> {
                assertThat(e.sqlState()).isEqualTo("P0001");
                assertThat(e.outcomeUnknown()).isFalse();
              });
      assertThat(quickPool.getHikariPoolMXBean().getActiveConnections()).isZero();
    } finally {
      execute("DROP TRIGGER refuse ON " + schema + ".events");
    }
    assertThat(rows("f-refused")).isEqualTo("tasks 1, events 2, routes 1");
    // the upstream event was not taken: filing it again files it
    String id =
        quick.fileAndAdmit(TaskSpec.builder("f-refused", "refused").origin("shop", "o-1").build());
    assertThat(quick.get(id).status()).isEqualTo(Status.ADMITTED);
    assertThat(rows("f-refused")).isEqualTo("tasks 2, events 4, routes 2");
  }

  @Test
  void a_backend_killed_during_a_filing_is_an_unknown_outcome_and_leaves_nothing()
      throws Exception {
    patient.fileAndAdmit(TaskSpec.builder("f-killed", "warm").build());
    try (Connection holder = holdDomainExclusively("f-killed")) {
      Future<String> filing =
          THREADS.submit(
              () ->
                  patient.fileAndAdmit(
                      TaskSpec.builder("f-killed", "killed").origin("shop", "k-1").build()));
      terminate(waiting("advisory"));
      assertThatThrownBy(() -> filing.get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .satisfies(
              e ->
                  assertThat(e.getCause())
                      .isInstanceOfSatisfying(
                          LedgerStorageException.class,
                          s -> assertThat(s.outcomeUnknown()).isTrue()));
      holder.rollback();
    }
    assertThat(patientPool.getHikariPoolMXBean().getActiveConnections()).isZero();
    // the server rolled it back; the retry an upstream event makes safe files it once
    assertThat(rows("f-killed")).isEqualTo("tasks 1, events 2, routes 1");
    String id =
        patient.fileAndAdmit(TaskSpec.builder("f-killed", "killed").origin("shop", "k-1").build());
    assertThat(patient.withOrigin("f-killed", "shop")).extracting(Task::id).containsExactly(id);
  }

  @Test
  void a_claim_waiting_past_lock_timeout_is_the_typed_error_and_leaves_nothing() throws Exception {
    for (int i = 0; i < 3; i++) {
      quick.fileAndAdmit(TaskSpec.builder("c-bounded", "task " + i).build());
    }
    assertThat(quick.claimNext("c-bounded", ME)).isPresent(); // the schema cached
    try (Connection holder = holdTasksTable("c-bounded")) {
      assertThatThrownBy(() -> quick.claimBatch("c-bounded", ME, 2))
          .isInstanceOfSatisfying(
              LedgerTimeoutException.class,
              e -> {
                assertThat(e.bound()).isEqualTo(LedgerTimeoutException.Bound.LOCK);
                assertThat(e.outcomeUnknown()).isFalse();
              });
      assertThat(quickPool.getHikariPoolMXBean().getActiveConnections()).isZero();
      holder.rollback();
    }
    assertThat(claimed("c-bounded")).isEqualTo("claimed events 1, claimed tasks 1");
    assertThat(quick.claimBatch("c-bounded", ME, 5)).hasSize(2);
  }

  @Test
  void a_backend_killed_during_a_claim_is_an_unknown_outcome_and_leaves_nothing() throws Exception {
    for (int i = 0; i < 3; i++) {
      patient.fileAndAdmit(TaskSpec.builder("c-killed", "task " + i).build());
    }
    assertThat(patient.claimNext("c-killed", ME)).isPresent();
    try (Connection holder = holdTasksTable("c-killed")) {
      Future<List<Lease>> claim = THREADS.submit(() -> patient.claimBatch("c-killed", ME, 2));
      terminate(waiting("relation"));
      assertThatThrownBy(() -> claim.get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .satisfies(
              e ->
                  assertThat(e.getCause())
                      .isInstanceOfSatisfying(
                          LedgerStorageException.class,
                          s -> assertThat(s.outcomeUnknown()).isTrue()));
      holder.rollback();
    }
    assertThat(patientPool.getHikariPoolMXBean().getActiveConnections()).isZero();
    assertThat(claimed("c-killed")).isEqualTo("claimed events 1, claimed tasks 1");
    assertThat(patient.claimBatch("c-killed", ME, 5)).hasSize(2);
  }

  @Test
  void a_filing_whose_answer_was_lost_is_an_unknown_outcome_and_a_retry_returns_the_same_task()
      throws Exception {
    AtomicBoolean armed = new AtomicBoolean();
    try (HikariDataSource pool = PostgresExtension.pool(PG.jdbcUrl(), 2)) {
      Ledger lossy = Ledger.open(losesFilingAnswer(pool, armed));
      lossy.fileAndAdmit(TaskSpec.builder("f-lost", "warm").build());
      TaskSpec spec = TaskSpec.builder("f-lost", "charge").origin("shop", "lost-1").build();
      armed.set(true);
      assertThatThrownBy(() -> lossy.fileAndAdmit(spec))
          .isInstanceOfSatisfying(
              LedgerStorageException.class, e -> assertThat(e.outcomeUnknown()).isTrue());
      assertThat(armed.get()).isFalse();
      assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isZero();
      // the server committed it before it answered: the retry finds it
      assertThat(rows("f-lost")).isEqualTo("tasks 2, events 4, routes 2");
      String id = lossy.fileAndAdmit(spec);
      assertThat(lossy.withOrigin("f-lost", "shop")).extracting(Task::id).containsExactly(id);
      assertThat(lossy.history(id))
          .extracting(LoggedEvent::kind)
          .containsExactly("created", "admitted");
      assertThat(rows("f-lost")).isEqualTo("tasks 2, events 4, routes 2");
    }
  }

  /**
   * A data source whose connections, while armed, lose the answer of the next filing statement run
   * in autocommit mode (one that commits itself): the statement runs for real, then the connection
   * is aborted and the execute throws a connection-loss error.
   */
  private static DataSource losesFilingAnswer(DataSource real, AtomicBoolean armed) {
    return (DataSource)
        Proxy.newProxyInstance(
            DataSource.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (p, m, args) -> {
              Object out = invoke(real, m, args);
              if (!(out instanceof Connection c)) {
                return out;
              }
              return Proxy.newProxyInstance(
                  Connection.class.getClassLoader(),
                  new Class<?>[] {Connection.class},
                  (pc, mc, ac) -> {
                    Object r = invoke(c, mc, ac);
                    if (mc.getName().equals("prepareStatement")
                        && ((String) ac[0]).startsWith("with l as materialized")
                        && c.getAutoCommit()) {
                      PreparedStatement ps = (PreparedStatement) r;
                      return Proxy.newProxyInstance(
                          PreparedStatement.class.getClassLoader(),
                          new Class<?>[] {PreparedStatement.class},
                          (pp, mp, ap) -> {
                            Object done = invoke(ps, mp, ap);
                            if (mp.getName().startsWith("execute")
                                && armed.compareAndSet(true, false)) {
                              c.abort(Runnable::run);
                              throw new SQLException("connection lost", "08006");
                            }
                            return done;
                          });
                    }
                    return r;
                  });
            });
  }

  private static Object invoke(Object target, Method m, Object[] args) throws Throwable {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  /** A transaction holding a domain's advisory lock exclusively (as a replay or a scrub does). */
  private static Connection holdDomainExclusively(String domain) throws SQLException {
    Connection holder = PG.connect();
    holder.setAutoCommit(false);
    try (PreparedStatement ps =
        holder.prepareStatement("SELECT pg_advisory_xact_lock(hashtext('ledger_domain:' || ?))")) {
      ps.setString(1, domain);
      ps.executeQuery().close();
    }
    return holder;
  }

  /** A transaction holding a domain's tasks table in a mode no claim's update can share. */
  private static Connection holdTasksTable(String domain) throws SQLException {
    String schema = OneRoundTripTest.schemaOf(PG, domain);
    Connection holder = PG.connect();
    holder.setAutoCommit(false);
    try (Statement s = holder.createStatement()) {
      s.execute("LOCK TABLE " + schema + ".tasks IN EXCLUSIVE MODE");
    }
    return holder;
  }

  /** The pid of the one other session waiting for a lock of this kind, within 10 s. */
  private static int waiting(String lockType) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    try (Connection looker = PG.connect()) {
      while (System.nanoTime() < deadline) {
        try (PreparedStatement ps =
            looker.prepareStatement(
                "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    + " AND wait_event = ? AND datname = current_database()")) {
          ps.setString(1, lockType);
          try (ResultSet rs = ps.executeQuery()) {
            if (rs.next()) {
              int pid = rs.getInt(1);
              assertThat(rs.next()).isFalse();
              return pid;
            }
          }
        }
        Thread.sleep(20);
      }
    }
    throw new AssertionError("no session waited for a lock of type " + lockType);
  }

  private static void terminate(int pid) throws SQLException {
    try (Connection c = PG.connect();
        Statement s = c.createStatement()) {
      s.execute("SELECT pg_terminate_backend(" + pid + ")");
    }
  }

  private static void execute(String sql) throws SQLException {
    try (Connection c = PG.connect();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  /** The domain's tasks, events and routes (routes still open + completed). */
  private static String rows(String domain) throws SQLException {
    String schema = OneRoundTripTest.schemaOf(PG, domain);
    try (Connection c = PG.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT (SELECT count(*) FROM "
                    + schema
                    + ".tasks), (SELECT count(*) FROM "
                    + schema
                    + ".events), (SELECT count(*) FROM public.ledger_tasks WHERE domain = ?)")) {
      ps.setString(1, domain);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return "tasks " + rs.getInt(1) + ", events " + rs.getInt(2) + ", routes " + rs.getInt(3);
      }
    }
  }

  private static String claimed(String domain) throws SQLException {
    String schema = OneRoundTripTest.schemaOf(PG, domain);
    try (Connection c = PG.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT (SELECT count(*) FROM "
                    + schema
                    + ".events WHERE kind = 'claimed'), (SELECT count(*) FROM "
                    + schema
                    + ".tasks WHERE status = 'claimed')")) {
      rs.next();
      return "claimed events " + rs.getInt(1) + ", claimed tasks " + rs.getInt(2);
    }
  }
}

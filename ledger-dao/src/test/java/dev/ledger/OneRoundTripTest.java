package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.testing.PostgresExtension;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The ledger's own filing and claim in one round trip (issue 26): in a transaction of the ledger's
 * own, with the domain's schema cached, {@code file}, {@code fileAndAdmit}, {@code fileAll}, the
 * uncontrolled claim ({@code claimBatch}, the worker port's claim) and the worker port's {@code
 * completeAvailable} each send one JDBC execute that commits itself (PostgreSQL commits an
 * execute's implicit transaction before it answers) and no commit; a claim from a larger window is
 * one more such execute; inside a caller's transaction nothing commits. Round trips are counted on
 * the JDBC connection (every call that reaches the server: statements prepared, savepoints,
 * commits, rollbacks), as {@link FilingStatementsTest} counts them. The failure paths are {@link
 * OneRoundTripFailureTest}'s.
 */
class OneRoundTripTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  /** The JDBC calls that each cost a round trip. */
  static final Set<String> ROUND_TRIPS =
      Set.of(
          "prepareStatement",
          "prepareCall",
          "createStatement",
          "setSavepoint",
          "releaseSavepoint",
          "rollback",
          "commit");

  private static final Claimer ME = Claimer.of("me").lease(Duration.ofMinutes(5));

  private static final List<String> CALLS = new CopyOnWriteArrayList<>();

  private static Ledger ledger;

  @BeforeAll
  static void open() {
    ledger = Ledger.open(counting(PG.dataSource(), CALLS));
  }

  @Test
  void a_filing_in_the_ledgers_own_transaction_is_one_execute_and_no_commit() throws Exception {
    ledger.provision("filed");
    ledger.fileAndAdmit(TaskSpec.builder("filed", "warm").build()); // the route cached

    CALLS.clear();
    String admitted = ledger.fileAndAdmit(TaskSpec.builder("filed", "admitted").build());
    assertThat(CALLS).containsExactly("prepareStatement");
    assertThat(ledger.get(admitted).status()).isEqualTo(Status.ADMITTED);
    assertThat(ledger.history(admitted))
        .extracting(LoggedEvent::kind)
        .containsExactly("created", "admitted");

    CALLS.clear();
    String proposed =
        ledger.file(TaskSpec.builder("filed", "proposed").origin("shop", "order-1").build());
    assertThat(CALLS).containsExactly("prepareStatement");
    assertThat(ledger.get(proposed).status()).isEqualTo(Status.PROPOSED);
    assertThat(ledger.history(proposed)).extracting(LoggedEvent::kind).containsExactly("created");

    // the same upstream event again: the one statement finds the first task and writes nothing
    CALLS.clear();
    assertThat(ledger.file(TaskSpec.builder("filed", "again").origin("shop", "order-1").build()))
        .isEqualTo(proposed);
    assertThat(CALLS).containsExactly("prepareStatement");
    assertThat(ledger.withOrigin("filed", "shop")).hasSize(1);

    // and with fileAndAdmit: the statement wrote nothing, so the first task is admitted in a
    // transaction that follows it (its bounds, the admission, the commit)
    CALLS.clear();
    assertThat(
            ledger.fileAndAdmit(
                TaskSpec.builder("filed", "again").origin("shop", "order-1").build()))
        .isEqualTo(proposed);
    assertThat(CALLS.get(0)).isEqualTo("prepareStatement");
    assertThat(CALLS.get(CALLS.size() - 1)).isEqualTo("commit");
    assertThat(CALLS).doesNotContain("rollback");
    assertThat(ledger.get(proposed).status()).isEqualTo(Status.ADMITTED);
    assertThat(ledger.history(proposed))
        .extracting(LoggedEvent::kind)
        .containsExactly("created", "admitted");
    assertThat(ledger.withOrigin("filed", "shop")).hasSize(1);

    // a batch: one execute, no commit
    CALLS.clear();
    List<String> ids =
        ledger.fileAll(
            List.of(
                TaskSpec.builder("filed", "batch 1").origin("shop", "batch-1").build(),
                TaskSpec.builder("filed", "batch 2").build()));
    assertThat(CALLS).containsExactly("prepareStatement");
    assertThat(ids).hasSize(2).doesNotHaveDuplicates();
    for (String id : ids) {
      assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
    }
    // the batch again: its upstream event met the unique key; the lookup is a second execute
    CALLS.clear();
    List<String> again =
        ledger.fileAll(
            List.of(TaskSpec.builder("filed", "batch 1").origin("shop", "batch-1").build()));
    assertThat(again).containsExactly(ids.get(0));
    assertThat(CALLS).containsExactly("prepareStatement", "prepareStatement");
    assertThat(ledger.withOrigin("filed", "shop")).hasSize(2);
    assertThat(taskCount("filed")).isEqualTo(5);
  }

  @Test
  void a_filing_the_ledger_cannot_make_one_statement_runs_in_a_transaction_as_before()
      throws Exception {
    ledger.provision("dependent");
    String first = ledger.fileAndAdmit(TaskSpec.builder("dependent", "first").build());

    // a dependency is checked first: the bounds, the check, the filing, the commit
    CALLS.clear();
    String after =
        ledger.fileAndAdmit(
            TaskSpec.builder("dependent", "after").dependsOn(List.of(first)).build());
    assertThat(CALLS)
        .containsExactly("prepareStatement", "prepareStatement", "prepareStatement", "commit");
    assertThat(ledger.get(after).status()).isEqualTo(Status.ADMITTED);
    assertThat(ledger.history(after))
        .extracting(LoggedEvent::kind)
        .containsExactly("created", "admitted");
  }

  @Test
  void an_uncontrolled_claim_and_a_pools_completion_are_one_execute_each_and_no_commit()
      throws Exception {
    for (int i = 0; i < 6; i++) {
      ledger.fileAndAdmit(TaskSpec.builder("claimed", "task " + i).build());
    }
    assertThat(ledger.claimNext("claimed", ME)).isPresent(); // schema cached

    CALLS.clear();
    List<Lease> two = ledger.claimBatch("claimed", ME, 2);
    assertThat(CALLS).containsExactly("prepareStatement");
    assertThat(two).hasSize(2);

    CALLS.clear();
    List<ClaimedTask> pool = ledger.worker().claimTasks("claimed", ME, 2);
    assertThat(CALLS).containsExactly("prepareStatement");
    assertThat(pool).hasSize(2);
    assertThat(claimedEvents("claimed")).isEqualTo(5);

    // the pool's completions of a batch: one execute that commits itself
    List<Completion> done = new ArrayList<>();
    for (Lease l : two) {
      done.add(new Completion(l, "done"));
    }
    for (ClaimedTask t : pool) {
      done.add(new Completion(t.lease(), "done"));
    }
    CALLS.clear();
    CompletedBatch completed = ledger.worker().completeAvailable("claimed", done);
    assertThat(CALLS).containsExactly("prepareStatement");
    assertThat(completed.completed()).hasSize(4);
    assertThat(completed.refused()).isEmpty();
    assertThat(completed.busy()).isEmpty();
    for (Lease l : two) {
      assertThat(ledger.get(l.taskId()).status()).isEqualTo(Status.COMPLETED);
    }

    // a lease of another holder among them: its row is locked and refused, the rest completed
    Lease stale = new Lease(two.get(0).taskId(), "someone else", 1, two.get(0).until());
    Lease live = ledger.claimNext("claimed", ME).orElseThrow();
    CALLS.clear();
    CompletedBatch mixed =
        ledger
            .worker()
            .completeAvailable(
                "claimed", List.of(new Completion(stale, "x"), new Completion(live, "done")));
    assertThat(CALLS).containsExactly("prepareStatement");
    assertThat(mixed.completed()).containsExactly(live);
    assertThat(mixed.refused()).containsExactly(stale);

    // a task of no domain's: not locked, so the read of which exist follows, on its own
    Lease unknown = new Lease("t00000000000000-00000000", "me", 1, live.until());
    CALLS.clear();
    CompletedBatch none =
        ledger.worker().completeAvailable("claimed", List.of(new Completion(unknown, "x")));
    assertThat(CALLS).containsExactly("prepareStatement", "prepareStatement");
    assertThat(none.refused()).containsExactly(unknown);
    assertThat(none.busy()).isEmpty();
  }

  @Test
  void a_claim_from_a_larger_window_commits_on_its_own_after_the_first() throws Exception {
    for (int i = 0; i < 20; i++) {
      ledger.fileAndAdmit(TaskSpec.builder("windowed", "task " + i).build());
    }
    assertThat(ledger.claimNext("windowed", ME)).isPresent(); // schema cached, slack at its least
    String schema = schemaOf("windowed");
    int window = Ledger.claimWindow(1);

    try (Connection holder = PG.connect()) {
      holder.setAutoCommit(false);
      List<String> held = new ArrayList<>();
      try (Statement s = holder.createStatement();
          ResultSet rs =
              s.executeQuery(
                  "SELECT id FROM "
                      + schema
                      + ".tasks WHERE status = 'admitted' ORDER BY priority DESC, created, id"
                      + " LIMIT "
                      + window
                      + " FOR UPDATE")) {
        while (rs.next()) {
          held.add(rs.getString(1));
        }
      }
      assertThat(held).hasSize(window);

      CALLS.clear();
      List<Lease> one = ledger.claimBatch("windowed", ME, 1);
      // the first window was all held: it claimed nothing and committed; the larger one claimed
      assertThat(CALLS).containsExactly("prepareStatement", "prepareStatement");
      assertThat(one).hasSize(1);
      assertThat(held).doesNotContain(one.get(0).taskId());
      holder.rollback();
    }
    assertThat(claimedEvents("windowed")).isEqualTo(2);
  }

  @Test
  void inside_a_callers_transaction_a_filing_and_a_claim_commit_nothing() throws Exception {
    ledger.fileAndAdmit(TaskSpec.builder("joined", "before").build());
    assertThat(ledger.claimNext("joined", ME)).isPresent();
    ledger.fileAndAdmit(TaskSpec.builder("joined", "claimable").build());

    List<String> calls = new CopyOnWriteArrayList<>();
    try (Connection c = countingConnection(PG.dataSource().getConnection(), calls)) {
      c.setAutoCommit(false);
      LedgerTransaction in = ledger.in(c);
      String filed = in.fileAndAdmit(TaskSpec.builder("joined", "inside").build());
      List<Lease> claimed = in.claimBatch("joined", ME, 5);
      assertThat(claimed).hasSize(2);
      assertThat(calls).containsExactly("prepareStatement", "prepareStatement");
      assertThat(c.getAutoCommit()).isFalse();
      c.rollback();
      assertThatThrownBy(() -> ledger.get(filed)).isInstanceOf(TaskNotFoundException.class);
    }
    assertThat(claimedEvents("joined")).isEqualTo(1);
    assertThat(taskCount("joined")).isEqualTo(2);
  }

  private static String schemaOf(String domain) throws SQLException {
    return schemaOf(PG, domain);
  }

  /** A domain's schema, unquoted, as the directory in {@code pg}'s database routes it. */
  static String schemaOf(PostgresExtension pg, String domain) throws SQLException {
    try (Connection c = pg.connect();
        PreparedStatement ps =
            c.prepareStatement("SELECT schema FROM public.ledger_domains WHERE domain = ?")) {
      ps.setString(1, domain);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getString(1).replace("\"", "");
      }
    }
  }

  private static int claimedEvents(String domain) throws SQLException {
    return count("SELECT count(*) FROM " + schemaOf(domain) + ".events WHERE kind = 'claimed'");
  }

  private static int taskCount(String domain) throws SQLException {
    return count("SELECT count(*) FROM " + schemaOf(domain) + ".tasks");
  }

  private static int count(String sql) throws SQLException {
    try (Connection c = PG.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getInt(1);
    }
  }

  static DataSource counting(DataSource target, List<String> calls) {
    return (DataSource)
        Proxy.newProxyInstance(
            DataSource.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (proxy, method, args) -> {
              Object result;
              try {
                result = method.invoke(target, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
              if (result instanceof Connection c) {
                return countingConnection(c, calls);
              }
              return result;
            });
  }

  static Connection countingConnection(Connection target, List<String> calls) {
    return (Connection)
        Proxy.newProxyInstance(
            Connection.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              if (ROUND_TRIPS.contains(method.getName())) {
                calls.add(method.getName());
              }
              try {
                return method.invoke(target, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }
}

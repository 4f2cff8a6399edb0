package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.testing.PostgresExtension;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The round trips one {@code fileAndAdmit} costs (issue 26, B13). In a caller's transaction: one
 * statement, with an origin and upstream event or without, and no savepoint: the domain's lock
 * (with the upstream event's key and its lookup), then the row, both events and the route, in one
 * data-modifying statement; server-prepared by the driver once it has run it {@code
 * prepareThreshold} times on a connection. In a transaction of the ledger's own: the same
 * statement, also setting the transaction's bounds first, committing itself (no commit is sent).
 * Counted twice: the statements jOOQ runs (an execute listener) and every JDBC call that reaches
 * the server (a counting data source: statements prepared, savepoints, commits), so a statement
 * sent around jOOQ (the bounds' own {@code set_config}, a savepoint) is counted too.
 */
class FilingStatementsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  /** The JDBC calls that each cost a round trip. */
  private static final Set<String> ROUND_TRIPS =
      Set.of(
          "prepareStatement",
          "prepareCall",
          "createStatement",
          "setSavepoint",
          "releaseSavepoint",
          "rollback",
          "commit");

  @Test
  void a_filing_costs_one_statement_in_a_callers_transaction_and_one_round_trip_in_its_own()
      throws Exception {
    List<String> sql = new CopyOnWriteArrayList<>();
    List<String> calls = new CopyOnWriteArrayList<>();
    ExecuteListener listener =
        new ExecuteListener() {
          private static final long serialVersionUID = 1L;

          @Override
          public void executeStart(ExecuteContext ctx) {
            sql.add(ctx.sql());
          }
        };
    DataSource counted = counting(PG.dataSource(), calls);
    Ledger ledger = Ledger.open(counted, LedgerConfig.builder().executeListener(listener).build());
    ledger.provision("counted");
    ledger.fileAndAdmit(TaskSpec.builder("counted", "warm").origin("shop", "warm").build());

    String filedWithOrigin = null;
    for (boolean origin : new boolean[] {true, false}) {
      TaskSpec.Builder spec = TaskSpec.builder("counted", "order " + origin);
      if (origin) {
        spec.origin("shop", "order-1");
      }
      sql.clear();
      String id;
      try (Connection c = PG.dataSource().getConnection()) {
        c.setAutoCommit(false);
        calls.clear();
        id = counted(ledger, c, calls).fileAndAdmit(spec.build());
        assertThat(calls).as("origin %s: %s", origin, calls).containsExactly("prepareStatement");
        c.commit();
      }
      if (origin) {
        filedWithOrigin = id;
      }
      assertThat(sql).as("origin %s: %s", origin, sql).hasSize(1);
      assertThat(sql.get(0))
          .startsWith("with l as materialized (select \"pg_advisory_xact_lock_shared\"");
      assertThat(sql.get(0)).doesNotContain("set_config"); // the caller's transaction: no bounds
      assertThat(sql.get(0)).contains(" t as (insert into ");
      // the lookup rides along
      assertThat(sql.get(0).contains("\"upstream_event\" = ")).isEqualTo(origin);
      assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
      assertThat(ledger.history(id))
          .extracting(LoggedEvent::kind)
          .containsExactly("created", "admitted");
    }

    // the ledger's own transaction: the bounds ride on the one statement, which commits itself
    // (autocommit mode: the server commits before it answers; the ledger sends no commit)
    for (boolean origin : new boolean[] {true, false}) {
      TaskSpec.Builder spec = TaskSpec.builder("counted", "own " + origin);
      if (origin) {
        spec.origin("shop", "own-1");
      }
      sql.clear();
      calls.clear();
      String id = ledger.fileAndAdmit(spec.build());
      assertThat(calls).as("origin %s: %s", origin, calls).containsExactly("prepareStatement");
      assertThat(sql).as("origin %s: %s", origin, sql).hasSize(1);
      assertThat(sql.get(0))
          .startsWith(
              "with l as materialized (select \"set_config\"('lock_timeout', ?, true) as \"c0\","
                  + " \"set_config\"(");
      assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
    }

    // the same upstream event again: the lookup in the one statement finds the first task, and
    // nothing is written (what follows reads the task, to admit it if it is still proposed)
    sql.clear();
    assertThat(
            ledger.fileAndAdmit(
                TaskSpec.builder("counted", "again").origin("shop", "order-1").build()))
        .isEqualTo(filedWithOrigin);
    assertThat(sql.get(0)).startsWith("with l as materialized (");
    assertThat(sql.subList(1, sql.size())).noneMatch(q -> q.contains("insert into"));
    assertThat(ledger.withOrigin("counted", "shop")).hasSize(3);
    assertThat(ledger.history(filedWithOrigin))
        .extracting(LoggedEvent::kind)
        .containsExactly("created", "admitted");
  }

  @Test
  void a_batch_costs_one_statement_and_a_refiled_batch_writes_nothing() throws Exception {
    List<String> calls = new CopyOnWriteArrayList<>();
    Ledger ledger = Ledger.open(counting(PG.dataSource(), calls));
    ledger.provision("batched");
    List<TaskSpec> batch = new java.util.ArrayList<>();
    for (int i = 0; i < 3; i++) {
      batch.add(TaskSpec.builder("batched", "task " + i).origin("shop", "batch-" + i).build());
    }
    ledger.fileAll(List.of(TaskSpec.builder("batched", "warm").build()));
    calls.clear();
    List<String> ids = ledger.fileAll(batch);
    // bounds, lock and writes in one statement (issue 26, B12), committing itself
    assertThat(calls).containsExactly("prepareStatement");
    assertThat(ids).hasSize(3).doesNotHaveDuplicates();
    for (String id : ids) {
      assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
      assertThat(ledger.history(id))
          .extracting(LoggedEvent::kind)
          .containsExactly("created", "admitted");
    }

    // the same batch again: every row meets tasks_origin, one more statement finds the tasks
    calls.clear();
    assertThat(ledger.fileAll(batch)).isEqualTo(ids);
    assertThat(calls).containsExactly("prepareStatement", "prepareStatement");
    assertThat(ledger.withOrigin("batched", "shop")).hasSize(3);
    for (String id : ids) {
      assertThat(ledger.history(id))
          .extracting(LoggedEvent::kind)
          .containsExactly("created", "admitted");
    }

    // a spec with a dependency and an upstream event: the lock, then the lookup and the writes
    // inside a savepoint (a losing row's dependency edges roll back with it)
    TaskSpec dependent =
        TaskSpec.builder("batched", "after 0")
            .origin("shop", "batch-dependent")
            .dependsOn(List.of(ids.get(0)))
            .build();
    calls.clear();
    List<String> dependentIds = ledger.fileAll(List.of(dependent, batch.get(1)));
    assertThat(calls).contains("setSavepoint", "releaseSavepoint");
    assertThat(dependentIds.get(1)).isEqualTo(ids.get(1));
    assertThat(ledger.get(dependentIds.get(0)).status()).isEqualTo(Status.ADMITTED);
    assertThat(ledger.history(dependentIds.get(0)))
        .extracting(LoggedEvent::kind)
        .containsExactly("created", "admitted");
    assertThat(ledger.fileAll(List.of(dependent))).containsExactly(dependentIds.get(0));
    assertThat(ledger.withOrigin("batched", "shop")).hasSize(4);
  }

  @Test
  void the_driver_prepares_the_filing_statement_on_the_server() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    ledger.provision("prepared");
    try (Connection c = PG.dataSource().getConnection()) {
      c.setAutoCommit(false);
      int threshold = c.unwrap(org.postgresql.PGConnection.class).getPrepareThreshold();
      assertThat(threshold).isPositive();
      LedgerTransaction in = ledger.in(c);
      for (int i = 0; i < threshold + 1; i++) {
        in.fileAndAdmit(
            TaskSpec.builder("prepared", "task " + i).origin("shop", "prepared-" + i).build());
      }
      try (java.sql.Statement st = c.createStatement();
          java.sql.ResultSet rs =
              st.executeQuery(
                  "select count(*) from pg_prepared_statements"
                      + " where statement like 'with l as materialized (%'")) {
        rs.next();
        assertThat(rs.getInt(1)).isEqualTo(1);
      }
      c.commit();
      assertThat(ledger.withOrigin("prepared", "shop")).hasSize(threshold + 1);
    }
  }

  /** The ledger in the caller's transaction on {@code c}, its calls counted into {@code calls}. */
  private static LedgerTransaction counted(Ledger ledger, Connection c, List<String> calls) {
    return ledger.in(countingConnection(c, calls));
  }

  private static DataSource counting(DataSource target, List<String> calls) {
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

  private static Connection countingConnection(Connection target, List<String> calls) {
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

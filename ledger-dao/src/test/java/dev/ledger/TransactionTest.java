package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The ledger inside a caller's transaction (issue 12): plain JDBC ({@link Ledger#in(Connection)}),
 * jOOQ ({@link Ledger#in(org.jooq.Configuration)}) and Spring ({@code TransactionTemplate} with a
 * {@link TransactionAwareDataSourceProxy} handed to {@link Ledger#open}). The outbox: a business
 * row and a filed and admitted task commit together or not at all; nothing is visible to another
 * connection before the commit; {@code txid_current()} is the same before and after every ledger
 * call. Also a worker's completion with its own result row, a new domain's first filing, an
 * idempotent filing racing another transaction, and the refusals.
 */
class TransactionTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final String DOMAIN = "outbox";
  private static final Duration LEASE = Duration.ofMinutes(5);

  private static final org.jooq.Field<Long> TXID = DSL.field("txid_current()", Long.class);

  private static Ledger ledger;

  @BeforeAll
  static void setUp() throws SQLException {
    ledger = Ledger.open(PG.dataSource());
    ledger.provision(DOMAIN);
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE shop_orders (id text PRIMARY KEY)");
      s.execute("CREATE TABLE shop_results (task_id text PRIMARY KEY, result text NOT NULL)");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // plain JDBC

  @Test
  void jdbc_outbox_rollback_leaves_no_order_task_event_or_route() throws SQLException {
    String order = "jdbc-rollback";
    String id;
    try (Connection c = PG.dataSource().getConnection()) {
      c.setAutoCommit(false);
      insertOrder(c, order);
      long txid = txid(c);
      id = ledger.in(c).fileAndAdmit(orderTask(order));
      assertThat(txid(c)).isEqualTo(txid);
      assertThat(ledger.in(c).get(id).status()).isEqualTo(Status.ADMITTED);
      assertThat(txid(c)).isEqualTo(txid);
      assertNothingVisible(order, id);
      c.rollback();
    }
    assertNothingVisible(order, id);
  }

  @Test
  void jdbc_outbox_commit_makes_order_and_admitted_task_visible_together() throws SQLException {
    String order = "jdbc-commit";
    String id;
    try (Connection c = PG.dataSource().getConnection()) {
      c.setAutoCommit(false);
      long txid = txid(c);
      insertOrder(c, order);
      LedgerTransaction in = ledger.in(c);
      id = in.fileAndAdmit(orderTask(order));
      assertThat(txid(c)).isEqualTo(txid);
      in.rescore(id, 7, "urgent customer");
      assertThat(txid(c)).isEqualTo(txid);
      assertNothingVisible(order, id);
      c.commit();
    }
    assertCommitted(order, id, Status.ADMITTED);
    assertThat(kinds(id)).containsExactly("created", "admitted", "rescored");
  }

  @Test
  void a_refusal_in_the_callers_transaction_leaves_it_usable() throws SQLException {
    String order = "refused";
    try (Connection c = PG.dataSource().getConnection()) {
      c.setAutoCommit(false);
      insertOrder(c, order);
      long txid = txid(c);
      LedgerTransaction in = ledger.in(c);
      assertThatThrownBy(() -> in.admit("t-no-such-task"))
          .isInstanceOf(TaskNotFoundException.class);
      assertThatThrownBy(() -> in.file(TaskSpec.builder(DOMAIN, "").build()))
          .isInstanceOf(InvalidInputException.class)
          .hasMessageContaining("title");
      String id = in.file(orderTask(order));
      assertThatThrownBy(() -> in.post(id, "tracker:ops")).isInstanceOf(WrongStateException.class);
      assertThat(txid(c)).isEqualTo(txid);
      c.commit();
      assertCommitted(order, id, Status.PROPOSED);
    }
  }

  @Test
  void a_connection_in_autocommit_mode_is_refused_and_nothing_is_written() throws SQLException {
    try (Connection c = PG.dataSource().getConnection()) {
      assertThat(c.getAutoCommit()).isTrue();
      assertThatThrownBy(() -> ledger.in(c).file(TaskSpec.builder(DOMAIN, "autocommit").build()))
          .isInstanceOf(InvalidInputException.class)
          .hasMessageContaining("connection")
          .hasMessageContaining("autocommit");
    }
    assertThat(count("SELECT count(*) FROM " + tasks() + " WHERE title = 'autocommit'")).isZero();
  }

  // ---------------------------------------------------------------------------------------------
  // jOOQ

  @Test
  void jooq_outbox_rollback_and_commit() {
    String[] ids = new String[2];
    assertThatThrownBy(
            () ->
                DSL.using(PG.dataSource(), SQLDialect.POSTGRES)
                    .transaction(
                        cfg -> {
                          long txid = cfg.dsl().fetchValue(TXID);
                          cfg.dsl().execute("insert into shop_orders (id) values (?)", "jooq-1");
                          ids[0] = ledger.in(cfg).fileAndAdmit(orderTask("jooq-1"));
                          assertThat(cfg.dsl().fetchValue(TXID)).isEqualTo(txid);
                          throw new IllegalStateException("the order is refused");
                        }))
        .hasMessageContaining("the order is refused");
    assertNothingVisible("jooq-1", ids[0]);

    DSL.using(PG.dataSource(), SQLDialect.POSTGRES)
        .transaction(
            cfg -> {
              long txid = cfg.dsl().fetchValue(TXID);
              cfg.dsl().execute("insert into shop_orders (id) values (?)", "jooq-2");
              ids[1] = ledger.in(cfg.dsl()).fileAndAdmit(orderTask("jooq-2"));
              assertThat(cfg.dsl().fetchValue(TXID)).isEqualTo(txid);
              assertNothingVisible("jooq-2", ids[1]);
            });
    assertCommitted("jooq-2", ids[1], Status.ADMITTED);
  }

  // ---------------------------------------------------------------------------------------------
  // Spring: a TransactionAwareDataSourceProxy handed to Ledger.open

  @Test
  void spring_outbox_joins_the_transaction_of_the_template() {
    DataSource pool = PG.dataSource();
    Ledger spring = Ledger.open(new TransactionAwareDataSourceProxy(pool));
    TransactionTemplate template = new TransactionTemplate(new DataSourceTransactionManager(pool));
    JdbcTemplate jdbc = new JdbcTemplate(pool);
    String[] ids = new String[2];

    assertThatThrownBy(
            () ->
                template.executeWithoutResult(
                    status -> {
                      long txid = jdbc.queryForObject("select txid_current()", Long.class);
                      jdbc.update("insert into shop_orders (id) values (?)", "spring-1");
                      ids[0] = spring.fileAndAdmit(orderTask("spring-1"));
                      assertThat(jdbc.queryForObject("select txid_current()", Long.class))
                          .isEqualTo(txid);
                      assertThat(spring.get(ids[0]).status()).isEqualTo(Status.ADMITTED);
                      assertThat(jdbc.queryForObject("select txid_current()", Long.class))
                          .isEqualTo(txid);
                      throw new IllegalStateException("payment declined");
                    }))
        .hasMessageContaining("payment declined");
    assertNothingVisible("spring-1", ids[0]);

    template.executeWithoutResult(
        status -> {
          long txid = jdbc.queryForObject("select txid_current()", Long.class);
          jdbc.update("insert into shop_orders (id) values (?)", "spring-2");
          ids[1] = spring.file(orderTask("spring-2"));
          assertThat(jdbc.queryForObject("select txid_current()", Long.class)).isEqualTo(txid);
          spring.admit(ids[1]);
          assertThat(jdbc.queryForObject("select txid_current()", Long.class)).isEqualTo(txid);
          assertNothingVisible("spring-2", ids[1]);
        });
    assertCommitted("spring-2", ids[1], Status.ADMITTED);

    // a domain provisioned inside the Spring transaction goes with its rollback
    String schema = DomainSchemas.schemaName("spring-first");
    assertThatThrownBy(
            () ->
                template.executeWithoutResult(
                    status -> {
                      assertThat(spring.provision("spring-first")).isEqualTo(schema);
                      throw new IllegalStateException("changed my mind");
                    }))
        .hasMessageContaining("changed my mind");
    assertThat(schemaExists(schema)).isFalse();
    assertThat(spring.domains()).doesNotContain("spring-first");

    // outside a Spring transaction the proxy hands out an autocommit connection: the ledger's own
    Lease lease = spring.claim(ids[1], "spring-worker", LEASE, List.of(), Label.PUBLIC);
    assertThat(ledger.get(ids[1]).holder()).isEqualTo("spring-worker");
    spring.release(lease);
  }

  // ---------------------------------------------------------------------------------------------
  // a worker's completion with its own business write

  @Test
  void a_worker_completes_its_task_and_writes_its_result_in_one_transaction() throws SQLException {
    String id = ledger.fileAndAdmit(TaskSpec.builder(DOMAIN, "resize image 9").build());
    Lease lease = ledger.claim(id, "worker-1", LEASE, List.of(), Label.PUBLIC);

    try (Connection c = PG.dataSource().getConnection()) {
      c.setAutoCommit(false);
      long txid = txid(c);
      insertResult(c, id, "9.png");
      ledger.in(c).complete(lease, "resized");
      assertThat(txid(c)).isEqualTo(txid);
      c.rollback();
    }
    Task held = ledger.get(id);
    assertThat(held.status()).isEqualTo(Status.CLAIMED);
    assertThat(held.holder()).isEqualTo("worker-1");
    assertThat(held.attempts()).isEqualTo(lease.attempt());
    assertThat(count("SELECT count(*) FROM shop_results WHERE task_id = '" + id + "'")).isZero();
    assertThat(kinds(id)).containsExactly("created", "admitted", "claimed");
    lease = ledger.heartbeat(lease, LEASE); // the lease is still the worker's

    try (Connection c = PG.dataSource().getConnection()) {
      c.setAutoCommit(false);
      insertResult(c, id, "9.png");
      ledger.in(c).complete(lease, "resized");
      c.commit();
    }
    assertThat(ledger.get(id).status()).isEqualTo(Status.COMPLETED);
    assertThat(count("SELECT count(*) FROM shop_results WHERE task_id = '" + id + "'"))
        .isEqualTo(1);
    assertThat(kinds(id))
        .containsExactly("created", "admitted", "claimed", "heartbeat", "completed");
    assertThat(count("SELECT count(*) FROM ledger_tasks WHERE id = '" + id + "' AND completed"))
        .isEqualTo(1);
  }

  @Test
  void a_claim_in_the_callers_transaction_is_undone_by_its_rollback() throws SQLException {
    String domain = "claim-in-tx";
    ledger.provision(domain);
    String id = ledger.fileAndAdmit(TaskSpec.builder(domain, "only task").build());
    try (Connection c = PG.dataSource().getConnection()) {
      c.setAutoCommit(false);
      long txid = txid(c);
      Lease lease =
          ledger.in(c).claimNext(domain, "w", LEASE, List.of(), Label.PUBLIC).orElseThrow();
      assertThat(lease.taskId()).isEqualTo(id);
      assertThat(txid(c)).isEqualTo(txid);
      // the row is locked by the caller's transaction: another claimer skips it
      assertThat(ledger.claimNext(domain, "other", LEASE, List.of(), Label.PUBLIC)).isEmpty();
      c.rollback();
    }
    assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
    assertThat(ledger.claimNext(domain, "other", LEASE, List.of(), Label.PUBLIC))
        .map(Lease::attempt)
        .contains(1L);
  }

  // ---------------------------------------------------------------------------------------------
  // a new domain's first filing

  @Test
  void a_new_domains_first_filing_is_part_of_the_callers_transaction() throws SQLException {
    String domain = "first-in-tx";
    String schema = DomainSchemas.schemaName(domain);
    String id;
    try (Connection c = PG.dataSource().getConnection()) {
      c.setAutoCommit(false);
      long txid = txid(c);
      id = ledger.in(c).fileAndAdmit(TaskSpec.builder(domain, "first").build());
      assertThat(txid(c)).isEqualTo(txid);
      assertThat(ledger.in(c).get(id).status()).isEqualTo(Status.ADMITTED);
      // the domain's lock is held until the caller's transaction ends
      assertThat(tryDomainLock(domain)).isFalse();
      assertThat(schemaExists(schema)).isFalse(); // not visible before the commit
      c.rollback();
    }
    assertThat(schemaExists(schema)).isFalse();
    assertThat(count("SELECT count(*) FROM ledger_domains WHERE domain = '" + domain + "'"))
        .isZero();
    assertThat(
            count("SELECT count(*) FROM ledger_schema_state WHERE schema_name = '" + schema + "'"))
        .isZero();
    assertThat(count("SELECT count(*) FROM ledger_tasks WHERE id = '" + id + "'")).isZero();
    assertThat(tryDomainLock(domain)).isTrue();
    // the same ledger does not take the rolled-back schema for real
    assertThat(ledger.list(domain, Status.ADMITTED)).isEmpty();

    try (Connection c = PG.dataSource().getConnection()) {
      c.setAutoCommit(false);
      id = ledger.in(c).fileAndAdmit(TaskSpec.builder(domain, "first again").build());
      c.commit();
    }
    assertThat(schemaExists(schema)).isTrue();
    assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
    assertThat(Ledger.open(PG.dataSource()).list(domain, Status.ADMITTED))
        .extracting(Task::id)
        .containsExactly(id);
  }

  @Test
  void a_first_filing_that_cannot_provision_in_one_transaction_says_to_provision_ahead()
      throws SQLException {
    String domain = "orphan-schema";
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA \"" + DomainSchemas.schemaName(domain) + "\"");
    }
    try (Connection c = PG.dataSource().getConnection()) {
      c.setAutoCommit(false);
      insertOrder(c, "orphan");
      long txid = txid(c);
      assertThatThrownBy(() -> ledger.in(c).file(TaskSpec.builder(domain, "first").build()))
          .isInstanceOf(SchemaVersionException.class)
          .hasMessageContaining("cannot be made inside the caller's transaction")
          .hasMessageContaining("provision it ahead");
      assertThat(txid(c)).isEqualTo(txid); // a refusal: the transaction is still usable
      c.commit();
    }
    assertThat(count("SELECT count(*) FROM shop_orders WHERE id = 'orphan'")).isEqualTo(1);
    assertThat(count("SELECT count(*) FROM ledger_domains WHERE domain = '" + domain + "'"))
        .isZero();
  }

  // ---------------------------------------------------------------------------------------------
  // idempotent filing racing another caller's transaction

  @Test
  void an_idempotent_filing_that_loses_the_race_returns_the_winner_and_keeps_the_transaction()
      throws Exception {
    TaskSpec spec =
        TaskSpec.builder(DOMAIN, "charge order 77").origin("shop:orders", "order-77").build();
    try (Connection first = PG.dataSource().getConnection();
        Connection second = PG.dataSource().getConnection()) {
      first.setAutoCommit(false);
      second.setAutoCommit(false);
      String won = ledger.in(first).file(spec);
      long txid = txid(second);
      int pid = second.unwrap(org.postgresql.PGConnection.class).getBackendPID();
      insertOrder(second, "order-77");
      // blocks on the unique key until the first transaction ends
      CompletableFuture<String> lost =
          CompletableFuture.supplyAsync(() -> ledger.in(second).file(spec));
      awaitWaitingOnLock(pid);
      first.commit();
      assertThat(lost.get(30, TimeUnit.SECONDS)).isEqualTo(won);
      assertThat(txid(second)).isEqualTo(txid);
      second.commit(); // the transaction survived the unique-key error
    }
    assertThat(count("SELECT count(*) FROM shop_orders WHERE id = 'order-77'")).isEqualTo(1);
    assertThat(ledger.withOrigin(DOMAIN, "shop:orders")).hasSize(1);
  }

  // ---------------------------------------------------------------------------------------------
  // a pool that hands out autocommit-off connections

  @Test
  void a_pool_with_autocommit_off_is_refused_at_open() {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(PG.jdbcUrl());
    config.setMaximumPoolSize(2);
    config.setAutoCommit(false);
    try (HikariDataSource noAutoCommit = new HikariDataSource(config)) {
      assertThatThrownBy(() -> Ledger.open(noAutoCommit))
          .isInstanceOf(InvalidInputException.class)
          .hasMessageContaining("dataSource")
          .hasMessageContaining("autocommit");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // helpers

  private static TaskSpec orderTask(String order) {
    return TaskSpec.builder(DOMAIN, "ship order " + order).origin("shop", order).build();
  }

  private static void insertOrder(Connection c, String order) throws SQLException {
    try (PreparedStatement s = c.prepareStatement("INSERT INTO shop_orders (id) VALUES (?)")) {
      s.setString(1, order);
      s.executeUpdate();
    }
  }

  private static void insertResult(Connection c, String id, String result) throws SQLException {
    try (PreparedStatement s =
        c.prepareStatement("INSERT INTO shop_results (task_id, result) VALUES (?, ?)")) {
      s.setString(1, id);
      s.setString(2, result);
      s.executeUpdate();
    }
  }

  private static long txid(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT txid_current()")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static String tasks() {
    return "\"" + DomainSchemas.schemaName(DOMAIN) + "\".tasks";
  }

  /** Seen from another connection: no order, no task row, event or route of the id. */
  private static void assertNothingVisible(String order, String id) {
    assertThat(count("SELECT count(*) FROM shop_orders WHERE id = '" + order + "'")).isZero();
    assertThat(count("SELECT count(*) FROM " + tasks() + " WHERE id = '" + id + "'")).isZero();
    assertThat(
            count(
                "SELECT count(*) FROM \""
                    + DomainSchemas.schemaName(DOMAIN)
                    + "\".events WHERE task_id = '"
                    + id
                    + "'"))
        .isZero();
    assertThat(count("SELECT count(*) FROM ledger_tasks WHERE id = '" + id + "'")).isZero();
    assertThatThrownBy(() -> ledger.get(id)).isInstanceOf(TaskNotFoundException.class);
  }

  private static void assertCommitted(String order, String id, Status status) {
    assertThat(count("SELECT count(*) FROM shop_orders WHERE id = '" + order + "'")).isEqualTo(1);
    assertThat(ledger.get(id).status()).isEqualTo(status);
    assertThat(count("SELECT count(*) FROM ledger_tasks WHERE id = '" + id + "'")).isEqualTo(1);
  }

  private static List<String> kinds(String id) {
    return ledger.history(id).stream().map(LoggedEvent::kind).toList();
  }

  private static long count(String sql) {
    try (Connection c = PostgresExtension.connect(PG.databaseName());
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static boolean schemaExists(String schema) {
    return count("SELECT count(*) FROM pg_namespace WHERE nspname = '" + schema + "'") == 1;
  }

  /** Tries the domain's lock from another connection (and lets it go at once). */
  private static boolean tryDomainLock(String domain) throws SQLException {
    try (Connection c = PostgresExtension.connect(PG.databaseName());
        PreparedStatement s =
            c.prepareStatement(
                "SELECT pg_try_advisory_xact_lock(hashtext('ledger_domain:' || ?))")) {
      s.setString(1, domain);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  /** Waits until the session of that backend pid waits on a lock. */
  private static void awaitWaitingOnLock(int pid) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (count(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = "
                + pid
                + " AND wait_event_type = 'Lock'")
        == 0) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("session " + pid + " never waited on a lock");
      }
      Thread.sleep(10);
    }
  }
}

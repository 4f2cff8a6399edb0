package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.worker.Outcome;
import dev.ledger.worker.WorkerPool;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A least-privileged runtime role, as docs/what-can-go-wrong.md grants it: read and write on the
 * directory's and the domain schemas' tables and sequences, nothing else. Everything a service does
 * runs under it (filing, claims, completions, scrubs, replay, a worker pool woken by LISTEN); a
 * filing into a domain nobody provisioned fails at once, saying to provision it.
 */
class RuntimeRoleTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final String ROLE = "ledger_rt_" + UUID.randomUUID().toString().substring(0, 8);
  private static final String DOMAIN = "payments";

  private static HikariDataSource runtime;

  @BeforeAll
  static void grant() throws Exception {
    Ledger.open(PG.dataSource()).provision(DOMAIN); // the migration job's part, as the owner
    String schema = DomainSchemas.quotedSchemaName(DOMAIN);
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE ROLE " + ROLE + " LOGIN");
      s.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
      for (String sch : List.of("public", schema)) {
        s.execute("GRANT USAGE ON SCHEMA " + sch + " TO " + ROLE);
        s.execute(
            "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + sch + " TO " + ROLE);
        s.execute("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA " + sch + " TO " + ROLE);
      }
    }
    runtime = PostgresExtension.pool(PG.jdbcUrl().replaceAll("user=[^&]*", "user=" + ROLE), 8);
  }

  @AfterAll
  static void drop() throws Exception {
    runtime.close();
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute("DROP OWNED BY " + ROLE);
      s.execute("DROP ROLE " + ROLE);
    }
  }

  @Test
  void the_runtime_role_files_claims_completes_scrubs_replays_and_runs_a_listening_pool()
      throws Exception {
    Ledger ledger = Ledger.open(runtime, LedgerConfig.builder().runtimeDdl(false).build());
    String id =
        ledger.fileAndAdmit(TaskSpec.builder(DOMAIN, "reconcile").origin("crm", "evt-1").build());
    Lease lease = ledger.claim(id, "w1", Duration.ofMinutes(1), List.of(), Label.PUBLIC);
    ledger.complete(lease, "done");
    ledger.post(id, "tracker:ops");
    String erased =
        ledger.fileAndAdmit(TaskSpec.builder(DOMAIN, "alice's refund").origin("gdpr", "e").build());
    assertThat(ledger.scrubTasks(DOMAIN, "gdpr", new Redaction("erased", "erased", "erased")))
        .isEqualTo(1);
    long events = ledger.eventCount();
    assertThat(ledger.rebuild()).isEqualTo(events);
    assertThat(ledger.get(erased).spec().title()).isEqualTo("erased");
    assertThat(ledger.get(id).status()).isEqualTo(Status.COMPLETED);

    CountDownLatch handled = new CountDownLatch(1);
    try (WorkerPool pool =
        WorkerPool.builder(ledger)
            .dataSource(runtime)
            .pollInterval(Duration.ofMinutes(5)) // only a notification wakes it in time
            .domain(
                DOMAIN,
                (task, ctx) -> {
                  handled.countDown();
                  return Outcome.done("ok");
                })
            .start()) {
      Thread.sleep(300); // the pool is listening and has claimed nothing
      String woken = ledger.fileAndAdmit(TaskSpec.builder(DOMAIN, "wake").build());
      assertThat(handled.await(10, TimeUnit.SECONDS)).isTrue();
      awaitStatus(ledger, woken, Status.COMPLETED);
    }
  }

  @Test
  void runtime_ddl_under_a_role_that_may_not_create_schemas_fails_saying_to_provision()
      throws Exception {
    Ledger ledger = Ledger.open(runtime);
    assertThatThrownBy(() -> ledger.file(TaskSpec.builder("refunds", "t").build()))
        .isInstanceOf(SchemaVersionException.class)
        .hasMessage(
            "domain 'refunds' has no schema, and this ledger's database role may not create one"
                + " (permission denied, SQLState 42501): provision it ahead with `ledger-app"
                + " migrate --provision 'refunds'` as a role that may (or grant this role CREATE on"
                + " the database), and open the ledger with runtimeDdl(false) so that it never"
                + " tries");
    assertThat(ledger.domains()).doesNotContain("refunds");
  }

  private static void awaitStatus(Ledger ledger, String id, Status status)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (ledger.get(id).status() != status && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(ledger.get(id).status()).isEqualTo(status);
  }
}

package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A replay whose connection dies while it streams the event log ({@code COPY (SELECT ...) TO
 * STDOUT}) ends with a typed error at once and gives its connection back: pgjdbc keeps the
 * connection's lock for a {@code COPY} that never ended, and the rollback that followed used to
 * wait for it forever, holding a pooled connection per hung call.
 */
class ReplayConnectionLossTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final int TASKS = 30_000;

  @Test
  void a_replay_whose_backend_is_killed_during_the_copy_fails_typed_and_returns_its_connection()
      throws Exception {
    try (HikariDataSource pool = PostgresExtension.pool(PG.jdbcUrl(), 4)) {
      Ledger ledger = Ledger.open(pool);
      List<TaskSpec> specs = new ArrayList<>();
      for (int i = 0; i < TASKS; i++) {
        specs.add(TaskSpec.builder("replayed", "task " + i).body("body " + i).build());
        if (specs.size() == 5_000) {
          ledger.fileAll(specs);
          specs.clear();
        }
      }

      AtomicBoolean killing = new AtomicBoolean(true);
      AtomicInteger killed = new AtomicInteger();
      Thread killer = new Thread(() -> killCopies(killing, killed), "copy killer");
      killer.start();
      try {
        for (int round = 0; round < 4; round++) {
          int before = killed.get();
          LedgerStorageException e =
              assertTimeoutPreemptively(
                  Duration.ofSeconds(30),
                  () -> catchThrowableOfType(LedgerStorageException.class, ledger::rebuild),
                  "rebuild hung after its backend was killed");
          assertThat(e).as("round %d: rebuild must fail", round).isNotNull();
          assertThat(killed.get()).isGreaterThan(before);
          assertThat(e.sqlState()).matches("08...|57P0[1-3]");
          assertThat(e.getMessage())
              .startsWith("rebuild failed in the database (SQLState " + e.sqlState() + "): ")
              .doesNotEndWith(": null");
          awaitNoActiveConnection(pool);
        }
      } finally {
        killing.set(false);
        killer.join();
      }
      assertThat(ledger.rebuild()).isEqualTo(2L * TASKS); // filed admitted: created, admitted
      assertThat(ledger.countByStatus("replayed").get(Status.ADMITTED)).isEqualTo(TASKS);
      awaitNoActiveConnection(pool);
    }
  }

  /** Terminates every session of the test database that runs a {@code COPY ... TO STDOUT}. */
  private static void killCopies(AtomicBoolean killing, AtomicInteger killed) {
    try (Connection c = PostgresExtension.connect(PG.databaseName());
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ?"
                    + " AND pid <> pg_backend_pid() AND state = 'active'"
                    + " AND query LIKE 'COPY (%TO STDOUT%'")) {
      ps.setString(1, PG.databaseName());
      while (killing.get()) {
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            if (rs.getBoolean(1)) {
              killed.incrementAndGet();
            }
          }
        }
        Thread.sleep(1);
      }
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private static void awaitNoActiveConnection(HikariDataSource pool) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (pool.getHikariPoolMXBean().getActiveConnections() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isZero();
  }
}

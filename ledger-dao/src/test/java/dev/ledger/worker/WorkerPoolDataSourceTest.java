package dev.ledger.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.InvalidInputException;
import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.testing.LogCapture;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A pool's data source with no room for the listening connection and one more: the listening
 * connection is held for the pool's life, so with one connection every claim would wait for it. A
 * HikariCP pool of one is refused at start; any other data source that gives no second connection
 * is found out by the start's probe, which gives the listening connection back and polls.
 */
class WorkerPoolDataSourceTest {

  private static final String NO_ROOM =
      "the data source gave no second connection while the listening one was held";

  @Test
  void a_hikari_pool_of_one_connection_is_refused_at_start_naming_the_data_source()
      throws Exception {
    String db = PostgresExtension.newDatabase();
    try (HikariDataSource ledgers = PostgresExtension.pool(TestServer.get().urlFor(db), 4);
        HikariDataSource one = PostgresExtension.pool(TestServer.get().urlFor(db), 1)) {
      // the listening data source is the one checked, whether the ledger shares it or not
      Ledger ledger = Ledger.open(ledgers);
      ledger.provision("one");
      WorkerPool.Builder builder =
          WorkerPool.builder(ledger).dataSource(one).domain("one", (task, ctx) -> Outcome.done());
      assertThatThrownBy(builder::start)
          .isInstanceOfSatisfying(
              InvalidInputException.class, e -> assertThat(e.field()).isEqualTo("dataSource"))
          .hasMessageContaining("a HikariCP pool of 1 connection")
          .hasMessageContaining("at least 2 connections");
      // nothing was started: the same builder without the data source polls and runs tasks
      String id = ledger.fileAndAdmit(TaskSpec.builder("one", "polled").build());
      try (WorkerPool pool =
          WorkerPool.builder(ledger)
              .pollInterval(Duration.ofMillis(100))
              .domain("one", (task, ctx) -> Outcome.done())
              .start()) {
        awaitCompleted(ledger, id);
      }
    } finally {
      PostgresExtension.dropDatabase(db);
    }
  }

  @Test
  void a_data_source_with_no_second_connection_gets_the_listening_one_back_and_the_pool_polls()
      throws Exception {
    String db = PostgresExtension.newDatabase();
    LogCapture logs = LogCapture.begin();
    try (HikariDataSource backing = PostgresExtension.pool(TestServer.get().urlFor(db), 4)) {
      Ledger filer = Ledger.open(backing);
      filer.provision("single");
      // the pool's ledger shares the one connection with the listening one (opened without
      // runtime DDL: migrating takes a lock on one connection and runs Flyway on another)
      DataSource oneAtATime = new OneConnection(backing, Duration.ofSeconds(2));
      Ledger ledger =
          Ledger.open(oneAtATime, dev.ledger.LedgerConfig.builder().runtimeDdl(false).build());
      List<String> ran = new CopyOnWriteArrayList<>();
      try (WorkerPool pool =
          WorkerPool.builder(ledger)
              .dataSource(oneAtATime)
              .concurrency(2)
              .pollInterval(Duration.ofMillis(200))
              .domain(
                  "single",
                  (task, ctx) -> {
                    ran.add(task.id());
                    return Outcome.done();
                  })
              .start()) {
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!logs.text().contains(NO_ROOM) && System.nanoTime() < end) {
          Thread.sleep(20);
        }
        assertThat(logs.text()).contains(NO_ROOM);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
          ids.add(filer.fileAndAdmit(TaskSpec.builder("single", "task " + i).build()));
        }
        for (String id : ids) {
          awaitCompleted(filer, id);
        }
        assertThat(ran).containsExactlyInAnyOrderElementsOf(ids);
        assertThat(pool.listening()).isFalse();
      }
      assertThat(logs.text().split(NO_ROOM, -1)).hasSize(2); // warned once
      assertThat(logs.text()).doesNotContain("listening connection lost");
    } finally {
      logs.stop();
      PostgresExtension.dropDatabase(db);
    }
  }

  @Test
  void a_pool_that_found_no_spare_connection_at_start_listens_once_one_frees_up() throws Exception {
    String db = PostgresExtension.newDatabase();
    LogCapture logs = LogCapture.begin();
    try (HikariDataSource ledgers = PostgresExtension.pool(TestServer.get().urlFor(db), 6);
        HikariDataSource two = PostgresExtension.pool(TestServer.get().urlFor(db), 2)) {
      two.setConnectionTimeout(500);
      Ledger ledger = Ledger.open(ledgers);
      ledger.provision("frees");
      Connection held = two.getConnection(); // the application's: no spare one at the start
      try (WorkerPool pool =
          WorkerPool.builder(ledger)
              .dataSource(two)
              .pollInterval(Duration.ofMinutes(1))
              .domain("frees", (task, ctx) -> Outcome.done())
              .start()) {
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!logs.text().contains(NO_ROOM) && System.nanoTime() < end) {
          Thread.sleep(20);
        }
        assertThat(logs.text()).contains(NO_ROOM);
        assertThat(pool.listening()).isFalse();
        held.close();
        end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!pool.listening() && System.nanoTime() < end) {
          Thread.sleep(20);
        }
        assertThat(pool.listening()).isTrue();
        // woken by its notification, not by the poll a minute away
        String id = ledger.fileAndAdmit(TaskSpec.builder("frees", "woken").build());
        end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (ledger.get(id).status() != Status.COMPLETED && System.nanoTime() < end) {
          Thread.sleep(20);
        }
        assertThat(ledger.get(id).status()).isEqualTo(Status.COMPLETED);
      }
      assertThat(logs.text().split(NO_ROOM, -1)).hasSize(2); // warned once
    } finally {
      logs.stop();
      PostgresExtension.dropDatabase(db);
    }
  }

  @Test
  void close_gives_the_listening_connection_back_unsubscribed() throws Exception {
    String db = PostgresExtension.newDatabase();
    try (HikariDataSource two = PostgresExtension.pool(TestServer.get().urlFor(db), 2)) {
      Ledger ledger = Ledger.open(two);
      ledger.provision("unlisten");
      WorkerPool pool =
          WorkerPool.builder(ledger)
              .dataSource(two)
              .domain("unlisten", (task, ctx) -> Outcome.done())
              .start();
      long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (!pool.listening() && System.nanoTime() < end) {
        Thread.sleep(20);
      }
      assertThat(pool.listening()).isTrue();
      pool.close();
      // every connection of the data source, the one that listened among them
      try (Connection a = two.getConnection();
          Connection b = two.getConnection()) {
        for (Connection c : List.of(a, b)) {
          try (var rs = c.createStatement().executeQuery("SELECT pg_listening_channels()")) {
            List<String> channels = new ArrayList<>();
            while (rs.next()) {
              channels.add(rs.getString(1));
            }
            assertThat(channels).isEmpty();
          }
        }
      }
    } finally {
      PostgresExtension.dropDatabase(db);
    }
  }

  private static void awaitCompleted(Ledger ledger, String id) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (ledger.get(id).status() != Status.COMPLETED && System.nanoTime() < end) {
      Thread.sleep(20);
    }
    assertThat(ledger.get(id).status()).as(id).isEqualTo(Status.COMPLETED);
  }

  /**
   * A data source that lends one connection at a time, as a pool of one does, and says nothing of
   * its size: a second borrower waits up to the timeout, then gets {@link
   * SQLTransientConnectionException} (what HikariCP throws when it has none to give).
   */
  private static final class OneConnection implements DataSource {

    private final DataSource backing;
    private final Duration timeout;
    private final Semaphore lent = new Semaphore(1);

    OneConnection(DataSource backing, Duration timeout) {
      this.backing = backing;
      this.timeout = timeout;
    }

    @Override
    public Connection getConnection() throws SQLException {
      try {
        if (!lent.tryAcquire(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
          throw new SQLTransientConnectionException(
              "no connection available after " + timeout.toMillis() + " ms");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new SQLTransientConnectionException("interrupted", e);
      }
      Connection real;
      try {
        real = backing.getConnection();
      } catch (SQLException | RuntimeException e) {
        lent.release();
        throw e;
      }
      AtomicBoolean closed = new AtomicBoolean();
      return (Connection)
          Proxy.newProxyInstance(
              Connection.class.getClassLoader(),
              new Class<?>[] {Connection.class},
              (proxy, method, args) -> {
                if (method.getName().equals("close")) {
                  if (closed.compareAndSet(false, true)) {
                    try {
                      real.close();
                    } finally {
                      lent.release();
                    }
                  }
                  return null;
                }
                try {
                  return method.invoke(real, args);
                } catch (InvocationTargetException e) {
                  throw e.getCause();
                }
              });
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
      throw new SQLFeatureNotSupportedException("no per-user connections");
    }

    @Override
    public PrintWriter getLogWriter() {
      return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {}

    @Override
    public void setLoginTimeout(int seconds) {}

    @Override
    public int getLoginTimeout() {
      return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
      throw new SQLFeatureNotSupportedException();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
      throw new SQLException("not a wrapper of " + iface.getName());
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
      return false;
    }
  }
}

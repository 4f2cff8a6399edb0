package dev.ledger.worker;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Claimer;
import dev.ledger.Completion;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.Task;
import dev.ledger.TaskSpec;
import dev.ledger.migrate.Fleet;
import dev.ledger.schedule.ScheduleSpec;
import dev.ledger.schedule.Timing;
import dev.ledger.tenants.TenantDirectory;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.SettableClock;
import dev.ledger.testing.TestServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A {@link TenantWorkerPool} files its domain's due schedule ticks in each tenant and, with {@code
 * purgeEvery}, purges each tenant's domain that has a retention, as a {@link WorkerPool} does for
 * its own ledger: on real PostgreSQL, two tenant databases.
 */
class TenantPoolSchedulesTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final String DOMAIN = "reports";
  private static final List<String> DATABASES = new ArrayList<>();

  @AfterAll
  static void drop() throws Exception {
    for (String db : DATABASES) {
      PostgresExtension.dropDatabase(db);
    }
  }

  @Test
  void ticks_are_filed_once_and_old_tasks_purged_in_every_tenant() throws Exception {
    Fleet fleet = Fleet.builder().control(PG.dataSource()).build();
    Map<String, String> urls = new ConcurrentHashMap<>();
    for (String tenant : List.of("t-1", "t-2")) {
      String db = PostgresExtension.newDatabase();
      DATABASES.add(db);
      urls.put(tenant, TestServer.get().urlFor(db));
      fleet.register(tenant, urls.get(tenant));
    }
    assertThat(fleet.migrate().active()).isEqualTo(2);
    List<String> old = new ArrayList<>();
    for (String tenant : List.of("t-1", "t-2")) {
      try (HikariDataSource ds = PostgresExtension.pool(urls.get(tenant), 2)) {
        // five tasks completed two days ago, a retention of one day, a schedule every second
        SettableClock past = new SettableClock(Instant.now().minus(Duration.ofDays(2)));
        Ledger then = Ledger.open(ds, LedgerConfig.builder().clock(past).build());
        List<TaskSpec> specs = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
          specs.add(TaskSpec.builder(DOMAIN, tenant + " old " + i).build());
        }
        old.addAll(then.fileAll(specs));
        List<Lease> got = then.claimBatch(DOMAIN, Claimer.of("seed"), 5);
        assertThat(
                then.completeAll(DOMAIN, got.stream().map(l -> new Completion(l, "ok")).toList()))
            .isEmpty();
        Ledger now = Ledger.open(ds);
        now.retention().set(DOMAIN, Duration.ofDays(1));
        now.schedules()
            .add(
                ScheduleSpec.builder(
                        "tick", DOMAIN, Timing.every(Duration.ofSeconds(1)), tenant + " tick")
                    .build());
      }
    }
    Map<String, List<Task>> handled = new ConcurrentHashMap<>();
    try (TenantDirectory directory =
            TenantDirectory.builder()
                .control(PG.dataSource())
                .refreshInterval(Duration.ZERO)
                .connectionsPerTenant(5)
                .ledgerConfig(LedgerConfig.builder().runtimeDdl(false).build())
                .open();
        TenantWorkerPool pool =
            TenantWorkerPool.builder(directory)
                .domain(
                    DOMAIN,
                    (tenant, task, ctx) -> {
                      handled
                          .computeIfAbsent(
                              tenant, k -> new java.util.concurrent.CopyOnWriteArrayList<>())
                          .add(task);
                      return Outcome.done();
                    })
                .pollInterval(Duration.ofMillis(200))
                .purgeEvery(Duration.ofSeconds(1))
                .start()) {
      awaitTrue(
          () ->
              handled.getOrDefault("t-1", List.of()).size() >= 3
                  && handled.getOrDefault("t-2", List.of()).size() >= 3
                  && old.stream().allMatch(id -> gone(directory, id)));
      assertThat(pool.close(Duration.ofSeconds(30))).isTrue();
      for (String tenant : List.of("t-1", "t-2")) {
        Ledger ledger = directory.ledger(tenant);
        List<Task> filed = ledger.withOrigin(DOMAIN, "schedule:tick");
        // each tick once: as many tasks as distinct ticks, every one of them this tenant's
        assertThat(filed.stream().map(t -> t.spec().upstreamEvent()).distinct().count())
            .isEqualTo(filed.size());
        assertThat(filed).allSatisfy(t -> assertThat(t.spec().title()).isEqualTo(tenant + " tick"));
        assertThat(handled.get(tenant))
            .allSatisfy(t -> assertThat(t.spec().origin()).isEqualTo("schedule:tick"));
        assertThat(new HashSet<>(handled.get(tenant).stream().map(Task::id).toList()))
            .hasSize(handled.get(tenant).size());
        assertThat(ledger.retention().get(DOMAIN).orElseThrow().tasksRemoved()).isEqualTo(5);
      }
    }
  }

  private static boolean gone(TenantDirectory directory, String id) {
    for (String tenant : List.of("t-1", "t-2")) {
      try {
        directory.ledger(tenant).get(id);
        return false;
      } catch (dev.ledger.TaskNotFoundException e) {
        // purged from this tenant, or never in it
      }
    }
    return true;
  }

  private static void awaitTrue(BooleanSupplier condition) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waited 60 s").isLessThan(deadline);
      Thread.sleep(50);
    }
  }
}

package dev.ledger.migrate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A migration that runs {@code CREATE INDEX CONCURRENTLY} (which Flyway runs outside a transaction)
 * completes while the job holds its advisory lock, other schemas migrate in parallel, and a second
 * job waits for the lock: neither the lock connection nor the waiter holds a snapshot the index
 * build would wait for.
 */
class ConcurrentIndexTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final String EXTRA = "classpath:db/test/concurrent-index";

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES) // a hang guard, not a timing assertion
  void create_index_concurrently_completes_under_the_lock_while_another_run_waits()
      throws Exception {
    DataSource ds = TestDatabases.dataSource(PG.databaseName());
    List<String> domains = IntStream.range(0, 6).mapToObj(i -> "cic-" + i).toList();
    TestDatabases.route(ds, domains);
    assertThat(MigrationJob.builder().dataSource(ds).build().migrate().counts().created())
        .isEqualTo(6);

    CountDownLatch firstStarted = new CountDownLatch(1);
    MigrationListener signal =
        new MigrationListener() {
          @Override
          public void schemaStarted(String schema) {
            firstStarted.countDown();
          }
        };
    CompletableFuture<MigrationReport> first =
        CompletableFuture.supplyAsync(
            () ->
                MigrationJob.builder()
                    .dataSource(ds)
                    .parallelism(3)
                    .extraDomainLocations(List.of(EXTRA))
                    .listener(signal)
                    .build()
                    .migrate());
    while (!firstStarted.await(100, TimeUnit.MILLISECONDS)) {
      if (first.isDone()) {
        first.join(); // rethrows what ended the first run before any schema started
        throw new AssertionError("the first run ended without migrating a schema");
      }
    }
    // the first run holds the lock now: this one polls for it while the indexes build
    MigrationReport second =
        MigrationJob.builder()
            .dataSource(ds)
            .parallelism(3)
            .extraDomainLocations(List.of(EXTRA))
            .build()
            .migrate();
    MigrationReport report = first.get();

    assertThat(report.ok()).as("%s", report.schemas()).isTrue();
    assertThat(report.counts().migrated()).isEqualTo(6);
    for (SchemaReport r : report.domains()) {
      assertThat(r.applied()).containsExactly("900");
      assertThat(r.versionAfter()).isEqualTo("900");
      assertThat(r.catalogExtras()).containsExactly("index tasks.tasks_by_holder plain (holder)");
    }
    assertThat(second.ok()).isTrue();
    assertThat(second.counts().flywayRuns()).isZero();
    assertThat(second.counts().current()).isEqualTo(7);
    try (Connection c = PostgresExtension.connect(PG.databaseName())) {
      for (String d : domains) {
        assertThat(
                Fixtures.count(
                    c,
                    "SELECT count(*) FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid"
                        + " JOIN pg_namespace n ON n.oid = ic.relnamespace"
                        + " WHERE ic.relname = 'tasks_by_holder' AND i.indisvalid AND n.nspname = '"
                        + DomainSchemas.schemaName(d)
                        + "'"))
            .isEqualTo(1);
      }
    }
    assertThat(TestDatabases.advisoryLocks(PG.databaseName())).isZero();
  }
}

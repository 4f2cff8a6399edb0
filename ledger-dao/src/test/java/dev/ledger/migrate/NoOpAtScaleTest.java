package dev.ledger.migrate;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * With 2,000 up-to-date domain schemas recorded by an earlier run, {@code migrate} reads the
 * database in two statements, as with 10, and runs no Flyway at all; with {@code verifyAll} it
 * reads every schema, in a number of statements that grows by one history batch per 200. Times are
 * logged (no timing assertion): the job's no-op, its full check, and one Flyway run per schema for
 * the same schemas.
 *
 * <p>Tagged {@code scale}: about two minutes on a 2-core machine, so {@code ./mvnw verify} leaves
 * it out and {@code .ci/run} runs it on purpose ({@code -Dledger.test.groups=scale
 * -Dledger.test.excludedGroups=}).
 */
@Tag("scale")
class NoOpAtScaleTest {

  private static final Logger LOG = LoggerFactory.getLogger(NoOpAtScaleTest.class);
  private static final int SCHEMAS = 2000;
  private static final int PARALLELISM = 4;

  /** Statements of a no-op run: the catalog probe and the state table joined to the routes. */
  private static final int NO_OP_STATEMENTS = 2;

  /**
   * Statements of a no-op run with {@code verifyAll}: the probe, the state read, fingerprints,
   * routes, one history read per 200 schemas (nothing to write).
   */
  private static int verifyAllStatements(int domainSchemas) {
    return 4 + (domainSchemas + 1 + Catalog.HISTORY_BATCH - 1) / Catalog.HISTORY_BATCH;
  }

  @Test
  void a_no_op_over_2000_current_schemas_costs_two_statements_and_no_flyway_run() throws Exception {
    String small = PostgresExtension.newDatabase();
    String large = PostgresExtension.newDatabase();
    try (HikariDataSource smallPool = PostgresExtension.pool(TestServer.get().urlFor(small), 6);
        HikariDataSource largePool = PostgresExtension.pool(TestServer.get().urlFor(large), 6)) {
      List<String> few = IntStream.range(0, 10).mapToObj(i -> "few-" + i).toList();
      List<String> many = IntStream.range(0, SCHEMAS).mapToObj(i -> "tenant.domain-" + i).toList();
      TestDatabases.route(smallPool, few);
      TestDatabases.route(largePool, many);

      long t0 = System.nanoTime();
      MigrationReport created =
          MigrationJob.builder().dataSource(largePool).parallelism(PARALLELISM).build().migrate();
      Duration createTime = Duration.ofNanos(System.nanoTime() - t0);
      assertThat(created.ok()).isTrue();
      assertThat(created.counts().created()).isEqualTo(SCHEMAS);
      assertThat(created.counts().installs()).isEqualTo(SCHEMAS);
      assertThat(created.counts().flywayRuns()).isZero();
      assertThat(created.counts().recorded()).isEqualTo(SCHEMAS + 1);
      assertThat(MigrationJob.builder().dataSource(smallPool).build().migrate().counts().created())
          .isEqualTo(10);

      Run smallRun = noOp(smallPool, false);
      Run largeRun = noOp(largePool, false);
      Run largeVerified = noOp(largePool, true);

      for (Run run : List.of(smallRun, largeRun, largeVerified)) {
        assertThat(run.report.ok()).isTrue();
        assertThat(run.report.counts().flywayRuns()).isZero();
        assertThat(run.report.counts().current()).isEqualTo(run.report.counts().schemas());
        assertThat(run.report.counts().catalogQueries()).isEqualTo(run.statements);
        assertThat(run.report.counts().recorded()).isZero();
      }
      assertThat(smallRun.report.counts().schemas()).isEqualTo(11);
      assertThat(largeRun.report.counts().schemas()).isEqualTo(SCHEMAS + 1);
      assertThat(largeVerified.report.counts().schemas()).isEqualTo(SCHEMAS + 1);
      assertThat(smallRun.statements).isEqualTo(NO_OP_STATEMENTS);
      assertThat(largeRun.statements).isEqualTo(NO_OP_STATEMENTS);
      assertThat(smallRun.report.counts().checked()).isZero();
      assertThat(largeRun.report.counts().checked()).isZero();
      assertThat(largeVerified.statements).isEqualTo(verifyAllStatements(SCHEMAS)).isEqualTo(15);
      assertThat(largeVerified.report.counts().checked()).isEqualTo(SCHEMAS + 1);
      // beyond the statements, the connections Flyway takes to list its resolved migrations: the
      // same for 10 schemas as for 2,000, so no per-schema Flyway work
      assertThat(largeRun.connections - largeRun.statements)
          .isEqualTo(smallRun.connections - smallRun.statements);

      // every domain schema's row forgotten: the directory's row still matches, so the job checks
      // the 2,000 schemas in full as one scope (a hashed subquery over the names, linear), finds
      // them current and records them again; then the no-op is two statements again
      try (Connection c = largePool.getConnection();
          Statement s = c.createStatement()) {
        assertThat(s.executeUpdate("DELETE FROM public.ledger_schema_state WHERE kind = 'domain'"))
            .isEqualTo(SCHEMAS);
      }
      Run forgotten = noOp(largePool, false);
      assertThat(forgotten.report.ok()).isTrue();
      assertThat(forgotten.report.counts().flywayRuns()).isZero();
      assertThat(forgotten.report.counts().checked()).isEqualTo(SCHEMAS + 1);
      assertThat(forgotten.report.counts().recorded()).isEqualTo(SCHEMAS);
      assertThat(noOp(largePool, false).statements).isEqualTo(NO_OP_STATEMENTS);

      List<String> schemas = many.stream().map(DomainSchemas::schemaName).toList();
      long t1 = System.nanoTime();
      flywayLoop(largePool, schemas);
      Duration flywayTime = Duration.ofNanos(System.nanoTime() - t1);

      LOG.info(
          "{} current domain schemas: migrate no-op {} ms in {} statements (with verifyAll {} ms in"
              + " {}; every row forgotten {} ms in {}); one Flyway migrate per schema ({} at a time)"
              + " {} ms ({}x); first migrate (creating them) {} ms",
          SCHEMAS,
          largeRun.elapsed.toMillis(),
          largeRun.statements,
          largeVerified.elapsed.toMillis(),
          largeVerified.statements,
          forgotten.elapsed.toMillis(),
          forgotten.statements,
          PARALLELISM,
          flywayTime.toMillis(),
          flywayTime.toMillis() / Math.max(1, largeRun.elapsed.toMillis()),
          createTime.toMillis());
    } finally {
      PostgresExtension.dropDatabase(small);
      PostgresExtension.dropDatabase(large);
    }
  }

  private record Run(MigrationReport report, int statements, int connections, Duration elapsed) {}

  private static Run noOp(javax.sql.DataSource pool, boolean verifyAll) {
    AtomicInteger statements = new AtomicInteger();
    ExecuteListener counter =
        new ExecuteListener() {
          private static final long serialVersionUID = 1L;

          @Override
          public void executeStart(ExecuteContext ctx) {
            statements.incrementAndGet();
          }
        };
    TestDatabases.Counting counting = new TestDatabases.Counting(pool);
    long t0 = System.nanoTime();
    MigrationReport report =
        MigrationJob.builder()
            .dataSource(counting)
            .parallelism(PARALLELISM)
            .executeListeners(List.of(counter))
            .verifyAll(verifyAll)
            .build()
            .migrate();
    Duration elapsed = Duration.ofNanos(System.nanoTime() - t0);
    // the lock's dedicated connection comes from the data source too (no lockConnections given)
    return new Run(report, statements.get(), counting.connections.get() - 1, elapsed);
  }

  private static void flywayLoop(javax.sql.DataSource pool, List<String> schemas) throws Exception {
    ExecutorService workers = Executors.newFixedThreadPool(PARALLELISM);
    try {
      List<Future<Integer>> runs = new ArrayList<>();
      for (String schema : schemas) {
        runs.add(
            workers.submit(() -> LedgerMigrations.migrateDomain(pool, schema).migrationsExecuted));
      }
      for (Future<Integer> run : runs) {
        assertThat(run.get()).isZero();
      }
    } finally {
      workers.shutdownNow();
    }
  }
}

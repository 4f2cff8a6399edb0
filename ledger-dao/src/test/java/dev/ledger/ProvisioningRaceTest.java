package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.testing.FileBarrier;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import dev.ledger.testing.WorkerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Provisioning (issue 3, item 6): processes and threads filing the first task of a new domain at
 * the same instant make one schema, migrated once, and one route, and every task lands; with
 * runtime DDL off, an unknown domain is an error that says to run the migration job, and nothing is
 * written.
 */
class ProvisioningRaceTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  /** Every domain migration, each applied once: 1 to {@link LedgerMigrations#DOMAIN_VERSION}. */
  private static final List<String> MIGRATED = upTo(LedgerMigrations.DOMAIN_VERSION);

  @TempDir Path dir;

  // slow (64 fresh databases): run on purpose, -Dledger.test.groups=slow
  @Tag("slow")
  @Test
  void eight_ledgers_opening_a_fresh_database_at_once_all_open_it() throws Exception {
    // each with its own pool, as separate processes would: Flyway decides to create or baseline
    // its history table before it locks, so without the directory migration lock the late
    // openers failed with "Unable to baseline schema history table ... already exists"
    for (int round = 0; round < 8; round++) {
      String database = PostgresExtension.newDatabase();
      String url = TestServer.get().urlFor(database);
      int n = 8;
      List<HikariDataSource> pools = new ArrayList<>();
      ExecutorService threads = Executors.newFixedThreadPool(n);
      try {
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Ledger>> opened = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          HikariDataSource pool = PostgresExtension.pool(url, 3);
          pools.add(pool);
          opened.add(
              threads.submit(
                  () -> {
                    go.await();
                    return Ledger.open(pool);
                  }));
        }
        go.countDown();
        for (Future<Ledger> f : opened) {
          assertThat(f.get(2, TimeUnit.MINUTES)).isNotNull();
        }
        try (Connection c = pools.get(0).getConnection();
            Statement s = c.createStatement();
            ResultSet rs =
                s.executeQuery(
                    "SELECT count(*), max(version::numeric)::text FROM public.ledger_directory_history"
                        + " WHERE success")) {
          rs.next();
          assertThat(rs.getString(2)).isEqualTo(LedgerMigrations.DIRECTORY_VERSION);
          // each migration applied once (an empty database is created, not baselined)
          assertThat(rs.getInt(1))
              .isEqualTo(dev.ledger.testing.MigrationScripts.directoryVersions().size());
        }
      } finally {
        threads.shutdownNow();
        pools.forEach(HikariDataSource::close);
        PostgresExtension.dropDatabase(database);
      }
    }
  }

  // slow (two JVMs): run on purpose, -Dledger.test.groups=slow
  @Tag("slow")
  @Test
  void two_processes_filing_a_new_domains_first_task_at_once_make_one_schema() throws Exception {
    // a database of its own, with no directory yet: opening the ledger races as well
    String database = PostgresExtension.newDatabase();
    String url = TestServer.get().urlFor(database);
    List<String> domains = List.of("race-a", "race-b", "race-c");
    List<String> names = List.of("proc-1", "proc-2");
    Path barrier = dir.resolve("barrier");
    try (HikariDataSource ds = PostgresExtension.pool(url, 4)) {
      List<List<String>> ids = new ArrayList<>();
      try (WorkerProcess p1 = filer(url, names.get(0), barrier, domains);
          WorkerProcess p2 = filer(url, names.get(1), barrier, domains)) {
        FileBarrier.awaitAllThenGo(
            barrier,
            names,
            Duration.ofSeconds(90),
            () -> p1.process().isAlive() && p2.process().isAlive());
        for (WorkerProcess p : List.of(p1, p2)) {
          assertThat(p.awaitExit(Duration.ofMinutes(2))).as(p.describe()).isZero();
        }
      }
      for (String name : names) {
        ids.add(Files.readAllLines(dir.resolve(name + ".ids")));
      }

      assertThat(ledgerSchemas(ds))
          .containsExactlyElementsOf(
              domains.stream()
                  .map(DomainSchemas::schemaName)
                  .sorted()
                  .collect(Collectors.toList()));
      assertThat(history(ds, "public", "ledger_directory_history"))
          .isEqualTo(dev.ledger.testing.MigrationScripts.directoryVersions());
      Ledger ledger = Ledger.open(ds);
      assertThat(ledger.domains()).containsExactlyElementsOf(domains);
      for (int i = 0; i < domains.size(); i++) {
        String domain = domains.get(i);
        String schema = DomainSchemas.schemaName(domain);
        assertThat(routes(ds, domain)).containsExactly(DomainSchemas.quotedSchemaName(domain));
        assertThat(history(ds, schema, "flyway_schema_history")).isEqualTo(MIGRATED);
        List<Task> landed = ledger.list(domain, Status.PROPOSED);
        assertThat(landed.stream().map(Task::id))
            .containsExactlyInAnyOrder(ids.get(0).get(i), ids.get(1).get(i));
        assertThat(landed.stream().map(t -> t.spec().title()))
            .containsExactlyInAnyOrder("filed by proc-1", "filed by proc-2");
      }
    } finally {
      PostgresExtension.dropDatabase(database);
    }
  }

  @Test
  void ledgers_in_many_threads_filing_new_domains_at_once_make_one_schema_each() throws Exception {
    int threads = 8;
    List<String> domains = List.of("crowd-a", "crowd-b", "crowd-c");
    Ledger.open(PG.dataSource()); // the directory
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch go = new CountDownLatch(1);
    Set<String> ids = new HashSet<>();
    try {
      List<Future<List<String>>> futures = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        String name = "thread-" + i;
        // a ledger each, as separate services would have: no shared route cache
        Ledger own = Ledger.open(PG.dataSource());
        futures.add(
            pool.submit(
                () -> {
                  go.await();
                  List<String> mine = new ArrayList<>();
                  for (String domain : domains) {
                    mine.add(own.file(TaskSpec.builder(domain, "filed by " + name).build()));
                  }
                  return mine;
                }));
      }
      go.countDown();
      for (Future<List<String>> f : futures) {
        ids.addAll(f.get(2, TimeUnit.MINUTES));
      }
    } finally {
      pool.shutdownNow();
    }

    assertThat(ids).hasSize(threads * domains.size());
    Ledger ledger = Ledger.open(PG.dataSource());
    for (String domain : domains) {
      String schema = DomainSchemas.schemaName(domain);
      assertThat(routes(PG.dataSource(), domain))
          .containsExactly(DomainSchemas.quotedSchemaName(domain));
      assertThat(ledgerSchemas(PG.dataSource())).contains(schema);
      assertThat(history(PG.dataSource(), schema, "flyway_schema_history")).isEqualTo(MIGRATED);
      assertThat(ledger.list(domain, Status.PROPOSED)).hasSize(threads);
    }
  }

  @Test
  void threads_sharing_the_smallest_pool_provision_a_new_domain_without_running_it_dry()
      throws Exception {
    // 3 connections, the least the ledger documents; waiters must not sit on them while the
    // lock holder needs them for Flyway. A short timeout makes a regression fail fast.
    int threads = 6;
    String domain = "small-pool";
    try (HikariDataSource small = PostgresExtension.pool(PG.jdbcUrl(), 3)) {
      small.setConnectionTimeout(5_000);
      Ledger ledger = Ledger.open(small);
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<String>> futures = new ArrayList<>();
      Set<String> ids = new HashSet<>();
      try {
        for (int i = 0; i < threads; i++) {
          String name = "thread-" + i;
          futures.add(
              pool.submit(
                  () -> {
                    go.await();
                    return ledger.file(TaskSpec.builder(domain, "filed by " + name).build());
                  }));
        }
        go.countDown();
        for (Future<String> f : futures) {
          ids.add(f.get(2, TimeUnit.MINUTES));
        }
      } finally {
        pool.shutdownNow();
      }
      assertThat(ids).hasSize(threads);
      assertThat(ledger.list(domain, Status.PROPOSED).stream().map(Task::id))
          .containsExactlyInAnyOrderElementsOf(ids);
      assertThat(routes(small, domain)).containsExactly(DomainSchemas.quotedSchemaName(domain));
      assertThat(history(small, DomainSchemas.schemaName(domain), "flyway_schema_history"))
          .isEqualTo(MIGRATED);
    }
  }

  @Test
  void without_runtime_ddl_an_unknown_domain_says_to_run_the_migration_job_and_writes_nothing()
      throws Exception {
    Ledger withDdl = Ledger.open(PG.dataSource());
    String known = "known";
    withDdl.file(TaskSpec.builder(known, "already here").build());
    Ledger noDdl = Ledger.open(PG.dataSource(), LedgerConfig.builder().runtimeDdl(false).build());
    String domain = "never-provisioned";
    String schema = DomainSchemas.schemaName(domain);
    List<String> schemasBefore = ledgerSchemas(PG.dataSource());
    long eventsBefore = withDdl.eventCount();
    int routedBefore = count(PG.dataSource(), "SELECT count(*) FROM public.ledger_tasks");

    assertThatThrownBy(() -> noDdl.file(TaskSpec.builder(domain, "lost?").build()))
        .isInstanceOfSatisfying(
            SchemaVersionException.class,
            e -> {
              assertThat(e.schema()).isEqualTo(schema);
              assertThat(e.found()).isNull();
              assertThat(e.expected()).isEqualTo(LedgerMigrations.DOMAIN_VERSION);
            })
        .hasMessageContaining("domain '" + domain + "' has no schema")
        .hasMessageContaining("this ledger was opened with runtimeDdl(false)")
        .hasMessageContaining("run `ledger-app migrate --provision '" + domain + "'`");
    // its own provision runs no DDL either, and says so without sending the caller to itself
    assertThatThrownBy(() -> noDdl.provision(domain))
        .isInstanceOf(SchemaVersionException.class)
        .hasMessageContaining("runs no DDL")
        .hasMessageContaining("--provision '" + domain + "'")
        .hasMessageNotContaining("<domain>");
    PromotionSpec promotion =
        new PromotionSpec(domain, "entry", "tier", "me", "me", "why", null, "d1", null);
    assertThatThrownBy(() -> noDdl.recordPromotion(promotion))
        .isInstanceOf(SchemaVersionException.class)
        .hasMessageContaining("run `ledger-app migrate");
    assertThatThrownBy(() -> noDdl.provision(domain))
        .isInstanceOf(SchemaVersionException.class)
        .hasMessageContaining("run `ledger-app migrate");
    assertThat(noDdl.claimNext(domain, "w", Duration.ofMinutes(1), List.of(), Label.PUBLIC))
        .isEmpty();

    assertThat(ledgerSchemas(PG.dataSource())).isEqualTo(schemasBefore).doesNotContain(schema);
    assertThat(routes(PG.dataSource(), domain)).isEmpty();
    assertThat(count(PG.dataSource(), "SELECT count(*) FROM public.ledger_tasks"))
        .isEqualTo(routedBefore);
    assertThat(withDdl.eventCount()).isEqualTo(eventsBefore);
    assertThat(noDdl.domains()).doesNotContain(domain);

    // a known domain works without DDL; so does the new one once provisioned ahead of time
    noDdl.file(TaskSpec.builder(known, "no DDL needed").build());
    withDdl.provision(domain);
    String id = noDdl.file(TaskSpec.builder(domain, "now it lands").build());
    assertThat(noDdl.get(id).spec().title()).isEqualTo("now it lands");
  }

  @Test
  void without_runtime_ddl_a_database_with_no_directory_is_refused_untouched() throws Exception {
    String database = PostgresExtension.newDatabase();
    try (HikariDataSource ds = PostgresExtension.pool(TestServer.get().urlFor(database), 4)) {
      assertThatThrownBy(() -> Ledger.open(ds, LedgerConfig.builder().runtimeDdl(false).build()))
          .isInstanceOfSatisfying(SchemaVersionException.class, e -> assertThat(e.found()).isNull())
          .hasMessageContaining("has no migration history")
          .hasMessageContaining("run `ledger-app migrate`");
      assertThat(
              count(
                  ds,
                  "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                      + " WHERE n.nspname = 'public'"))
          .isZero();
    } finally {
      PostgresExtension.dropDatabase(database);
    }
  }

  // -------------------------------------------------------------------------------------------

  private WorkerProcess filer(String url, String name, Path barrier, List<String> domains) {
    List<String> args = new ArrayList<>();
    args.add("file-first");
    args.add(url);
    args.add(name);
    args.add(barrier.toString());
    args.add(dir.resolve(name + ".ids").toString());
    args.addAll(domains);
    return WorkerProcess.start(dir, name, args.toArray(new String[0]));
  }

  /** Every schema whose name has the shape of a domain schema, sorted. */
  private static List<String> ledgerSchemas(DataSource ds) throws SQLException {
    List<String> names = new ArrayList<>();
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT nspname FROM pg_namespace ORDER BY nspname")) {
      while (rs.next()) {
        if (DomainSchemas.isDomainSchemaName(rs.getString(1))) {
          names.add(rs.getString(1));
        }
      }
    }
    return names;
  }

  private static List<String> routes(DataSource ds, String domain) throws SQLException {
    List<String> schemas = new ArrayList<>();
    try (Connection c = ds.getConnection();
        PreparedStatement s =
            c.prepareStatement("SELECT schema FROM public.ledger_domains WHERE domain = ?")) {
      s.setString(1, domain);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          schemas.add(rs.getString(1));
        }
      }
    }
    return schemas;
  }

  /** The versions a Flyway history table records as applied, in the order they were applied. */
  private static List<String> history(DataSource ds, String schema, String table)
      throws SQLException {
    List<String> versions = new ArrayList<>();
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT version, type, success FROM \""
                    + schema
                    + "\"."
                    + table
                    + " ORDER BY installed_rank")) {
      while (rs.next()) {
        if (rs.getString(1) == null) {
          assertThat(rs.getString(2)).as("unversioned history row").isEqualTo("SCHEMA");
          continue;
        }
        assertThat(rs.getBoolean(3)).as("migration " + rs.getString(1) + " succeeded").isTrue();
        versions.add(rs.getString(1));
      }
    }
    return versions;
  }

  private static List<String> upTo(String version) {
    // the scripts up to it, not 1 to it: the set may have gaps
    return dev.ledger.testing.MigrationScripts.versions("domain").stream()
        .filter(v -> Integer.parseInt(v) <= Integer.parseInt(version))
        .collect(Collectors.toList());
  }

  private static int count(DataSource ds, String sql) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getInt(1);
    }
  }
}

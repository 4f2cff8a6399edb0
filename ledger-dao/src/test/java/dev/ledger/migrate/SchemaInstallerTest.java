package dev.ledger.migrate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.schema.SchemaInstaller;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.flywaydb.core.api.output.MigrateResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A domain schema made by the {@link SchemaInstaller} in one transaction is the schema Flyway
 * makes, catalog and history alike; a failure leaves nothing; what cannot be installed is refused
 * with its reason, and the migration job then runs Flyway.
 */
class SchemaInstallerTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static DataSource ds() {
    return TestDatabases.dataSource(PG.databaseName());
  }

  private static SchemaInstaller installer(String... locations) throws Exception {
    MigrationSet set = MigrationSet.resolve(SchemaKind.DOMAIN, ds(), List.of(locations));
    return SchemaInstaller.prepare(
        LedgerMigrations.class.getClassLoader(),
        List.of(locations),
        LedgerMigrations.DOMAIN_HISTORY,
        migrations(set));
  }

  private static List<SchemaInstaller.Migration> migrations(MigrationSet set) {
    return set.versioned().values().stream()
        .map(
            r ->
                new SchemaInstaller.Migration(
                    r.version(), r.description(), r.script(), r.checksum()))
        .toList();
  }

  @Test
  void the_checksum_is_flyways_for_every_script_of_the_ledger() throws Exception {
    for (String location :
        List.of(
            LedgerMigrations.DOMAIN_LOCATION,
            LedgerMigrations.DIRECTORY_LOCATION,
            "classpath:db/test/edited-domain")) {
      SchemaKind kind =
          location.equals(LedgerMigrations.DIRECTORY_LOCATION)
              ? SchemaKind.DIRECTORY
              : SchemaKind.DOMAIN;
      MigrationSet set = MigrationSet.resolve(kind, ds(), List.of(location));
      assertThat(set.versioned()).isNotEmpty();
      String folder = location.substring("classpath:".length());
      for (MigrationSet.Resolved r : set.versioned().values()) {
        String text =
            new String(
                LedgerMigrations.class
                    .getClassLoader()
                    .getResourceAsStream(folder + "/" + r.script())
                    .readAllBytes(),
                java.nio.charset.StandardCharsets.UTF_8);
        assertThat(SchemaInstaller.checksum(text)).as(r.label()).isEqualTo(r.checksum());
      }
    }
    // a byte-order mark and the kind of line break do not count, as in Flyway
    assertThat(SchemaInstaller.checksum("\uFEFFa\r\nb\n"))
        .isEqualTo(SchemaInstaller.checksum("a\nb"));
    assertThat(SchemaInstaller.checksum("a\nb")).isNotEqualTo(SchemaInstaller.checksum("a\nc"));
  }

  @Test
  void an_installed_schema_is_the_schema_flyway_makes_and_flyway_finds_nothing_to_do()
      throws Exception {
    String byFlyway = DomainSchemas.schemaName("made-by-flyway");
    String installed = DomainSchemas.schemaName("made-by-install");
    MigrateResult flyway = LedgerMigrations.migrateDomain(ds(), byFlyway);
    assertThat(flyway.migrationsExecuted).isEqualTo(14);

    List<String> applied;
    try (Connection c = ds().getConnection()) {
      applied = installer(LedgerMigrations.DOMAIN_LOCATION).install(c, installed);
      assertThat(c.getAutoCommit()).isTrue();
    }

    assertThat(applied)
        .containsExactlyElementsOf(TestDatabases.versions(1, LedgerMigrations.DOMAIN_VERSION));
    assertThat(catalog(installed)).isNotEmpty().isEqualTo(catalog(byFlyway));
    assertThat(history(installed)).hasSize(15).isEqualTo(history(byFlyway));
    MigrateResult again = LedgerMigrations.migrateDomain(ds(), installed);
    assertThat(again.migrationsExecuted).isZero();
    LedgerMigrations.domain(ds(), installed).load().validate(); // throws when a checksum differs
  }

  @Test
  void a_failing_script_rolls_the_whole_install_back() throws Exception {
    String schema = DomainSchemas.schemaName("broken-install");
    SchemaInstaller broken = installer("classpath:db/test/install/broken");

    try (Connection c = ds().getConnection()) {
      assertThatThrownBy(() -> broken.install(c, schema))
          .isInstanceOf(SchemaInstaller.InstallException.class)
          .hasMessageContaining("installing " + schema + " failed at V2 (V2__fails.sql)")
          .hasMessageContaining("duplicate key")
          .extracting(e -> ((SchemaInstaller.InstallException) e).sqlState())
          .isEqualTo("23505");
      assertThat(c.getAutoCommit()).isTrue();
    }
    assertThat(schemaExists(schema)).isFalse();
  }

  @Test
  void an_existing_schema_is_refused_with_its_sqlstate_and_left_untouched() throws Exception {
    String schema = DomainSchemas.schemaName("exists-already");
    LedgerMigrations.migrateDomain(ds(), schema);
    List<List<String>> before = history(schema);

    try (Connection c = ds().getConnection()) {
      assertThatThrownBy(() -> installer(LedgerMigrations.DOMAIN_LOCATION).install(c, schema))
          .isInstanceOf(SchemaInstaller.InstallException.class)
          .hasMessageContaining("failed at CREATE SCHEMA")
          .extracting(e -> ((SchemaInstaller.InstallException) e).sqlState())
          .isEqualTo("42P06");
    }
    assertThat(history(schema)).isEqualTo(before);
  }

  @Test
  void a_connection_cut_mid_install_leaves_no_schema() throws Exception {
    String schema = DomainSchemas.schemaName("cut-install");
    SchemaInstaller slow = installer("classpath:db/test/install/slow");
    CompletableFuture<Throwable> outcome =
        CompletableFuture.supplyAsync(
            () -> {
              try (Connection c = ds().getConnection()) {
                slow.install(c, schema);
                return null;
              } catch (Exception e) {
                return e;
              }
            });
    int terminated = 0;
    for (int i = 0; i < 200 && terminated == 0; i++) {
      Thread.sleep(50);
      terminated =
          count(
              "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                  + " WHERE datname = current_database() AND query LIKE '%pg_sleep(30)%'"
                  + " AND pid <> pg_backend_pid()");
    }
    assertThat(terminated).isEqualTo(1);
    Throwable failure = outcome.get(30, TimeUnit.SECONDS);
    assertThat(failure)
        .isInstanceOf(SchemaInstaller.InstallException.class)
        .hasMessageContaining("failed at V2 (V2__wait.sql)");
    assertThat(schemaExists(schema)).isFalse();
  }

  @Test
  void what_flyway_would_run_otherwise_is_refused_with_the_reason() throws Exception {
    assertThatThrownBy(() -> installer("classpath:db/test/install/placeholder"))
        .isInstanceOf(SchemaInstaller.NotInstallableException.class)
        .hasMessage(
            "V1 (V1__uses_a_placeholder.sql) uses the placeholder ${owner}; Flyway runs it");
    assertThatThrownBy(() -> installer("classpath:db/test/install/concurrently"))
        .isInstanceOf(SchemaInstaller.NotInstallableException.class)
        .hasMessage(
            "V2 (V2__index_concurrently.sql) holds 'CONCURRENTLY', which cannot share one"
                + " transaction with the other scripts; Flyway runs it");
    assertThatThrownBy(() -> installer("classpath:db/test/install/callback"))
        .isInstanceOf(SchemaInstaller.NotInstallableException.class)
        .hasMessage(
            "location classpath:db/test/install/callback holds afterMigrate.sql, which is no"
                + " migration of the set (a callback, a script configuration or a Java"
                + " migration?); Flyway runs it");
    MigrationSet domain =
        MigrationSet.resolve(SchemaKind.DOMAIN, ds(), List.of(LedgerMigrations.DOMAIN_LOCATION));
    List<SchemaInstaller.Migration> edited = new ArrayList<>(migrations(domain));
    SchemaInstaller.Migration v2 = edited.get(1);
    edited.set(
        1, new SchemaInstaller.Migration(v2.version(), v2.description(), v2.script(), 12345));
    assertThatThrownBy(
            () ->
                SchemaInstaller.prepare(
                    LedgerMigrations.class.getClassLoader(),
                    List.of(LedgerMigrations.DOMAIN_LOCATION),
                    LedgerMigrations.DOMAIN_HISTORY,
                    edited))
        .isInstanceOf(SchemaInstaller.NotInstallableException.class)
        .hasMessageStartingWith("V2 (V2__promotions.sql): the text found has checksum ")
        .hasMessageEndingWith(", Flyway resolved 12345; Flyway runs it");
  }

  @Test
  void pending_migrations_applied_in_one_transaction_leave_the_schema_flyway_leaves()
      throws Exception {
    String byFlyway = DomainSchemas.schemaName("behind-by-flyway");
    String byInstaller = DomainSchemas.schemaName("behind-by-installer");
    for (String schema : List.of(byFlyway, byInstaller)) {
      LedgerMigrations.domain(ds(), schema).target("3").load().migrate();
    }
    String extra = "classpath:db/test/extra-index";
    LedgerMigrations.domain(ds(), byFlyway)
        .locations(LedgerMigrations.DOMAIN_LOCATION, extra)
        .load()
        .migrate();
    SchemaInstaller installer = installer(LedgerMigrations.DOMAIN_LOCATION, extra);

    try (Connection c = ds().getConnection()) {
      // read at 2, but it is at 3 by now: nothing applied
      assertThatThrownBy(() -> installer.migrate(c, byInstaller, "2"))
          .isInstanceOf(SchemaInstaller.StaleHistoryException.class)
          .hasMessage(byInstaller + ": its history now ends at 3, not 2; nothing was applied");
      assertThat(history(byInstaller)).hasSize(4);
      assertThat(installer.migrate(c, byInstaller, "3"))
          .containsExactly("4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "100");
      assertThat(installer.migrate(c, byInstaller, "100")).isEmpty();
    }

    assertThat(catalog(byInstaller)).isEqualTo(catalog(byFlyway));
    assertThat(history(byInstaller)).hasSize(16).isEqualTo(history(byFlyway));
    assertThat(
            LedgerMigrations.domain(ds(), byInstaller)
                .locations(LedgerMigrations.DOMAIN_LOCATION, extra)
                .load()
                .migrate()
                .migrationsExecuted)
        .isZero();
  }

  @Test
  void the_job_installs_new_domain_schemas_and_runs_flyway_when_the_set_has_extra_locations()
      throws Exception {
    inNewDatabase(SchemaInstallerTest::jobInstallsThenFlywayForExtras);
  }

  private static void jobInstallsThenFlywayForExtras(DataSource ds) {
    List<String> domains = List.of("job-a", "job-b", "job-c");
    TestDatabases.route(ds, domains);

    MigrationReport report = MigrationJob.builder().dataSource(ds).parallelism(2).build().migrate();

    assertThat(report.ok()).isTrue();
    assertThat(report.counts().created()).isEqualTo(3);
    assertThat(report.counts().installs()).isEqualTo(3);
    assertThat(report.counts().flywayRuns()).isZero();
    for (String d : domains) {
      SchemaReport r =
          report.domains().stream()
              .filter(s -> s.schema().equals(DomainSchemas.schemaName(d)))
              .findFirst()
              .orElseThrow();
      assertThat(r.state()).isEqualTo(SchemaState.CREATED);
      assertThat(r.applied())
          .containsExactlyElementsOf(TestDatabases.versions(1, LedgerMigrations.DOMAIN_VERSION));
      assertThat(r.versionAfter()).isEqualTo(LedgerMigrations.DOMAIN_VERSION);
      assertThat(r.checksums()).isEqualTo(ChecksumState.MATCH);
    }
    // the job's own full check agrees: nothing to do, checksums and catalog as expected
    MigrationReport verified =
        MigrationJob.builder().dataSource(ds).verifyAll(true).build().migrate();
    assertThat(verified.ok()).isTrue();
    assertThat(verified.counts().checked()).isEqualTo(4);
    assertThat(verified.counts().flywayRuns() + verified.counts().installs()).isZero();

    TestDatabases.route(ds, List.of("job-extra"));
    MigrationReport extra =
        MigrationJob.builder()
            .dataSource(ds)
            .extraDomainLocations(List.of("classpath:db/test/concurrent-index"))
            .build()
            .migrate();
    assertThat(extra.ok()).isTrue();
    assertThat(extra.counts().installs()).isZero();
    // V900 builds its index CONCURRENTLY: the new schema by Flyway, and each existing one
    // brought forward by Flyway
    assertThat(extra.counts().flywayRuns()).isEqualTo(4);
  }

  @Test
  void the_job_applies_a_plain_extra_migration_to_every_schema_in_one_transaction_each()
      throws Exception {
    inNewDatabase(
        ds -> {
          TestDatabases.route(ds, List.of("x-a", "x-b", "x-c"));
          MigrationJob.builder().dataSource(ds).build().migrate();
          TestDatabases.route(ds, List.of("x-new"));

          MigrationReport report =
              MigrationJob.builder()
                  .dataSource(ds)
                  .extraDomainLocations(List.of("classpath:db/test/extra-index"))
                  .build()
                  .migrate();

          assertThat(report.ok()).isTrue();
          assertThat(report.counts().installs()).isEqualTo(4);
          assertThat(report.counts().flywayRuns()).isZero();
          assertThat(report.counts().migrated()).isEqualTo(3);
          assertThat(report.counts().created()).isEqualTo(1);
          for (SchemaReport r : report.domains()) {
            assertThat(r.versionAfter()).isEqualTo("100");
            assertThat(r.checksums()).isEqualTo(ChecksumState.MATCH);
            assertThat(r.applied())
                .isEqualTo(
                    r.state() == SchemaState.CREATED
                        ? List.of(
                            "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13",
                            "14", "100")
                        : List.of("100"));
          }
          MigrationReport verified =
              MigrationJob.builder()
                  .dataSource(ds)
                  .extraDomainLocations(List.of("classpath:db/test/extra-index"))
                  .verifyAll(true)
                  .build()
                  .migrate();
          assertThat(verified.ok()).isTrue();
          assertThat(verified.counts().installs() + verified.counts().flywayRuns()).isZero();
        });
  }

  @Test
  void a_set_with_a_repeatable_migration_goes_to_flyway_and_is_current_on_the_next_run()
      throws Exception {
    inNewDatabase(
        ds -> {
          TestDatabases.route(ds, List.of("r-a", "r-b"));
          List<String> extra = List.of("classpath:db/test/repeatable");

          MigrationReport first =
              MigrationJob.builder().dataSource(ds).extraDomainLocations(extra).build().migrate();
          assertThat(first.ok()).as(first.domains().toString()).isTrue();
          assertThat(first.counts().installs()).isZero();
          assertThat(first.counts().flywayRuns()).isEqualTo(2);
          assertThat(first.domains())
              .allSatisfy(r -> assertThat(r.state()).isEqualTo(SchemaState.CREATED));

          // the repeatable's history row is matched by its description: nothing pending any more
          MigrationReport again =
              MigrationJob.builder()
                  .dataSource(ds)
                  .extraDomainLocations(extra)
                  .verifyAll(true)
                  .build()
                  .migrate();
          assertThat(again.ok()).isTrue();
          assertThat(again.counts().flywayRuns()).isZero();
          assertThat(again.domains())
              .allSatisfy(
                  r -> {
                    assertThat(r.state()).isEqualTo(SchemaState.CURRENT);
                    assertThat(r.pending()).isEmpty();
                  });
        });
  }

  @Test
  void a_schema_made_by_someone_else_after_the_check_is_brought_forward_by_flyway()
      throws Exception {
    inNewDatabase(SchemaInstallerTest::raced);
  }

  private static void raced(DataSource ds) {
    String domain = "raced";
    String schema = DomainSchemas.schemaName(domain);
    TestDatabases.route(ds, List.of(domain));
    MigrationListener otherFirst =
        new MigrationListener() {
          @Override
          public void schemaStarted(String started) {
            if (started.equals(schema)) {
              LedgerMigrations.domain(ds, schema).target("3").load().migrate();
            }
          }
        };

    MigrationReport report =
        MigrationJob.builder().dataSource(ds).listener(otherFirst).build().migrate();

    assertThat(report.ok()).isTrue();
    SchemaReport r =
        report.domains().stream().filter(s -> s.schema().equals(schema)).findFirst().orElseThrow();
    assertThat(r.applied())
        .containsExactly("4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14");
    assertThat(r.versionAfter()).isEqualTo(LedgerMigrations.DOMAIN_VERSION);
    assertThat(report.counts().installs()).isZero();
    assertThat(report.counts().flywayRuns()).isEqualTo(1);
  }

  /** A body run against a database of its own. */
  @FunctionalInterface
  private interface DatabaseTest {
    void run(DataSource ds) throws Exception;
  }

  /** Runs a body against a new, empty database, dropped afterwards. */
  private static void inNewDatabase(DatabaseTest body) throws Exception {
    String db = PostgresExtension.newDatabase();
    try {
      body.run(TestDatabases.dataSource(db));
    } finally {
      PostgresExtension.dropDatabase(db);
    }
  }

  private static boolean schemaExists(String schema) throws SQLException {
    try (Connection c = ds().getConnection();
        PreparedStatement s =
            c.prepareStatement("SELECT count(*) FROM pg_namespace WHERE nspname = ?")) {
      s.setString(1, schema);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getInt(1) == 1;
      }
    }
  }

  private static int count(String sql) throws SQLException {
    try (Connection c = ds().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** The Flyway history without what differs between any two runs (time, duration). */
  private static List<List<String>> history(String schema) throws SQLException {
    return rows(
        "SELECT installed_rank, version, description, type, replace(script, ?, 'S'), checksum,"
            + " installed_by, success FROM "
            + "\""
            + schema
            + "\""
            + ".flyway_schema_history ORDER BY installed_rank",
        schema);
  }

  /**
   * A schema's catalog with its own name written {@code S}: relations, columns (type, nullability,
   * default), constraints, indexes, triggers and functions.
   */
  private static List<List<String>> catalog(String schema) throws SQLException {
    List<List<String>> all = new ArrayList<>();
    all.addAll(
        rows(
            "SELECT 'rel', c.relname, c.relkind::text FROM pg_class c JOIN pg_namespace n ON"
                + " n.oid = c.relnamespace WHERE n.nspname = ? ORDER BY 2",
            schema));
    all.addAll(
        rows(
            "SELECT 'col', c.relname, a.attname, format_type(a.atttypid, a.atttypmod),"
                + " a.attnotnull::text, a.attnum::text,"
                + " replace(coalesce(pg_get_expr(d.adbin, d.adrelid), ''), ?, 'S')"
                + " FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
                + " JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum"
                + " WHERE n.nspname = ? AND a.attnum > 0 AND NOT a.attisdropped ORDER BY 2, 3",
            schema,
            schema));
    all.addAll(
        rows(
            "SELECT 'con', c.conname, replace(pg_get_constraintdef(c.oid), ?, 'S')"
                + " FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace"
                + " WHERE n.nspname = ? ORDER BY 2",
            schema,
            schema));
    all.addAll(
        rows(
            "SELECT 'idx', indexname, replace(indexdef, ?, 'S') FROM pg_indexes"
                + " WHERE schemaname = ? ORDER BY 2",
            schema,
            schema));
    all.addAll(
        rows(
            "SELECT 'trg', t.tgname, replace(pg_get_triggerdef(t.oid), ?, 'S') FROM pg_trigger t"
                + " JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid ="
                + " c.relnamespace WHERE n.nspname = ? AND NOT t.tgisinternal ORDER BY 2",
            schema,
            schema));
    all.addAll(
        rows(
            "SELECT 'fn', p.proname, md5(replace(p.prosrc, ?, 'S')) FROM pg_proc p"
                + " JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = ? ORDER BY 2",
            schema,
            schema));
    return all;
  }

  private static List<List<String>> rows(String sql, String... params) throws SQLException {
    List<List<String>> out = new ArrayList<>();
    try (Connection c = ds().getConnection();
        PreparedStatement s = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        s.setString(i + 1, params[i]);
      }
      try (ResultSet rs = s.executeQuery()) {
        int n = rs.getMetaData().getColumnCount();
        while (rs.next()) {
          List<String> row = new ArrayList<>();
          for (int i = 1; i <= n; i++) {
            row.add(rs.getString(i));
          }
          out.add(row);
        }
      }
    }
    return out;
  }
}

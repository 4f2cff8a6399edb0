package dev.ledger.migrate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.SchemaVersionException;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.schema.MigrationDigest;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The directory's {@code ledger_schema_state} (directory V4): a no-op migrate after a real one
 * reads two statements and no schema; a schema whose row is missing or differs is checked in full
 * and recorded again; an edited migration in a new build is still found and fatal; a history edited
 * by hand after recording is found by {@code verifyAll}; a schema a ledger provisions is recorded;
 * a V3 directory is upgraded by the job.
 */
class SchemaStateTest {

  private static final String EDITED = "classpath:db/test/edited-domain";
  private static final String V3 = "V3__promotions_new_digest_and_why_erased.sql";

  private String db;
  private DataSource ds;

  @BeforeEach
  void database() throws SQLException {
    db = PostgresExtension.newDatabase();
    ds = TestDatabases.dataSource(db);
  }

  @AfterEach
  void drop() throws SQLException {
    PostgresExtension.dropDatabase(db);
  }

  @Test
  void a_no_op_after_a_real_run_sends_two_statements_and_checks_no_schema() throws Exception {
    List<String> domains = List.of("acme", "ops.payments", "café-ü", "d4", "d5");
    TestDatabases.route(ds, domains);

    Run real = run(b -> b);
    assertThat(real.report.ok()).isTrue();
    assertThat(real.report.counts().created()).isEqualTo(5);
    assertThat(real.report.counts().checked()).isEqualTo(6);
    assertThat(real.report.counts().recorded()).isEqualTo(6);
    String digest = domainDigest();
    List<List<String>> rows = stateRows();
    assertThat(rows).hasSize(6);
    assertThat(rows)
        .contains(
            List.of(
                "public",
                "directory",
                LedgerMigrations.DIRECTORY_VERSION,
                directoryDigest(),
                "{}",
                "migrate"));
    for (String domain : domains) {
      assertThat(rows)
          .contains(
              List.of(
                  DomainSchemas.schemaName(domain),
                  "domain",
                  LedgerMigrations.DOMAIN_VERSION,
                  digest,
                  "{}",
                  "migrate"));
    }

    Run noOp = run(b -> b);
    assertThat(noOp.report.ok()).isTrue();
    assertThat(noOp.statements).isEqualTo(2);
    assertThat(noOp.report.counts().catalogQueries()).isEqualTo(2);
    assertThat(noOp.report.counts().flywayRuns()).isZero();
    assertThat(noOp.report.counts().checked()).isZero();
    assertThat(noOp.report.counts().recorded()).isZero();
    assertThat(noOp.report.counts().current()).isEqualTo(6);
    assertThat(noOp.report.domains())
        .extracting(SchemaReport::schema)
        .containsExactlyElementsOf(
            domains.stream().map(DomainSchemas::schemaName).sorted().toList());
    for (SchemaReport r : noOp.report.domains()) {
      assertThat(r.state()).isEqualTo(SchemaState.CURRENT);
      assertThat(r.versionBefore()).isEqualTo(LedgerMigrations.DOMAIN_VERSION);
      assertThat(r.versionAfter()).isEqualTo(LedgerMigrations.DOMAIN_VERSION);
      assertThat(r.checksums()).isEqualTo(ChecksumState.MATCH);
      assertThat(r.pending()).isEmpty();
    }
    assertThat(noOp.report.directory().versionAfter())
        .isEqualTo(LedgerMigrations.DIRECTORY_VERSION);

    for (Run readOnly : List.of(plan(b -> b), status(b -> b))) {
      assertThat(readOnly.statements).isEqualTo(2);
      assertThat(readOnly.report.counts().current()).isEqualTo(6);
      assertThat(readOnly.report.counts().pending()).isZero();
      assertThat(readOnly.report.counts().checked()).isZero();
    }

    // verifyAll: the probe and the state read, then the full check (fingerprints, routes, one
    // history batch); everything as recorded, so nothing is written
    Run verified = run(b -> b.verifyAll(true));
    assertThat(verified.report.ok()).isTrue();
    assertThat(verified.report.counts().checked()).isEqualTo(6);
    assertThat(verified.report.counts().recorded()).isZero();
    assertThat(verified.statements).isEqualTo(2 + 3);
    assertThat(stateRows()).isEqualTo(rows);
  }

  @Test
  void a_schema_whose_row_is_missing_or_differs_is_checked_in_full_and_recorded_again()
      throws Exception {
    TestDatabases.route(ds, List.of("a", "b", "c", "d"));
    assertThat(run(b -> b).report.counts().recorded()).isEqualTo(5);
    List<List<String>> recorded = stateRows();
    execute(
        "DELETE FROM public.ledger_schema_state WHERE schema_name = '" + schema("a") + "'",
        "UPDATE public.ledger_schema_state SET migrations_digest = 'x' WHERE schema_name = '"
            + schema("b")
            + "'",
        "UPDATE public.ledger_schema_state SET version = '5' WHERE schema_name = '"
            + schema("c")
            + "'",
        "DROP SCHEMA \"" + schema("d") + "\" CASCADE");

    Run plan = plan(b -> b);
    assertThat(plan.report.ok()).isTrue();
    assertThat(plan.report.counts().checked()).isEqualTo(5); // the directory and the four
    Map<String, SchemaReport> planned = bySchema(plan.report);
    for (String d : List.of("a", "b", "c")) {
      assertThat(planned.get(schema(d)).state()).isEqualTo(SchemaState.CURRENT);
    }
    assertThat(planned.get(schema("d")).state()).isEqualTo(SchemaState.PENDING);
    assertThat(planned.get(schema("d")).pending())
        .containsExactlyElementsOf(TestDatabases.versions(1, LedgerMigrations.DOMAIN_VERSION));
    assertThat(stateRows()).hasSize(4); // plan writes nothing

    Run migrate = run(b -> b);
    assertThat(migrate.report.ok()).isTrue();
    assertThat(migrate.report.counts().checked()).isEqualTo(5);
    assertThat(migrate.report.counts().installs()).isEqualTo(1); // d, made in one transaction
    assertThat(migrate.report.counts().flywayRuns()).isZero();
    assertThat(migrate.report.counts().created()).isEqualTo(1);
    assertThat(migrate.report.counts().current()).isEqualTo(4);
    // a, b and c rewritten; d's row already held this version and digest (its schema was gone)
    assertThat(migrate.report.counts().recorded()).isEqualTo(3);
    assertThat(stateRows()).isEqualTo(recorded);

    Run noOp = run(b -> b);
    assertThat(noOp.statements).isEqualTo(2);
    assertThat(noOp.report.counts().checked()).isZero();
  }

  @Test
  void an_edited_migration_in_a_new_build_is_still_found_and_fatal_whatever_was_recorded()
      throws Exception {
    TestDatabases.route(ds, List.of("edited-1", "edited-2"));
    MigrationSets editedBuild =
        new MigrationSets(List.of(LedgerMigrations.DIRECTORY_LOCATION), List.of(EDITED));
    MigrationReport earlier =
        MigrationJob.builder().dataSource(ds).sets(editedBuild).build().migrate();
    assertThat(earlier.ok()).isTrue();
    assertThat(earlier.counts().recorded()).isEqualTo(3);
    String editedDigest = editedBuild.domain(ds).digest();
    assertThat(editedDigest).isNotEqualTo(domainDigest());
    // the same latest version: only the digest tells the builds apart
    assertThat(editedBuild.domain(ds).latest()).isEqualTo(LedgerMigrations.DOMAIN_VERSION);
    List<List<String>> rowsBefore = stateRows();
    List<List<String>> historyBefore = history(schema("edited-1"));
    TestDatabases.route(ds, List.of("later"));

    for (int attempt = 0; attempt < 2; attempt++) {
      Run run = run(b -> b);
      assertThat(run.report.ok()).isFalse();
      Map<String, SchemaReport> by = bySchema(run.report);
      for (String d : List.of("edited-1", "edited-2")) {
        SchemaReport r = by.get(schema(d));
        assertThat(r.state()).isEqualTo(SchemaState.FAILED);
        assertThat(r.checksums()).isEqualTo(ChecksumState.MISMATCH);
        assertThat(r.error()).contains("V3 (" + V3 + ")").contains("never repairs");
        assertThat(r.applied()).isEmpty();
      }
      assertThat(by.get(schema("later")).state())
          .isEqualTo(attempt == 0 ? SchemaState.CREATED : SchemaState.CURRENT);
      assertThat(run.report.counts().failed()).isEqualTo(2);
      assertThat(run.report.counts().installs()).isEqualTo(attempt == 0 ? 1 : 0);
      assertThat(run.report.counts().flywayRuns()).isZero();
      // the directory (its row matches) and the two stale schemas, plus "later" before it exists
      assertThat(run.report.counts().checked()).isEqualTo(attempt == 0 ? 4 : 3);
      assertThat(run.report.counts().recorded()).isEqualTo(attempt == 0 ? 1 : 0);
    }
    // never repaired, never recorded as current: the rows of the edited build stay as they were
    assertThat(history(schema("edited-1"))).isEqualTo(historyBefore);
    assertThat(stateRows().stream().filter(r -> !r.get(0).equals(schema("later"))).toList())
        .isEqualTo(rowsBefore);
    MigrationReport status = MigrationJob.builder().dataSource(ds).build().status();
    assertThat(bySchema(status).get(schema("edited-2")).checksums())
        .isEqualTo(ChecksumState.MISMATCH);
  }

  @Test
  void a_history_edited_by_hand_after_recording_is_trusted_until_a_full_check_finds_it()
      throws Exception {
    TestDatabases.route(ds, List.of("x", "y"));
    assertThat(run(b -> b).report.ok()).isTrue();
    String realChecksum = checksumOf(schema("x"), "4");
    execute(
        "UPDATE \""
            + schema("x")
            + "\".flyway_schema_history SET checksum = 12345 WHERE version = '4'");

    // the trust model: the recorded row is believed, as Flyway believes its history
    Run trusted = run(b -> b);
    assertThat(trusted.report.ok()).isTrue();
    assertThat(trusted.report.counts().checked()).isZero();

    Run verified = run(b -> b.verifyAll(true));
    assertThat(verified.report.ok()).isFalse();
    SchemaReport x = bySchema(verified.report).get(schema("x"));
    assertThat(x.state()).isEqualTo(SchemaState.FAILED);
    assertThat(x.checksums()).isEqualTo(ChecksumState.MISMATCH);
    assertThat(x.error()).contains("checksum 12345").contains("checksum " + realChecksum);
    assertThat(bySchema(verified.report).get(schema("y")).state()).isEqualTo(SchemaState.CURRENT);
    assertThat(stateRows()).extracting(r -> r.get(0)).doesNotContain(schema("x"));

    // its row is gone, so every later run checks it, and fails it, until it is fixed
    Run after = run(b -> b);
    assertThat(after.report.ok()).isFalse();
    assertThat(after.report.counts().checked()).isEqualTo(2); // the directory and x
    assertThat(bySchema(after.report).get(schema("x")).checksums())
        .isEqualTo(ChecksumState.MISMATCH);

    execute(
        "UPDATE \""
            + schema("x")
            + "\".flyway_schema_history SET checksum = "
            + realChecksum
            + " WHERE version = '4'");
    Run fixed = run(b -> b);
    assertThat(fixed.report.ok()).isTrue();
    assertThat(fixed.report.counts().recorded()).isEqualTo(1);
    assertThat(run(b -> b).statements).isEqualTo(2);
  }

  @Test
  void a_schema_a_ledger_provisions_is_recorded_and_the_next_migrate_trusts_it() throws Exception {
    assertThat(run(b -> b).report.counts().recorded()).isEqualTo(1); // the directory's own row
    Ledger ledger = Ledger.open(ds, LedgerConfig.builder().runtimeDdl(true).build());
    ledger.provision("fresh");

    assertThat(stateRows())
        .contains(
            List.of(
                schema("fresh"),
                "domain",
                LedgerMigrations.DOMAIN_VERSION,
                domainDigest(),
                "{}",
                "provision"));
    // schema, route and state row were written by one transaction (the schema is installed in
    // the provisioning transaction), so no failure can leave a schema without its route
    try (java.sql.Connection c = ds.getConnection();
        java.sql.PreparedStatement q =
            c.prepareStatement(
                "SELECT (SELECT xmin FROM pg_namespace WHERE nspname = ?)::text,"
                    + " (SELECT xmin FROM public.ledger_domains WHERE domain = 'fresh')::text,"
                    + " (SELECT xmin FROM public.ledger_schema_state WHERE schema_name = ?)::text")) {
      q.setString(1, schema("fresh"));
      q.setString(2, schema("fresh"));
      try (java.sql.ResultSet rs = q.executeQuery()) {
        rs.next();
        assertThat(rs.getString(1))
            .isNotNull()
            .isEqualTo(rs.getString(2))
            .isEqualTo(rs.getString(3));
      }
    }
    Run next = run(b -> b);
    assertThat(next.report.ok()).isTrue();
    assertThat(next.statements).isEqualTo(2);
    assertThat(next.report.counts().checked()).isZero();
    assertThat(next.report.counts().current()).isEqualTo(2);
    assertThat(bySchema(next.report).get(schema("fresh")).versionAfter())
        .isEqualTo(LedgerMigrations.DOMAIN_VERSION);
  }

  @Test
  void a_v3_directory_is_upgraded_by_the_job_which_then_records_every_schema() throws Exception {
    LedgerMigrations.directory(ds, "public").target("3").load().migrate();
    List<String> domains = List.of("old-1", "old-2", "old-3");
    for (String d : domains) {
      LedgerMigrations.migrateDomain(ds, schema(d));
      execute(
          "INSERT INTO public.ledger_domains (domain, schema) VALUES ('"
              + d
              + "', '"
              + DomainSchemas.quotedSchemaName(d)
              + "')");
    }
    assertThatThrownBy(() -> Ledger.open(ds, LedgerConfig.builder().runtimeDdl(false).build()))
        .isInstanceOf(SchemaVersionException.class)
        .hasMessageContaining("is at version 3, this code needs version 10")
        .hasMessageContaining("ledger-app migrate");

    Run upgrade = run(b -> b);
    assertThat(upgrade.report.ok()).isTrue();
    assertThat(upgrade.report.directory().state()).isEqualTo(SchemaState.MIGRATED);
    assertThat(upgrade.report.directory().versionBefore()).isEqualTo("3");
    assertThat(upgrade.report.directory().applied()).containsExactly("4", "5", "6", "10");
    assertThat(upgrade.report.directory().versionAfter()).isEqualTo("10");
    assertThat(upgrade.report.counts().current()).isEqualTo(3);
    assertThat(upgrade.report.counts().flywayRuns()).isEqualTo(1);
    assertThat(upgrade.report.counts().checked()).isEqualTo(4);
    assertThat(upgrade.report.counts().recorded()).isEqualTo(4);

    Run noOp = run(b -> b);
    assertThat(noOp.statements).isEqualTo(2);
    assertThat(noOp.report.counts().current()).isEqualTo(4);
    assertThat(Ledger.open(ds, LedgerConfig.builder().runtimeDdl(false).build()).domains())
        .containsExactlyElementsOf(domains);
  }

  @Test
  void the_digest_of_a_history_flyway_just_made_is_the_digest_of_the_set_it_resolved() {
    String schema = schema("digest");
    LedgerMigrations.migrateDomain(ds, schema);
    assertThat(
            MigrationDigest.ofCompleteHistory(
                LedgerMigrations.domain(ds, schema).load().info().all()))
        .contains(new MigrationDigest.Applied(LedgerMigrations.DOMAIN_VERSION, domainDigest()));
    // behind: not exactly the set, nothing to record
    String behind = schema("digest-behind");
    LedgerMigrations.domain(ds, behind).target("5").load().migrate();
    assertThat(
            MigrationDigest.ofCompleteHistory(
                LedgerMigrations.domain(ds, behind).load().info().all()))
        .isEmpty();
    // order does not matter; a checksum does
    List<MigrationDigest.Entry> set =
        List.of(
            new MigrationDigest.Entry("10", "ten", 10),
            new MigrationDigest.Entry("2", "two", 2),
            new MigrationDigest.Entry(null, "views", 7));
    assertThat(MigrationDigest.of(set))
        .isEqualTo(MigrationDigest.of(List.of(set.get(2), set.get(1), set.get(0))))
        .isNotEqualTo(
            MigrationDigest.of(
                List.of(set.get(0), new MigrationDigest.Entry("2", "two", 3), set.get(2))))
        .hasSize(64);
  }

  private record Run(MigrationReport report, int statements) {}

  private Run run(UnaryOperator<MigrationJob.Builder> options) {
    return job(options, MigrationJob::migrate);
  }

  private Run plan(UnaryOperator<MigrationJob.Builder> options) {
    return job(options, MigrationJob::plan);
  }

  private Run status(UnaryOperator<MigrationJob.Builder> options) {
    return job(options, MigrationJob::status);
  }

  private Run job(
      UnaryOperator<MigrationJob.Builder> options,
      java.util.function.Function<MigrationJob, MigrationReport> operation) {
    AtomicInteger statements = new AtomicInteger();
    ExecuteListener counter =
        new ExecuteListener() {
          private static final long serialVersionUID = 1L;

          @Override
          public void executeStart(ExecuteContext ctx) {
            statements.incrementAndGet();
          }
        };
    MigrationJob job =
        options
            .apply(MigrationJob.builder().dataSource(ds).executeListeners(List.of(counter)))
            .build();
    MigrationReport report = operation.apply(job);
    assertThat(report.counts().catalogQueries()).isEqualTo(statements.get());
    return new Run(report, statements.get());
  }

  private String domainDigest() {
    return MigrationSet.resolve(SchemaKind.DOMAIN, ds, List.of(LedgerMigrations.DOMAIN_LOCATION))
        .digest();
  }

  private String directoryDigest() {
    return MigrationSet.resolve(
            SchemaKind.DIRECTORY, ds, List.of(LedgerMigrations.DIRECTORY_LOCATION))
        .digest();
  }

  private static String schema(String domain) {
    return DomainSchemas.schemaName(domain);
  }

  private static Map<String, SchemaReport> bySchema(MigrationReport report) {
    return report.domains().stream().collect(Collectors.toMap(SchemaReport::schema, r -> r));
  }

  private List<List<String>> stateRows() throws SQLException {
    try (Connection c = PostgresExtension.connect(db)) {
      return Fixtures.rows(
          c,
          "SELECT schema_name, kind, version, migrations_digest, catalog_extras, recorded_by"
              + " FROM public.ledger_schema_state ORDER BY schema_name");
    }
  }

  private List<List<String>> history(String schema) throws SQLException {
    try (Connection c = PostgresExtension.connect(db)) {
      return Fixtures.rows(
          c,
          "SELECT installed_rank, version, script, checksum, success FROM \""
              + schema
              + "\".flyway_schema_history ORDER BY installed_rank");
    }
  }

  private String checksumOf(String schema, String version) throws SQLException {
    try (Connection c = PostgresExtension.connect(db)) {
      return Fixtures.rows(
              c,
              "SELECT checksum FROM \""
                  + schema
                  + "\".flyway_schema_history WHERE version = '"
                  + version
                  + "'")
          .get(0)
          .get(0);
    }
  }

  private void execute(String... statements) throws SQLException {
    try (Connection c = PostgresExtension.connect(db);
        Statement s = c.createStatement()) {
      for (String sql : statements) {
        s.execute(sql);
      }
    }
  }
}

package dev.ledger.migrate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.flywaydb.core.api.MigrationInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** An edited, already-applied migration fails its schema, is never repaired, and others proceed. */
class ChecksumTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final String V3 = "V3__promotions_new_digest_and_why_erased.sql";

  @Test
  void an_edited_applied_migration_fails_its_schema_naming_both_checksums_and_the_others_proceed()
      throws Exception {
    DataSource ds = TestDatabases.dataSource(PG.databaseName());
    String edited = DomainSchemas.schemaName("edited");
    String behind = DomainSchemas.schemaName("behind");
    String current = DomainSchemas.schemaName("current");
    TestDatabases.route(ds, List.of("edited", "behind", "current"));
    LedgerMigrations.domain(ds, edited)
        .locations("classpath:db/test/edited-domain")
        .load()
        .migrate();
    LedgerMigrations.domain(ds, behind).target("3").load().migrate();
    LedgerMigrations.migrateDomain(ds, current);
    int appliedChecksum = checksumOfV3(ds, edited, "classpath:db/test/edited-domain");
    int scriptChecksum = checksumOfV3(ds, current, LedgerMigrations.DOMAIN_LOCATION);
    assertThat(appliedChecksum).isNotEqualTo(scriptChecksum);
    List<List<String>> historyBefore = history(edited);

    MigrationReport report = MigrationJob.builder().dataSource(ds).build().migrate();

    assertThat(report.ok()).isFalse();
    Map<String, SchemaReport> bySchema =
        report.domains().stream().collect(Collectors.toMap(SchemaReport::schema, r -> r));
    SchemaReport failed = bySchema.get(edited);
    assertThat(failed.state()).isEqualTo(SchemaState.FAILED);
    assertThat(failed.checksums()).isEqualTo(ChecksumState.MISMATCH);
    assertThat(failed.error())
        .contains("V3 (" + V3 + ")")
        .contains("checksum " + appliedChecksum)
        .contains("checksum " + scriptChecksum)
        .contains(edited)
        .contains("never repairs");
    assertThat(failed.applied()).isEmpty();
    assertThat(bySchema.get(behind).state()).isEqualTo(SchemaState.MIGRATED);
    assertThat(bySchema.get(behind).applied())
        .containsExactlyElementsOf(TestDatabases.versions(4, LedgerMigrations.DOMAIN_VERSION));
    assertThat(bySchema.get(current).state()).isEqualTo(SchemaState.CURRENT);
    assertThat(report.directory().state()).isEqualTo(SchemaState.CURRENT);
    assertThat(report.counts().failed()).isEqualTo(1);
    assertThat(report.counts().installs()).isEqualTo(1); // "behind": V4 to V6 in one transaction
    assertThat(report.counts().flywayRuns()).isZero();

    // never repaired: the history is untouched, and the next run fails the same way
    assertThat(history(edited)).isEqualTo(historyBefore);
    MigrationReport again = MigrationJob.builder().dataSource(ds).build().migrate();
    assertThat(again.domains().stream().filter(SchemaReport::failed).map(SchemaReport::schema))
        .containsExactly(edited);
    assertThat(again.counts().flywayRuns()).isZero();
    assertThat(history(edited)).isEqualTo(historyBefore);

    MigrationReport status = MigrationJob.builder().dataSource(ds).build().status();
    assertThat(status.domains().stream().filter(r -> r.schema().equals(edited)).findFirst())
        .get()
        .satisfies(r -> assertThat(r.checksums()).isEqualTo(ChecksumState.MISMATCH));
  }

  private static int checksumOfV3(DataSource ds, String schema, String location) {
    for (MigrationInfo info :
        LedgerMigrations.domain(ds, schema).locations(location).load().info().all()) {
      if (V3.equals(info.getScript())) {
        return info.getResolvedChecksum();
      }
    }
    throw new AssertionError("no V3 in " + location);
  }

  private static List<List<String>> history(String schema) throws Exception {
    try (Connection c = PostgresExtension.connect(PG.databaseName())) {
      return Fixtures.rows(
          c,
          "SELECT installed_rank, version, script, checksum, success FROM \""
              + schema
              + "\".flyway_schema_history ORDER BY installed_rank");
    }
  }
}

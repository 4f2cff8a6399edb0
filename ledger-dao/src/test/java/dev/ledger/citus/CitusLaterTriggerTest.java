package dev.ledger.citus;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.TaskSpec;
import dev.ledger.migrate.MigrationJob;
import dev.ledger.migrate.MigrationReport;
import dev.ledger.migrate.SchemaReport;
import dev.ledger.testing.CitusCluster;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.ReferenceStack;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * docs/scale-out.md, "Not supported": a later domain migration that adds a trigger (here from an
 * extra location, {@code db/test/citus-later-trigger}) fails on a distributed domain schema until
 * the migration job's sessions have {@code citus.enable_unsafe_triggers} on; with it (set on the
 * database) the migration applies and its trigger runs where the domain lives. One database of its
 * own on the shared cluster, since the setting stays on it.
 */
@Tag("slow")
class CitusLaterTriggerTest {

  static final List<String> LATER = List.of("classpath:db/test/citus-later-trigger");

  @Test
  void a_later_migration_adding_a_trigger_needs_unsafe_triggers_in_the_jobs_sessions()
      throws Exception {
    CitusCluster cluster = CitusCluster.shared();
    String url = cluster.createDatabase("ledger_citus_later");
    String schema;
    try (HikariDataSource pool = PostgresExtension.pool(url, 4)) {
      Ledger ledger = Ledger.open(pool, LedgerConfig.builder().build());
      schema = ledger.provision("later");
      ledger.file(TaskSpec.builder("later", "Before").build());
      MigrationReport refused =
          MigrationJob.builder().dataSource(pool).extraDomainLocations(LATER).build().migrate();
      assertThat(refused.ok()).isFalse();
      SchemaReport domain = refused.domains().get(0);
      assertThat(domain.schema()).isEqualTo(schema);
      assertThat(domain.applied()).isEmpty();
      assertThat(domain.error()).contains("triggers are not supported on distributed tables");
    }
    try (Connection c = DriverManager.getConnection(url);
        Statement s = c.createStatement()) {
      s.execute("ALTER DATABASE ledger_citus_later SET citus.enable_unsafe_triggers = on");
    }
    // new sessions take the database's setting
    try (HikariDataSource pool = PostgresExtension.pool(url, 4)) {
      MigrationReport applied =
          MigrationJob.builder().dataSource(pool).extraDomainLocations(LATER).build().migrate();
      assertThat(applied.ok()).isTrue();
      assertThat(applied.domains()).hasSize(1);
      assertThat(applied.domains().get(0).applied()).containsExactly("100");
      // this ledger refuses a schema past its own version (100 > 12): the reference stack's
      // statements file a task instead
      try (ReferenceStack ref = new ReferenceStack(DriverManager.getConnection(url))) {
        ref.file(
            "later", "t-after", "After", List.of(), List.of(), 0, "2026-12-07T10:00:00.000000Z");
      }
      String after = "t-after";
      try (Connection c = DriverManager.getConnection(url)) {
        // the task filed before the migration is not in it: the trigger records from then on
        assertThat(Fixtures.rows(c, "SELECT id FROM \"" + schema + "\".tasks_inserted"))
            .containsExactly(List.of(after));
        assertThat(Fixtures.count(c, "SELECT count(*) FROM \"" + schema + "\".tasks")).isEqualTo(2);
        // the new table joined the distributed schema, on the domain's worker
        assertThat(
                Fixtures.rows(
                    c,
                    "SELECT DISTINCT nodeport::text FROM citus_shards WHERE table_name::text IN ('"
                        + schema
                        + ".tasks', '"
                        + schema
                        + ".tasks_inserted')"))
            .hasSize(1);
      }
    }
  }
}

package dev.ledger.migrate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/** A role that may not create the directory's tables fails at once, naming what it lacks. */
class PrivilegeTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @Test
  void a_role_without_create_on_the_directory_schema_fails_at_once_and_changes_nothing()
      throws Exception {
    String role = "ledger_weak_" + UUID.randomUUID().toString().substring(0, 8);
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE ROLE " + role + " LOGIN");
      // as PostgreSQL 15 and later make it: only the owner may create in public
      s.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
    }
    try {
      PGSimpleDataSource weak = TestDatabases.dataSource(PG.databaseName());
      weak.setUser(role);

      MigrationReport report = MigrationJob.builder().dataSource(weak).build().migrate();

      assertThat(report.ok()).isFalse();
      assertThat(report.directory().state()).isEqualTo(SchemaState.FAILED);
      assertThat(report.directory().error())
          .isEqualTo(
              "role "
                  + role
                  + " may not create objects in schema public (needs CREATE on that schema);"
                  + " nothing was changed. Run the migration with a role that may, or grant it");
      // refused before Flyway, which would first retry creating its history table for 10 s
      assertThat(report.counts().flywayRuns()).isZero();
      try (Connection c = PG.dataSource().getConnection();
          Statement s = c.createStatement();
          var rs = s.executeQuery("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")) {
        rs.next();
        assertThat(rs.getInt(1)).isZero();
      }
    } finally {
      try (Connection c = PG.dataSource().getConnection();
          Statement s = c.createStatement()) {
        s.execute("DROP ROLE " + role);
      }
    }
  }
}

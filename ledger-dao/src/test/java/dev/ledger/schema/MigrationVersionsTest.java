package dev.ledger.schema;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.testing.PostgresExtension;
import java.util.Arrays;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationVersion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The versions the code expects are the latest scripts on the class path. */
class MigrationVersionsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @Test
  void expected_versions_are_the_latest_scripts() {
    assertThat(latest(LedgerMigrations.directory(PG.dataSource(), "public").load().info().all()))
        .isEqualTo(MigrationVersion.fromVersion(LedgerMigrations.DIRECTORY_VERSION));
    assertThat(
            latest(
                LedgerMigrations.domain(PG.dataSource(), DomainSchemas.schemaName("v"))
                    .load()
                    .info()
                    .all()))
        .isEqualTo(MigrationVersion.fromVersion(LedgerMigrations.DOMAIN_VERSION));
  }

  private static MigrationVersion latest(MigrationInfo[] all) {
    return Arrays.stream(all)
        .map(MigrationInfo::getVersion)
        .max(MigrationVersion::compareTo)
        .orElseThrow();
  }
}

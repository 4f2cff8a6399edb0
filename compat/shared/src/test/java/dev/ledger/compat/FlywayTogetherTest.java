package dev.ledger.compat;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Ledger;
import dev.ledger.schema.LedgerMigrations;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * On a fresh database, Spring Boot's own Flyway auto-configuration applies the service's V1 and V2
 * in {@code public}, and the ledger's directory lands in the same schema with its own history
 * table, migrated after the service's.
 */
class FlywayTogetherTest extends CompatTestBase {

  @Autowired JdbcTemplate jdbc;
  @Autowired Ledger ledger;

  @Test
  void theServicesOwnMigrationsRanAsSqlNotBaselined() {
    assertThat(
            jdbc.queryForList(
                "SELECT version || ':' || type || ':' || success FROM public.flyway_schema_history"
                    + " ORDER BY installed_rank",
                String.class))
        .containsExactly("1:SQL:true", "2:SQL:true");
    assertThat(
            jdbc.queryForObject(
                "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'public'"
                    + " AND table_name = 'orders'",
                Long.class))
        .isEqualTo(3L);
  }

  @Test
  void theLedgerKeepsItsOwnHistoryInPublicAndIsCurrent() {
    List<String> versions =
        jdbc.queryForList(
            "SELECT version FROM public.ledger_directory_history WHERE success AND type = 'SQL'"
                + " ORDER BY installed_rank",
            String.class);
    assertThat(versions).isNotEmpty().last().isEqualTo(LedgerMigrations.DIRECTORY_VERSION);
    assertThat(
            jdbc.queryForObject(
                "SELECT (SELECT max(installed_on) FROM public.flyway_schema_history)"
                    + " <= (SELECT min(installed_on) FROM public.ledger_directory_history)",
                Boolean.class))
        .isTrue();
    assertThat(ledger.domains())
        .containsExactlyInAnyOrder(OrderService.DOMAIN, ConfirmationMailer.DOMAIN);
  }
}

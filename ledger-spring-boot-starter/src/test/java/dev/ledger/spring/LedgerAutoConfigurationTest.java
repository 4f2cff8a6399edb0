package dev.ledger.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.InvalidInputException;
import dev.ledger.Ledger;
import dev.ledger.SchemaVersionException;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import org.flywaydb.core.api.FlywayException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.flyway.FlywayAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.JdbcTemplateAutoConfiguration;
import org.springframework.boot.autoconfigure.transaction.TransactionAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The auto-configuration on Spring Boot 3.5 (this module's compile and test line; compat/ runs an
 * application on each Boot line): the order of the ledger's startup migration against Boot's own
 * Flyway on a fresh database whose {@code public} holds both, the properties, and the health
 * indicator's verdicts. Each context gets a fresh database of the test server.
 */
class LedgerAutoConfigurationTest {

  private String database;

  private ApplicationContextRunner runner() throws SQLException {
    database = PostgresExtension.newDatabase();
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                DataSourceAutoConfiguration.class,
                DataSourceTransactionManagerAutoConfiguration.class,
                JdbcTemplateAutoConfiguration.class,
                FlywayAutoConfiguration.class,
                LedgerAutoConfiguration.class))
        .withPropertyValues(
            "spring.datasource.url=" + TestServer.get().urlFor(database),
            "spring.datasource.hikari.maximum-pool-size=4",
            "spring.flyway.locations=classpath:db/service");
  }

  @AfterEach
  void dropDatabase() throws SQLException {
    PostgresExtension.dropDatabase(database);
  }

  @Test
  void byDefaultTheServicesFlywayAppliesItsV1AndTheLedgerMigratesAfterIt() throws SQLException {
    runner()
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              JdbcTemplate jdbc = ctx.getBean(JdbcTemplate.class);
              // the service's history: V1 and V2 ran as SQL migrations, nothing baselined
              assertThat(
                      jdbc.queryForList(
                          "SELECT version || ':' || type || ':' || success FROM"
                              + " public.flyway_schema_history ORDER BY installed_rank",
                          String.class))
                  .containsExactly("1:SQL:true", "2:SQL:true");
              // the ledger's history is its own table in the same schema, current
              assertThat(
                      jdbc.queryForObject(
                          "SELECT max(version::int) FROM public.ledger_directory_history"
                              + " WHERE success AND version IS NOT NULL AND version <> '0'",
                          Integer.class))
                  .isEqualTo(Integer.parseInt(LedgerMigrations.DIRECTORY_VERSION));
              // the service's Flyway ran first: its first row precedes the ledger's history
              assertThat(
                      jdbc.queryForObject(
                          "SELECT (SELECT min(installed_on) FROM public.flyway_schema_history)"
                              + " <= (SELECT min(installed_on) FROM"
                              + " public.ledger_directory_history)",
                          Boolean.class))
                  .isTrue();
              Ledger ledger = ctx.getBean(Ledger.class);
              String id = ledger.file(TaskSpec.builder("orders", "Ship order 1").build());
              ledger.admit(id);
              assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
              assertThat(jdbc.queryForObject("SELECT count(*) FROM orders", Long.class)).isZero();
            });
  }

  @Test
  void aTransactionTemplateRollbackTakesTheTaskWithItAndACommitKeepsBoth() throws SQLException {
    runner()
        .withConfiguration(AutoConfigurations.of(TransactionAutoConfiguration.class))
        .withPropertyValues("ledger.migration.domains=orders")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              Ledger ledger = ctx.getBean(Ledger.class);
              JdbcTemplate jdbc = ctx.getBean(JdbcTemplate.class);
              TransactionTemplate tx = ctx.getBean(TransactionTemplate.class);
              String[] ids = new String[2];
              long[][] txids = new long[2][];
              for (int i = 0; i < 2; i++) {
                int n = i;
                tx.executeWithoutResult(
                    status -> {
                      long before = txid(jdbc);
                      jdbc.update("INSERT INTO orders (id, total) VALUES (?, 100)", "o" + n);
                      ids[n] =
                          ledger.fileAndAdmit(TaskSpec.builder("orders", "Ship o" + n).build());
                      txids[n] = new long[] {before, txid(jdbc)};
                      if (n == 0) {
                        status.setRollbackOnly();
                      }
                    });
              }
              assertThat(txids[0][1]).isEqualTo(txids[0][0]);
              assertThat(txids[1][1]).isEqualTo(txids[1][0]);
              String schema =
                  jdbc.queryForObject(
                      "SELECT schema FROM ledger_domains WHERE domain = 'orders'", String.class);
              for (int i = 0; i < 2; i++) {
                long expected = i == 0 ? 0 : 1;
                assertThat(
                        List.of(
                            count(jdbc, "SELECT count(*) FROM orders WHERE id = ?", "o" + i),
                            count(
                                jdbc,
                                "SELECT count(*) FROM " + schema + ".tasks WHERE id = ?",
                                ids[i]),
                            count(jdbc, "SELECT count(*) FROM ledger_tasks WHERE id = ?", ids[i]),
                            count(
                                jdbc,
                                "SELECT count(*) FROM " + schema + ".events WHERE task_id = ?",
                                ids[i])))
                    .containsExactly(expected, expected, expected, 2 * expected);
              }
              assertThat(ledger.get(ids[1]).status()).isEqualTo(Status.ADMITTED);
            });
  }

  @Test
  void aServiceWithoutMigrationsOfItsOwnStillStartsWithBootsFlywayOn() throws SQLException {
    // ledger-dao brings flyway-core, which switches Boot 3's Flyway auto-configuration on; with no
    // migrations at its location it must neither fail nor stand in the ledger's way
    runner()
        .withPropertyValues("spring.flyway.locations=classpath:db/nothing-here")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(ctx).hasBean("flyway");
              Ledger ledger = ctx.getBean(Ledger.class);
              String id = ledger.fileAndAdmit(TaskSpec.builder("orders", "Ship o1").build());
              assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
              // Boot's Flyway ran first and left an empty history table of its own in public, so
              // a V1 the service adds later runs (its Flyway finds its history, not a non-empty
              // schema without one)
              assertThat(
                      ctx.getBean(JdbcTemplate.class)
                          .queryForObject(
                              "SELECT count(*) FROM public.flyway_schema_history", Long.class))
                  .isZero();
            });
  }

  private static long txid(JdbcTemplate jdbc) {
    return jdbc.queryForObject("SELECT txid_current()", Long.class);
  }

  private static long count(JdbcTemplate jdbc, String sql, String arg) {
    return jdbc.queryForObject(sql, Long.class, arg);
  }

  @Test
  void beforeFlywayOnAFreshSharedSchemaMakesTheServicesFlywayRefuse() throws SQLException {
    // Why the default is after-flyway: the ledger's directory makes public non-empty, and Boot's
    // Flyway (no baseline-on-migrate) refuses a non-empty schema without its history table.
    runner()
        .withPropertyValues("ledger.migration.order=before-flyway")
        .run(
            ctx -> {
              assertThat(ctx).hasFailed();
              assertThat(ctx.getStartupFailure())
                  .rootCause()
                  .isInstanceOf(FlywayException.class)
                  .hasMessageContaining("non-empty schema");
            });
  }

  @Test
  void beforeFlywayWorksWhenTheDirectoryHasASchemaOfItsOwn() throws SQLException {
    runner()
        .withPropertyValues(
            "ledger.migration.order=before-flyway", "ledger.directory-schema=ledger_directory")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              JdbcTemplate jdbc = ctx.getBean(JdbcTemplate.class);
              assertThat(
                      jdbc.queryForList(
                          "SELECT version || ':' || type FROM public.flyway_schema_history"
                              + " ORDER BY installed_rank",
                          String.class))
                  .containsExactly("1:SQL", "2:SQL");
              assertThat(
                      jdbc.queryForObject(
                          "SELECT (SELECT max(installed_on) FROM"
                              + " ledger_directory.ledger_directory_history)"
                              + " <= (SELECT min(installed_on) FROM public.flyway_schema_history)",
                          Boolean.class))
                  .isTrue();
            });
  }

  @Test
  void theLedgerJoinsSpringTransactionsThroughTheProxyAndProvisionsConfiguredDomains()
      throws SQLException {
    runner()
        .withPropertyValues("ledger.migration.domains=orders,payments", "ledger.runtime-ddl=false")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              Ledger ledger = ctx.getBean(Ledger.class);
              assertThat(ledger.domains()).containsExactly("orders", "payments");
              assertThat(ctx.getBean(LedgerMigrationInitializer.class).domains())
                  .containsExactly("orders", "payments");
              // runtime DDL is off after startup: an unknown domain is refused, not made
              assertThatThrownBy(() -> ledger.file(TaskSpec.builder("refunds", "Refund 7").build()))
                  .isInstanceOf(SchemaVersionException.class);
              assertThat(LedgerAutoConfiguration.joining(ctx.getBean(javax.sql.DataSource.class)))
                  .isInstanceOf(TransactionAwareDataSourceProxy.class);
            });
  }

  @Test
  void withTheStartupMigrationAndRuntimeDdlOffAFreshDatabaseFailsNamingTheMigration()
      throws SQLException {
    runner()
        .withPropertyValues("ledger.migration.enabled=false", "ledger.runtime-ddl=false")
        .run(
            ctx -> {
              assertThat(ctx).hasFailed();
              assertThat(ctx.getStartupFailure())
                  .rootCause()
                  .isInstanceOf(SchemaVersionException.class)
                  .hasMessage(
                      "schema public has no migration history, this code needs version "
                          + LedgerMigrations.DIRECTORY_VERSION
                          + ": run `ledger-app migrate`");
            });
  }

  @Test
  void anInvalidDirectorySchemaFailsStartupNamingTheSetting() throws SQLException {
    runner()
        .withPropertyValues("ledger.directory-schema=Bad-Name")
        .run(
            ctx -> {
              assertThat(ctx).hasFailed();
              assertThat(ctx.getStartupFailure())
                  .rootCause()
                  .isInstanceOf(InvalidInputException.class)
                  .hasMessageContaining("directorySchema");
            });
  }

  @Test
  void theTimeoutPropertiesBoundTheLedgerAndAZeroBoundFailsStartupNamingIt() throws SQLException {
    runner()
        .withPropertyValues(
            "ledger.timeouts.lock=250ms",
            "ledger.timeouts.statement=7s",
            "ledger.timeouts.network=9s")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(ctx.getBean(dev.ledger.LedgerConfig.class).timeouts())
                  .isEqualTo(
                      new dev.ledger.Timeouts(
                          java.time.Duration.ofMillis(250),
                          java.time.Duration.ofSeconds(7),
                          java.time.Duration.ofSeconds(9),
                          dev.ledger.Timeouts.defaults().connect()));
            });
    runner()
        .withPropertyValues("ledger.timeouts.lock=0s")
        .run(
            ctx -> {
              assertThat(ctx).hasFailed();
              assertThat(ctx.getStartupFailure())
                  .rootCause()
                  .isInstanceOf(InvalidInputException.class)
                  .hasMessage("lock: must be longer than zero");
            });
  }

  @Test
  void disabledConfiguresNothing() throws SQLException {
    runner()
        .withPropertyValues("ledger.enabled=false")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(ctx).doesNotHaveBean(Ledger.class);
              assertThat(ctx).doesNotHaveBean(LedgerMigrationInitializer.class);
              assertThat(
                      ctx.getBean(JdbcTemplate.class)
                          .queryForObject(
                              "SELECT to_regclass('public.ledger_directory_history') IS NULL",
                              Boolean.class))
                  .isTrue();
            });
  }

  @Test
  void healthIsUpWhenCurrentAndDownWhenTheDirectoryIsBehindOrAhead() throws SQLException {
    runner()
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              // Boot 3's API on this class path (Boot 4's is left off it): the Boot 3 indicator
              LedgerHealthIndicatorBoot3 indicator =
                  ctx.getBean("ledgerHealthIndicator", LedgerHealthIndicatorBoot3.class);
              Ledger ledger = ctx.getBean(Ledger.class);
              ledger.provision("orders");
              Health up = indicator.health();
              assertThat(up.getStatus().getCode()).isEqualTo("UP");
              assertThat(up.getDetails())
                  .containsExactlyEntriesOf(
                      ordered(
                          "directorySchema",
                          "public",
                          "directoryVersion",
                          LedgerMigrations.DIRECTORY_VERSION,
                          "expectedDirectoryVersion",
                          LedgerMigrations.DIRECTORY_VERSION,
                          "domains",
                          1));

              JdbcTemplate jdbc = ctx.getBean(JdbcTemplate.class);
              jdbc.update(
                  "INSERT INTO public.ledger_directory_history (installed_rank, version,"
                      + " description, type, script, checksum, installed_by, execution_time,"
                      + " success) VALUES (1000, '99', 'from a newer release', 'SQL', 'V99.sql',"
                      + " 0, current_user, 0, true)");
              Health ahead = indicator.health();
              assertThat(ahead.getStatus().getCode()).isEqualTo("DOWN");
              assertThat(ahead.getDetails())
                  .containsEntry("directoryVersion", "99")
                  .containsEntry(
                      "reason",
                      "the directory schema is ahead of this code: a newer release migrated it");

              jdbc.update("DELETE FROM public.ledger_directory_history WHERE version <> '0'");
              Health behind = indicator.health();
              assertThat(behind.getStatus().getCode()).isEqualTo("DOWN");
              assertThat(behind.getDetails())
                  .containsEntry(
                      "reason",
                      "the directory schema is behind this code: run the ledger's migration");
            });
  }

  @Test
  void theHealthIndicatorCanBeTurnedOff() throws SQLException {
    runner()
        .withPropertyValues("management.health.ledger.enabled=false")
        .run(
            ctx -> {
              assertThat(ctx).hasSingleBean(Ledger.class);
              assertThat(ctx).doesNotHaveBean("ledgerHealthIndicator");
            });
  }

  private static Map<String, Object> ordered(Object... keysAndValues) {
    Map<String, Object> m = new java.util.LinkedHashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      m.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return m;
  }
}

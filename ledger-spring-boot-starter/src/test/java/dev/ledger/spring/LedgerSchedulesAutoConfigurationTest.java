package dev.ledger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Label;
import dev.ledger.Ledger;
import dev.ledger.schedule.Schedule;
import dev.ledger.schedule.Timing;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@code ledger.schedules.<name>.*}: declared schedules are added, then changed, at start. */
class LedgerSchedulesAutoConfigurationTest {

  private String database;

  private ApplicationContextRunner runner() throws SQLException {
    database = PostgresExtension.newDatabase();
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                DataSourceAutoConfiguration.class,
                DataSourceTransactionManagerAutoConfiguration.class,
                LedgerAutoConfiguration.class,
                LedgerSchedulesAutoConfiguration.class))
        .withPropertyValues(
            "spring.datasource.url=" + TestServer.get().urlFor(database),
            "spring.datasource.hikari.maximum-pool-size=4");
  }

  @AfterEach
  void dropDatabase() throws SQLException {
    PostgresExtension.dropDatabase(database);
  }

  @Test
  void declaredSchedulesAreAddedAndAChangedDeclarationUpdatesTheRow() throws SQLException {
    ApplicationContextRunner runner =
        runner()
            .withPropertyValues(
                "ledger.schedules.nightly.domain=reports",
                "ledger.schedules.nightly.cron=30 2 * * *",
                "ledger.schedules.nightly.zone=Europe/Berlin",
                "ledger.schedules.nightly.title=Build the report",
                "ledger.schedules.nightly.requirements=sql,pdf",
                "ledger.schedules.nightly.label=internal",
                "ledger.schedules.nightly.catch-up=3",
                "ledger.schedules.heartbeat.domain=ops",
                "ledger.schedules.heartbeat.every=30s",
                "ledger.schedules.heartbeat.title=Check");
    runner.run(
        ctx -> {
          assertThat(ctx).hasNotFailed();
          List<Schedule> all = ctx.getBean(Ledger.class).schedules().list();
          assertThat(all).extracting(Schedule::name).containsExactly("heartbeat", "nightly");
          assertThat(all.get(0).spec().timing()).isEqualTo(Timing.every(Duration.ofSeconds(30)));
          Schedule nightly = all.get(1);
          assertThat(nightly.spec().timing()).isEqualTo(Timing.cron("30 2 * * *", "Europe/Berlin"));
          assertThat(nightly.spec().requirements()).containsExactly("sql", "pdf");
          assertThat(nightly.spec().label()).isEqualTo(Label.INTERNAL);
          assertThat(nightly.spec().catchUp()).isEqualTo(3);
        });
    // the same database, the declaration changed: the row follows
    runner
        .withPropertyValues("ledger.schedules.nightly.title=Build the nightly report")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(
                      ctx.getBean(Ledger.class)
                          .schedules()
                          .get("nightly")
                          .orElseThrow()
                          .spec()
                          .title())
                  .isEqualTo("Build the nightly report");
            });
  }

  @Test
  void aBadDeclarationFailsTheStartNamingTheProperty() throws SQLException {
    ApplicationContextRunner base = runner();
    base.withPropertyValues(
            "ledger.schedules.bad.domain=ops",
            "ledger.schedules.bad.cron=61 * * * *",
            "ledger.schedules.bad.title=T")
        .run(
            ctx ->
                assertThat(ctx)
                    .hasFailed()
                    .getFailure()
                    .rootCause()
                    .hasMessageStartingWith("cron: does not parse"));
    base.withPropertyValues(
            "ledger.schedules.slow.domain=ops",
            "ledger.schedules.slow.every=0s",
            "ledger.schedules.slow.title=T")
        .run(
            ctx ->
                assertThat(ctx)
                    .hasFailed()
                    .getFailure()
                    .hasStackTraceContaining(
                        "ledger.schedules.slow.every: must be longer than zero"));
  }
}

package dev.ledger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Ledger;
import dev.ledger.Redaction;
import dev.ledger.TaskSpec;
import dev.ledger.feed.FeedErasure;
import dev.ledger.feed.FeedEvent;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** A {@link LedgerFeedHandler} bean gets its domain's events; its runner stops with the context. */
class LedgerFeedAutoConfigurationTest {

  private String database;

  private ApplicationContextRunner runner() throws SQLException {
    database = PostgresExtension.newDatabase(TestServer.ownCluster());
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                DataSourceAutoConfiguration.class,
                DataSourceTransactionManagerAutoConfiguration.class,
                LedgerAutoConfiguration.class,
                LedgerFeedAutoConfiguration.class))
        .withPropertyValues(
            "spring.datasource.url=" + TestServer.ownCluster().urlFor(database),
            "spring.datasource.hikari.maximum-pool-size=6",
            "spring.flyway.enabled=false",
            "ledger.migration.domains=orders",
            "ledger.feed.poll-interval=200ms");
  }

  @AfterEach
  void dropDatabase() throws SQLException {
    PostgresExtension.dropDatabase(TestServer.ownCluster(), database);
  }

  /** Records the kinds and seqs it got, and the erased items. */
  static final class Mirror implements LedgerFeedHandler {
    final List<String> kinds = new CopyOnWriteArrayList<>();
    final List<Long> seqs = new CopyOnWriteArrayList<>();
    final List<FeedErasure> erasures = new CopyOnWriteArrayList<>();

    @Override
    public String consumer() {
      return "mirror";
    }

    @Override
    public List<String> domains() {
      return List.of("orders");
    }

    @Override
    public boolean fromStart() {
      return true;
    }

    @Override
    public void handle(List<FeedEvent> events, Connection transaction) {
      events.forEach(e -> kinds.add(e.kind()));
      events.forEach(e -> seqs.add(e.seq()));
    }

    @Override
    public void erased(List<FeedErasure> items, Connection transaction) {
      erasures.addAll(items);
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class OneHandler {
    @Bean
    Mirror mirror() {
      return new Mirror();
    }

    @Bean
    SimpleMeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }
  }

  @Test
  void aHandlerBeanGetsItsDomainsEventsWithMetersAndStopsWithTheContext() throws Exception {
    LedgerFeedLifecycle[] lifecycle = new LedgerFeedLifecycle[1];
    runner()
        .withUserConfiguration(OneHandler.class)
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              lifecycle[0] = ctx.getBean(LedgerFeedLifecycle.class);
              assertThat(lifecycle[0].isRunning()).isTrue();
              Ledger ledger = ctx.getBean(Ledger.class);
              String id =
                  ledger.fileAndAdmit(
                      TaskSpec.builder("orders", "Ship o1").origin("shop", "o1").build());
              Mirror mirror = ctx.getBean(Mirror.class);
              SimpleMeterRegistry registry = ctx.getBean(SimpleMeterRegistry.class);
              Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
              while (registry
                          .get("ledger.feed.delivered")
                          .tag("consumer", "mirror")
                          .functionCounter()
                          .count()
                      < 2
                  && Instant.now().isBefore(deadline)) {
                Thread.sleep(20);
              }
              assertThat(mirror.kinds).containsExactly("created", "admitted");
              assertThat(
                      registry
                          .get("ledger.feed.delivered")
                          .tag("consumer", "mirror")
                          .functionCounter()
                          .count())
                  .isEqualTo(2.0);
              assertThat(
                      registry
                          .get("ledger.feed.failures")
                          .tag("consumer", "mirror")
                          .functionCounter()
                          .count())
                  .isZero();
              assertThat(
                      registry
                          .get("ledger.feed.lag")
                          .tag("consumer", "mirror")
                          .tag("domain", "orders")
                          .gauge()
                          .value())
                  .isZero();
              // scrubbed after delivery: the bean's erased(...) gets the task and its seqs
              List<Long> delivered = List.copyOf(mirror.seqs);
              assertThat(ledger.scrubTasks("orders", "shop", Redaction.ERASED)).isEqualTo(1);
              Instant erasedBy = Instant.now().plus(Duration.ofSeconds(60));
              while (mirror.erasures.isEmpty() && Instant.now().isBefore(erasedBy)) {
                Thread.sleep(20);
              }
              assertThat(mirror.erasures)
                  .extracting(FeedErasure::taskId, FeedErasure::seqs)
                  .containsExactly(org.assertj.core.api.Assertions.tuple(id, delivered));
            });
    assertThat(lifecycle[0].isRunning()).isFalse();
    assertThat(lifecycle[0].runners()).isEmpty();
  }
}

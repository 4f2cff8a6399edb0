package dev.ledger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.InvalidInputException;
import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.TaskSpec;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import dev.ledger.worker.Outcome;
import dev.ledger.worker.TaskContext;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The worker pool wired from {@link LedgerTaskHandler} beans: it runs a filed task through the
 * handler of its domain and completes it, closes with the context, refuses two handlers for one
 * domain, and is absent without handlers.
 */
class LedgerWorkerAutoConfigurationTest {

  private String database;

  private ApplicationContextRunner runner() throws SQLException {
    database = PostgresExtension.newDatabase();
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                DataSourceAutoConfiguration.class,
                DataSourceTransactionManagerAutoConfiguration.class,
                LedgerAutoConfiguration.class,
                LedgerWorkerAutoConfiguration.class))
        .withPropertyValues(
            "spring.datasource.url=" + TestServer.get().urlFor(database),
            "spring.datasource.hikari.maximum-pool-size=6",
            "spring.flyway.enabled=false",
            "ledger.migration.domains=orders",
            "ledger.worker.concurrency=2",
            "ledger.worker.poll-interval=200ms");
  }

  @AfterEach
  void dropDatabase() throws SQLException {
    PostgresExtension.dropDatabase(database);
  }

  /** Records what it ran; the latch opens at the first task. */
  static final class ShipOrder implements LedgerTaskHandler {
    final List<String> ran = new CopyOnWriteArrayList<>();
    final CountDownLatch first = new CountDownLatch(1);

    @Override
    public String domain() {
      return "orders";
    }

    @Override
    public Outcome handle(Task task, TaskContext context) {
      ran.add(task.id());
      first.countDown();
      return Outcome.done("shipped");
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class OneHandler {
    @Bean
    ShipOrder shipOrder() {
      return new ShipOrder();
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class TwoHandlersForOneDomain {
    @Bean
    ShipOrder shipOrder() {
      return new ShipOrder();
    }

    @Bean
    ShipOrder shipOrderAgain() {
      return new ShipOrder();
    }
  }

  @Test
  void aHandlerBeanRunsItsDomainsTasksAndThePoolClosesWithTheContext() throws Exception {
    LedgerWorkerLifecycle[] lifecycle = new LedgerWorkerLifecycle[1];
    runner()
        .withUserConfiguration(OneHandler.class)
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              lifecycle[0] = ctx.getBean(LedgerWorkerLifecycle.class);
              assertThat(lifecycle[0].isRunning()).isTrue();
              assertThat(lifecycle[0].pool().domains()).containsExactly("orders");
              Ledger ledger = ctx.getBean(Ledger.class);
              String id = ledger.fileAndAdmit(TaskSpec.builder("orders", "Ship o1").build());
              ShipOrder handler = ctx.getBean(ShipOrder.class);
              assertThat(handler.first.await(30, TimeUnit.SECONDS)).isTrue();
              Instant deadline = Instant.now().plus(Duration.ofSeconds(30));
              while (ledger.get(id).status() != Status.COMPLETED
                  && Instant.now().isBefore(deadline)) {
                Thread.sleep(10); // completion commits after the handler returns: poll it
              }
              assertThat(ledger.get(id).status()).isEqualTo(Status.COMPLETED);
              assertThat(handler.ran).containsExactly(id);
            });
    assertThat(lifecycle[0].isRunning()).isFalse();
  }

  @Configuration(proxyBeanMethods = false)
  static class Registry {
    @Bean
    SimpleMeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }
  }

  @Test
  void withAMeterRegistryBeanThePoolRecordsItsMetersThere() throws Exception {
    runner()
        .withUserConfiguration(OneHandler.class, Registry.class)
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              Ledger ledger = ctx.getBean(Ledger.class);
              String id = ledger.fileAndAdmit(TaskSpec.builder("orders", "Ship o2").build());
              SimpleMeterRegistry registry = ctx.getBean(SimpleMeterRegistry.class);
              Instant deadline = Instant.now().plus(Duration.ofSeconds(30));
              while (registry.find("ledger.tasks.completed").counter() == null
                  && Instant.now().isBefore(deadline)) {
                Thread.sleep(10);
              }
              assertThat(ledger.get(id).status()).isEqualTo(Status.COMPLETED);
              assertThat(
                      registry
                          .get("ledger.tasks.completed")
                          .tag("domain", "orders")
                          .counter()
                          .count())
                  .isEqualTo(1.0);
              assertThat(
                      registry.get("ledger.pickup.latency").tag("domain", "orders").timer().count())
                  .isEqualTo(1);
              // sampled at start, before the task was filed: the domain had no task then
              assertThat(
                      registry
                          .get("ledger.tasks.filed")
                          .tag("domain", "orders")
                          .functionCounter()
                          .count())
                  .isIn(0.0, 1.0);
            });
  }

  /** Fails every attempt, counting them. */
  static final class AlwaysFails implements LedgerTaskHandler {
    final List<Integer> attempts = new CopyOnWriteArrayList<>();

    @Override
    public String domain() {
      return "orders";
    }

    @Override
    public Outcome handle(Task task, TaskContext context) {
      attempts.add(context.attempt());
      return Outcome.failed("carrier down");
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class FailingHandler {
    @Bean
    AlwaysFails alwaysFails() {
      return new AlwaysFails();
    }
  }

  @Test
  void theRetryPropertiesSetThePoolsAttemptsAndBackoff() throws Exception {
    runner()
        .withUserConfiguration(FailingHandler.class)
        .withPropertyValues(
            "ledger.worker.max-attempts=2",
            "ledger.worker.retry-initial=100ms",
            "ledger.worker.retry-max=100ms",
            "ledger.worker.retry-jitter=0")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              Ledger ledger = ctx.getBean(Ledger.class);
              String id = ledger.fileAndAdmit(TaskSpec.builder("orders", "Ship o3").build());
              Instant deadline = Instant.now().plus(Duration.ofSeconds(30));
              while (ledger.deadLetters("orders").isEmpty() && Instant.now().isBefore(deadline)) {
                Thread.sleep(20);
              }
              List<Task> dead = ledger.deadLetters("orders");
              assertThat(dead).hasSize(1);
              assertThat(dead.get(0).reason())
                  .startsWith("dead letter: attempt 2 of 2 failed at ")
                  .endsWith(": carrier down");
              assertThat(ledger.get(id).reason()).startsWith("attempt 1 of 2 failed at ");
              assertThat(ctx.getBean(AlwaysFails.class).attempts).containsExactly(1, 2);
            });
  }

  @Test
  void twoHandlersForOneDomainFailStartupNamingTheDomain() throws SQLException {
    runner()
        .withUserConfiguration(TwoHandlersForOneDomain.class)
        .run(
            ctx -> {
              assertThat(ctx).hasFailed();
              assertThat(ctx.getStartupFailure())
                  .rootCause()
                  .isInstanceOf(InvalidInputException.class)
                  .hasMessageContaining("two LedgerTaskHandler beans serve orders");
            });
  }

  @Test
  void withoutHandlerBeansThereIsNoPool() throws SQLException {
    runner()
        .run(
            ctx -> {
              assertThat(ctx).hasSingleBean(Ledger.class);
              assertThat(ctx).doesNotHaveBean(LedgerWorkerLifecycle.class);
            });
  }
}

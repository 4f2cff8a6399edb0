package dev.ledger.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.TaskSpec;
import dev.ledger.migrate.Fleet;
import dev.ledger.tenants.TenantDirectory;
import dev.ledger.tenants.TenantUnavailableException;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import dev.ledger.worker.Outcome;
import dev.ledger.worker.TaskContext;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The tenant directory wired from {@code ledger.tenants.*} on real PostgreSQL: a service with no
 * {@code DataSource} of its own serves two tenant databases, runs a handler bean's domain across
 * both, follows a tenant registered while it runs, shows its meters without the control URL's
 * password, and closes the pools and the directory with the context. Without a control URL there is
 * no directory. The property metadata is generated.
 */
class LedgerTenantsAutoConfigurationTest {

  private static final String DOMAIN = "invoices";
  private final List<String> databases = new ArrayList<>();
  private String controlUrl;
  private String secret;

  @BeforeEach
  void fleet() throws SQLException {
    String control = PostgresExtension.newDatabase();
    databases.add(control);
    secret = "pw-" + System.nanoTime();
    // trust authentication ignores the password: a secret that must show up nowhere
    String url = TestServer.get().urlFor(control);
    controlUrl = url + (url.contains("?") ? "&" : "?") + "password=" + secret;
  }

  @AfterEach
  void drop() throws SQLException {
    for (String db : databases) {
      PostgresExtension.dropDatabase(db);
    }
  }

  /** A migrated tenant database with the domain provisioned, registered in the control database. */
  private String tenant(String id) throws SQLException {
    String db = PostgresExtension.newDatabase();
    databases.add(db);
    String url = TestServer.get().urlFor(db);
    try (HikariDataSource ds = PostgresExtension.pool(url, 2)) {
      Ledger.open(ds).provision(DOMAIN);
    }
    try (HikariDataSource control = PostgresExtension.pool(controlUrl, 2)) {
      Fleet fleet = Fleet.builder().control(control).build();
      fleet.register(id, url);
      assertThat(fleet.migrate().ok()).isTrue();
    }
    return db;
  }

  private ApplicationContextRunner runner() {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(LedgerTenantsAutoConfiguration.class))
        .withPropertyValues(
            "ledger.tenants.control-url=" + controlUrl,
            "ledger.tenants.connection-budget=8",
            "ledger.tenants.connections-per-tenant=3",
            "ledger.tenants.refresh-interval=200ms",
            "ledger.tenants.runtime-ddl=false",
            "ledger.tenants.worker.concurrency=2",
            "ledger.tenants.worker.poll-interval=100ms");
  }

  /** Records what it ran, by tenant. */
  static final class SendInvoice implements LedgerTenantTaskHandler {
    final Map<String, String> ran = new ConcurrentHashMap<>();

    @Override
    public String domain() {
      return DOMAIN;
    }

    @Override
    public Outcome handle(String tenant, Task task, TaskContext context) {
      ran.put(task.id(), tenant);
      return Outcome.done();
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Service {
    @Bean
    SendInvoice sendInvoice() {
      return new SendInvoice();
    }

    @Bean
    MeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }
  }

  @Test
  void aMultiTenantServiceServesItsTenantsRunsTheirTasksAndClosesWithTheContext() throws Exception {
    String dbA = tenant("acme");
    tenant("globex");
    TenantDirectory[] directory = new TenantDirectory[1];
    LedgerTenantWorkerLifecycle[] lifecycle = new LedgerTenantWorkerLifecycle[1];
    runner()
        .withUserConfiguration(Service.class)
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(ctx).doesNotHaveBean(DataSource.class);
              directory[0] = ctx.getBean(TenantDirectory.class);
              assertThat(directory[0].served()).containsExactly("acme", "globex");
              assertThat(directory[0].connectionBudget()).isEqualTo(8);
              lifecycle[0] = ctx.getBean(LedgerTenantWorkerLifecycle.class);
              assertThat(lifecycle[0].pools()).hasSize(1);
              assertThat(lifecycle[0].pools().get(0).domain()).isEqualTo(DOMAIN);

              String a = directory[0].ledger("acme").fileAndAdmit(task("a1"));
              String g = directory[0].ledger("globex").fileAndAdmit(task("g1"));
              awaitCompleted(directory[0], "acme", a);
              awaitCompleted(directory[0], "globex", g);
              SendInvoice handler = ctx.getBean(SendInvoice.class);
              assertThat(handler.ran).containsOnly(Map.entry(a, "acme"), Map.entry(g, "globex"));

              // registered while the service runs: served after a refresh, its tasks run
              tenant("initech");
              awaitServed(directory[0], "initech");
              String i = directory[0].ledger("initech").fileAndAdmit(task("i1"));
              awaitCompleted(directory[0], "initech", i);
              assertThat(handler.ran).containsEntry(i, "initech");

              MeterRegistry registry = ctx.getBean(MeterRegistry.class);
              assertThat(registry.get("ledger.tenants").tag("state", "served").gauge().value())
                  .isEqualTo(3.0);
              assertThat(registry.get("ledger.tenants.connections.budget").gauge().value())
                  .isEqualTo(8.0);
              // the pool's own meters, as a single-database pool's: per domain, not per tenant
              // (counted just after the completion commits, which the test may see first)
              Instant metered = Instant.now().plus(Duration.ofSeconds(10));
              while (registry.find("ledger.tasks.completed").counters().stream()
                          .mapToDouble(c -> c.count())
                          .sum()
                      < 3
                  && Instant.now().isBefore(metered)) {
                Thread.sleep(20);
              }
              assertThat(
                      registry
                          .get("ledger.tasks.completed")
                          .tag("domain", DOMAIN)
                          .counter()
                          .count())
                  .isEqualTo(3.0);
              assertThat(registry.get("ledger.handler.time").tag("domain", DOMAIN).timer().count())
                  .isEqualTo(3L);
              for (Meter m : registry.getMeters()) {
                StringBuilder text = new StringBuilder(m.getId().getName());
                for (Tag tag : m.getId().getTags()) {
                  text.append(' ').append(tag.getKey()).append('=').append(tag.getValue());
                }
                assertThat(text.toString()).doesNotContain(secret).doesNotContain("jdbc:");
              }
              assertThat(ctx.getBean(LedgerTenantsControl.class).toString()).doesNotContain(secret);
            });
    assertThat(lifecycle[0].isRunning()).isFalse();
    assertThatThrownBy(() -> directory[0].ledger("acme"))
        .isInstanceOfSatisfying(
            TenantUnavailableException.class,
            e -> assertThat(e.reason()).isEqualTo(TenantUnavailableException.Reason.CLOSED));
    // every connection was closed; the server's processes take a moment to exit
    Instant deadline = Instant.now().plus(Duration.ofSeconds(10));
    while (sessions(dbA) > 0 && Instant.now().isBefore(deadline)) {
      Thread.sleep(20);
    }
    assertThat(sessions(dbA)).isZero();
  }

  @Test
  void withoutAControlUrlThereIsNoDirectory() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(LedgerTenantsAutoConfiguration.class))
        .withUserConfiguration(Service.class)
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              assertThat(ctx).doesNotHaveBean(TenantDirectory.class);
              assertThat(ctx).doesNotHaveBean(LedgerTenantWorkerLifecycle.class);
            });
  }

  @Test
  void workersCanBeTurnedOffAndTheDirectoryStays() throws Exception {
    tenant("acme");
    runner()
        .withUserConfiguration(Service.class)
        .withPropertyValues("ledger.tenants.worker.enabled=false")
        .run(
            ctx -> {
              assertThat(ctx).hasSingleBean(TenantDirectory.class);
              assertThat(ctx).doesNotHaveBean(LedgerTenantWorkerLifecycle.class);
            });
  }

  @Test
  void thePropertyMetadataIsGenerated() throws Exception {
    String json;
    try (InputStream in =
        getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
      assertThat(in).isNotNull();
      json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    for (String p :
        List.of(
            "ledger.tenants.control-url",
            "ledger.tenants.connection-budget",
            "ledger.tenants.refresh-interval",
            "ledger.tenants.worker.concurrency",
            "ledger.tenants.worker.enabled")) {
      assertThat(json).contains("\"name\": \"" + p + "\"");
    }
  }

  private static TaskSpec task(String title) {
    return TaskSpec.builder(DOMAIN, title).build();
  }

  private static void awaitCompleted(TenantDirectory d, String tenant, String id)
      throws InterruptedException {
    Instant deadline = Instant.now().plus(Duration.ofSeconds(30));
    while (d.ledger(tenant).get(id).status() != Status.COMPLETED
        && Instant.now().isBefore(deadline)) {
      Thread.sleep(20);
    }
    assertThat(d.ledger(tenant).get(id).status()).isEqualTo(Status.COMPLETED);
  }

  private static void awaitServed(TenantDirectory d, String tenant) throws InterruptedException {
    Instant deadline = Instant.now().plus(Duration.ofSeconds(30));
    while (!d.served().contains(tenant) && Instant.now().isBefore(deadline)) {
      Thread.sleep(20);
    }
    assertThat(d.served()).contains(tenant);
  }

  private static long sessions(String db) throws SQLException {
    try (Connection c = TestServer.get().adminConnection();
        PreparedStatement s =
            c.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE datname = ?")) {
      s.setString(1, db);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}

package dev.ledger.tenants;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.migrate.Fleet;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The directory's meters: tenants by state, connections against the budget, connects, refusals by
 * reason; and no meter name or tag holds a DSN or its password.
 */
class MicrometerTenantMetricsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @Test
  void meters_count_tenants_connections_and_refusals_and_never_show_a_dsn() throws Exception {
    String control = PostgresExtension.newDatabase();
    String tenantDb = PostgresExtension.newDatabase();
    String secret = "s3cret-" + System.nanoTime();
    String dsn = Cycles.withPassword(TestServer.get().urlFor(tenantDb), secret);
    String badDsn = "postgresql://ledger:" + secret + "@127.0.0.1:1/nowhere";
    try (HikariDataSource controlPool =
        PostgresExtension.pool(TestServer.get().urlFor(control), 3)) {
      try (HikariDataSource t = PostgresExtension.pool(dsn, 2)) {
        Ledger.open(t).provision(Cycles.DOMAIN);
      }
      Fleet fleet = Fleet.builder().control(controlPool).build();
      fleet.register("acme", dsn);
      fleet.register("broken", badDsn); // its migration fails: degraded
      fleet.migrate();
      fleet.register("later", dsn); // registered, not migrated: provisioning
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      try (TenantDirectory directory =
          TenantDirectory.builder()
              .control(controlPool)
              .refreshInterval(Duration.ZERO)
              .connectionBudget(7)
              .open()) {
        MicrometerTenantMetrics.bind(directory, registry);
        directory.run("acme", l -> Cycles.cycle(l, "metrics"));
        assertThatThrownBy(() -> directory.ledger("broken"))
            .isInstanceOf(TenantUnavailableException.class);
        assertThatThrownBy(() -> directory.ledger("later"))
            .isInstanceOf(TenantUnavailableException.class);
        assertThatThrownBy(() -> directory.ledger("nobody"))
            .isInstanceOf(TenantUnavailableException.class);
        assertThatThrownBy(() -> directory.ledger("nobody"))
            .isInstanceOf(TenantUnavailableException.class);

        assertThat(gauge(registry, "ledger.tenants", "state", "served")).isEqualTo(1.0);
        assertThat(gauge(registry, "ledger.tenants", "state", "degraded")).isEqualTo(1.0);
        assertThat(gauge(registry, "ledger.tenants", "state", "provisioning")).isEqualTo(1.0);
        assertThat(gauge(registry, "ledger.tenants", "state", "unreachable")).isEqualTo(0.0);
        assertThat(registry.get("ledger.tenants.connections.budget").gauge().value())
            .isEqualTo(7.0);
        assertThat(registry.get("ledger.tenants.connections.open").gauge().value())
            .isEqualTo((double) directory.openConnections())
            .isBetween(1.0, 7.0);
        assertThat(registry.get("ledger.tenants.connections.opened").functionCounter().count())
            .isEqualTo((double) directory.connectionsOpened())
            .isGreaterThanOrEqualTo(1.0);
        assertThat(registry.get("ledger.tenants.budget.evictions").functionCounter().count())
            .isZero();
        assertThat(counter(registry, "degraded")).isEqualTo(1.0);
        assertThat(counter(registry, "provisioning")).isEqualTo(1.0);
        assertThat(counter(registry, "unknown")).isEqualTo(2.0);
        assertThat(counter(registry, "unreachable")).isZero();

        for (Meter m : registry.getMeters()) {
          StringBuilder text = new StringBuilder(m.getId().getName());
          for (Tag tag : m.getId().getTags()) {
            text.append(' ').append(tag.getKey()).append('=').append(tag.getValue());
          }
          assertThat(text.toString())
              .doesNotContain(secret)
              .doesNotContain(tenantDb)
              .doesNotContain("127.0.0.1")
              .doesNotContain("postgresql:");
        }
        assertThat(registry.getMeters()).hasSize(4 + 2 + 2 + 5);
      }
    } finally {
      PostgresExtension.dropDatabase(tenantDb);
      PostgresExtension.dropDatabase(control);
    }
  }

  private static double gauge(SimpleMeterRegistry r, String name, String tag, String value) {
    return r.get(name).tag(tag, value).gauge().value();
  }

  private static double counter(SimpleMeterRegistry r, String reason) {
    return r.get("ledger.tenants.refusals").tag("reason", reason).functionCounter().count();
  }
}

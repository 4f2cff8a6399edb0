package dev.ledger.compat;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.migrate.Fleet;
import dev.ledger.tenants.TenantDirectory;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The starter's tenant directory on this Spring Boot line: {@code ledger.tenants.control-url} gives
 * the application a {@link TenantDirectory} serving the fleet's tenant, and its meters land in the
 * context's {@code MeterRegistry} (the actuator's).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.NONE)
class TenantsTest {

  @Autowired TenantDirectory tenants;
  @Autowired MeterRegistry meters;

  @DynamicPropertySource
  static void fleet(DynamicPropertyRegistry registry) throws SQLException {
    String app = PostgresExtension.newDatabase();
    String control = PostgresExtension.newDatabase();
    String tenant = PostgresExtension.newDatabase();
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  for (String db : List.of(app, control, tenant)) {
                    try {
                      PostgresExtension.dropDatabase(db);
                    } catch (SQLException | RuntimeException e) {
                      // an embedded server may be gone already; its data directory goes with it
                    }
                  }
                }));
    try (HikariDataSource ds = PostgresExtension.pool(TestServer.get().urlFor(tenant), 2)) {
      Ledger.open(ds).provision("invoices");
    }
    String controlUrl = TestServer.get().urlFor(control);
    try (HikariDataSource ds = PostgresExtension.pool(controlUrl, 2)) {
      Fleet fleet = Fleet.builder().control(ds).build();
      fleet.register("acme", TestServer.get().urlFor(tenant));
      assertThat(fleet.migrate().ok()).isTrue();
    }
    registry.add("spring.datasource.url", () -> TestServer.get().urlFor(app));
    registry.add("ledger.tenants.control-url", () -> controlUrl);
    registry.add("ledger.tenants.runtime-ddl", () -> "false");
  }

  @Test
  void theDirectoryServesTheFleetsTenantAndItsMetersAreInTheContextsRegistry() {
    assertThat(tenants.served()).containsExactly("acme");
    Ledger acme = tenants.ledger("acme");
    String id = acme.fileAndAdmit(TaskSpec.builder("invoices", "May").build());
    Lease lease =
        acme.claimNext("invoices", "compat", Duration.ofMinutes(1), List.of(), Label.PUBLIC)
            .orElseThrow();
    acme.complete(lease, null);
    assertThat(acme.get(id).status()).isEqualTo(Status.COMPLETED);
    assertThat(meters.get("ledger.tenants").tag("state", "served").gauge().value()).isEqualTo(1.0);
    assertThat(meters.get("ledger.tenants.connections.open").gauge().value()).isGreaterThan(0.0);
  }
}

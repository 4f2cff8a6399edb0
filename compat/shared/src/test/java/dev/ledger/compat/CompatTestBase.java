package dev.ledger.compat;

import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.sql.SQLException;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Starts {@link OrdersApplication} once per test JVM (every subclass shares the context) on a fresh
 * database of the project's test server ({@code LEDGER_TEST_JDBC_URL}, else an embedded
 * PostgreSQL), dropped when the JVM exits.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.NONE)
abstract class CompatTestBase {

  private static String database;

  @DynamicPropertySource
  static synchronized void database(DynamicPropertyRegistry registry) throws SQLException {
    if (database == null) {
      database = PostgresExtension.newDatabase();
      String name = database;
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    try {
                      PostgresExtension.dropDatabase(name);
                    } catch (SQLException | RuntimeException e) {
                      // an embedded server may be gone already; its data directory goes with it
                    }
                  }));
    }
    String url = TestServer.get().urlFor(database);
    registry.add("spring.datasource.url", () -> url);
  }
}

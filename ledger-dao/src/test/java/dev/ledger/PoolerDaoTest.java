package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.testing.PgBouncer;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import org.junit.jupiter.api.Test;

/**
 * Ledger calls through a real PgBouncer in transaction mode (issue #13, item 10): with pgjdbc's
 * default {@code prepareThreshold} two clients' server-side prepared statements collide on the one
 * server connection they share, and the ledger says so with a typed error naming the setting; with
 * {@code prepareThreshold=0} the same calls work.
 */
class PoolerDaoTest {

  @Test
  void prepared_statements_colliding_through_a_transaction_pooler_are_a_typed_error_naming_the_fix()
      throws Exception {
    String db = PostgresExtension.newDatabase();
    try (HikariDataSource direct = PostgresExtension.pool(TestServer.get().urlFor(db), 2)) {
      String id = Ledger.open(direct).file(TaskSpec.builder("acme", "through a pooler").build());
      try (PgBouncer bouncer = PgBouncer.start("transaction", 1)) {
        TransactionPoolerException refused = null;
        try (HikariDataSource a = PostgresExtension.pool(bouncer.urlFor(db), 2);
            HikariDataSource b = PostgresExtension.pool(bouncer.urlFor(db), 2)) {
          Ledger first = Ledger.open(a);
          Ledger second = Ledger.open(b);
          for (int i = 0; i < 12 && refused == null; i++) {
            try {
              assertThat(first.get(id).id()).isEqualTo(id);
              assertThat(second.get(id).id()).isEqualTo(id);
            } catch (TransactionPoolerException e) {
              refused = e;
            }
          }
        }
        if (refused == null) {
          fail("12 alternating reads of two clients over one server connection did not collide");
        }
        assertThat(refused.sqlState()).isIn("42P05", "26000");
        assertThat(refused.operation()).isEqualTo("get");
        assertThat(refused.getMessage())
            .startsWith("get failed: the connection goes through a pooler in transaction mode")
            .contains("set prepareThreshold=0 on the JDBC URL or data source");

        String settled = bouncer.urlFor(db) + (bouncer.urlFor(db).contains("?") ? "&" : "?");
        try (HikariDataSource a = PostgresExtension.pool(settled + "prepareThreshold=0", 2);
            HikariDataSource b = PostgresExtension.pool(settled + "prepareThreshold=0", 2)) {
          Ledger first = Ledger.open(a);
          Ledger second = Ledger.open(b);
          for (int i = 0; i < 12; i++) {
            assertThat(first.get(id).id()).isEqualTo(id);
            assertThat(second.get(id).id()).isEqualTo(id);
          }
        }
      }
    } finally {
      PostgresExtension.dropDatabase(db);
    }
  }
}

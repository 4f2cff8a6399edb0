package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The statements one {@code fileAndAdmit} sends in a caller's transaction (issue 26, B13): six,
 * with an origin and upstream event or without. The domain's lock (and the upstream event's key)
 * and the lookup of the upstream event go in one statement; then the {@code created} event, the
 * row, the route, the {@code admitted} event and the row's status. A filing with an upstream event
 * also sets and releases a savepoint around its insert (JDBC calls, not statements of jOOQ's).
 */
class FilingStatementsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @Test
  void a_filing_in_a_callers_transaction_sends_six_statements_with_or_without_an_origin()
      throws Exception {
    List<String> sql = new CopyOnWriteArrayList<>();
    ExecuteListener listener =
        new ExecuteListener() {
          private static final long serialVersionUID = 1L;

          @Override
          public void executeStart(ExecuteContext ctx) {
            sql.add(ctx.sql());
          }
        };
    Ledger ledger =
        Ledger.open(PG.dataSource(), LedgerConfig.builder().executeListener(listener).build());
    ledger.provision("counted");
    ledger.fileAndAdmit(TaskSpec.builder("counted", "warm").origin("shop", "warm").build());

    String filedWithOrigin = null;
    for (boolean origin : new boolean[] {true, false}) {
      TaskSpec.Builder spec = TaskSpec.builder("counted", "order " + origin);
      if (origin) {
        spec.origin("shop", "order-1");
      }
      sql.clear();
      try (Connection c = PG.dataSource().getConnection()) {
        c.setAutoCommit(false);
        String id = ledger.in(c).fileAndAdmit(spec.build());
        c.commit();
        if (origin) {
          filedWithOrigin = id;
        }
      }
      assertThat(sql).as("origin %s: %s", origin, sql).hasSize(6);
      assertThat(sql.get(0)).startsWith("select \"pg_advisory_xact_lock_shared\"");
      assertThat(sql.get(0).contains("from \"")).isEqualTo(origin); // the lookup rides along
    }
    // the same upstream event again: the lookup in the lock's statement finds the first task
    assertThat(
            ledger.fileAndAdmit(
                TaskSpec.builder("counted", "again").origin("shop", "order-1").build()))
        .isEqualTo(filedWithOrigin);
    assertThat(ledger.withOrigin("counted", "shop")).hasSize(2);
  }
}

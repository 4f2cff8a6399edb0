package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.CommitDropProxy;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A connection lost while the ledger commits its own transaction (issue 13, item 12): the failure
 * says the outcome is unknown ({@link LedgerStorageException#outcomeUnknown()}), whether the server
 * rolled the transaction back (the {@code COMMIT} never arrived) or committed it (the answer was
 * lost), and retrying an idempotent filing then files the task exactly once. A {@link
 * CommitDropProxy} between the pool and the server cuts the connection at the {@code COMMIT}. A
 * session lost before the commit is a known outcome (nothing written): {@link ConnectionLossTest}.
 * The filings here depend on a task, so they run in a transaction that ends with a {@code COMMIT};
 * a filing without one commits itself in its one execute (issue 26), and the answer of that execute
 * lost is {@link OneRoundTripFailureTest}'s.
 */
class CommitOutcomeTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final String DOMAIN = "commit-loss";

  private static CommitDropProxy proxy;
  private static HikariDataSource pool;
  private static Ledger ledger;

  /** The task the filings depend on: a dependency keeps a filing in a transaction of its own. */
  private static String first;

  @BeforeAll
  static void setUp() throws Exception {
    proxy = CommitDropProxy.to(PG.jdbcUrl());
    pool = PostgresExtension.pool(proxy.jdbcUrl(PG.jdbcUrl()), 2);
    ledger = Ledger.open(pool);
    ledger.provision(DOMAIN);
    first = ledger.fileAndAdmit(TaskSpec.builder(DOMAIN, "first").build());
  }

  @AfterAll
  static void tearDown() throws Exception {
    pool.close();
    proxy.close();
  }

  @Test
  void a_commit_that_never_reached_the_server_is_reported_unknown_and_a_retry_files_once() {
    TaskSpec spec =
        TaskSpec.builder(DOMAIN, "charge 1")
            .origin("shop", "order-1")
            .dependsOn(java.util.List.of(first))
            .build();
    proxy.arm(CommitDropProxy.Mode.BEFORE_COMMIT);
    LedgerStorageException e =
        catchThrowableOfType(LedgerStorageException.class, () -> ledger.fileAndAdmit(spec));
    assertThat(proxy.fired()).isEqualTo(1);
    assertThat(e.outcomeUnknown()).isTrue();
    assertThat(e.getMessage()).contains("outcome is unknown");
    assertThat(filed("order-1")).isZero(); // the server rolled it back

    String id = ledger.fileAndAdmit(spec);
    assertThat(filed("order-1")).isEqualTo(1);
    assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
  }

  @Test
  void a_commit_whose_answer_was_lost_is_reported_unknown_and_a_retry_returns_the_same_task()
      throws SQLException {
    TaskSpec spec =
        TaskSpec.builder(DOMAIN, "charge 2")
            .origin("shop", "order-2")
            .dependsOn(java.util.List.of(first))
            .build();
    int before = proxy.fired();
    proxy.arm(CommitDropProxy.Mode.AFTER_COMMIT);
    LedgerStorageException e =
        catchThrowableOfType(LedgerStorageException.class, () -> ledger.fileAndAdmit(spec));
    assertThat(proxy.fired()).isEqualTo(before + 1);
    assertThat(e.outcomeUnknown()).isTrue();
    assertThat(filed("order-2")).isEqualTo(1); // the server committed it

    String id = ledger.fileAndAdmit(spec);
    assertThat(filed("order-2")).isEqualTo(1);
    assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
    assertThat(ledger.history(id))
        .extracting(LoggedEvent::kind)
        .containsExactly("created", "admitted");
  }

  private static long filed(String upstream) {
    try (Connection c = PostgresExtension.connect(PG.databaseName());
        PreparedStatement s =
            c.prepareStatement(
                "SELECT count(*) FROM \""
                    + DomainSchemas.schemaName(DOMAIN)
                    + "\".tasks WHERE origin = 'shop' AND upstream_event = ?")) {
      s.setString(1, upstream);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException ex) {
      throw new IllegalStateException(ex);
    }
  }
}

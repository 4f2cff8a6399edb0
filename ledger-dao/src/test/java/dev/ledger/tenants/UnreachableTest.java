package dev.ledger.tenants;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.LedgerStorageException;
import java.sql.SQLException;
import org.jooq.exception.DataAccessException;
import org.junit.jupiter.api.Test;

/** Which storage failures mark a tenant unreachable, whatever wraps the server's error. */
class UnreachableTest {

  private static LedgerStorageException failure(String reported, SQLException server) {
    // a wrapper without an SQLState of its own between jOOQ and the server's error: jOOQ then
    // reports 00000 (seen when a server shut down under a running statement)
    SQLException wrapper = new SQLException(server.getMessage(), (String) null, server);
    return new LedgerStorageException(
        "file", reported, new DataAccessException("SQL [select 1]", wrapper));
  }

  @Test
  void a_shutdown_below_a_wrapper_without_sqlstate_is_unreachable() {
    SQLException shutdown =
        new SQLException("FATAL: terminating connection due to administrator command", "57P01");
    assertThat(Unreachable.matches(failure("00000", shutdown))).isTrue();
    assertThat(Unreachable.matches(failure("00000", new SQLException("gone", "08006")))).isTrue();
  }

  @Test
  void a_refused_statement_or_a_spent_budget_is_not_unreachable() {
    assertThat(Unreachable.matches(failure("23505", new SQLException("duplicate", "23505"))))
        .isFalse();
    assertThat(
            Unreachable.matches(
                failure(
                    BudgetedDataSource.BUDGET_SQLSTATE,
                    new SQLException("budget", BudgetedDataSource.BUDGET_SQLSTATE))))
        .isFalse();
    assertThat(
            Unreachable.matches(
                new LedgerStorageException("file", "57P03", new SQLException("starting", "57P03"))))
        .isTrue();
  }
}

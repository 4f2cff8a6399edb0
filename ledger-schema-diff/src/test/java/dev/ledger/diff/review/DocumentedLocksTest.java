package dev.ledger.diff.review;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DocumentedLocksTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "CREATE INDEX CONCURRENTLY orders_note ON orders (note)"
            + "| orders ShareUpdateExclusiveLock",
        "create unique index concurrently if not exists x on only \"Orders\" using btree (a)"
            + "| \"Orders\" ShareUpdateExclusiveLock",
        "CREATE INDEX CONCURRENTLY ON app.\"orders\" (note)| app.orders ShareUpdateExclusiveLock",
        "DROP INDEX CONCURRENTLY IF EXISTS orders_note"
            + "| orders ShareUpdateExclusiveLock, orders_note ShareUpdateExclusiveLock",
        "REINDEX INDEX CONCURRENTLY orders_note| orders_note ShareUpdateExclusiveLock",
        "REINDEX (VERBOSE) TABLE CONCURRENTLY orders| orders ShareUpdateExclusiveLock",
        "ALTER TABLE m DETACH PARTITION m_2025 CONCURRENTLY"
            + "| m ShareUpdateExclusiveLock, m_2025 ShareUpdateExclusiveLock",
        "VACUUM orders, customers"
            + "| customers ShareUpdateExclusiveLock, orders ShareUpdateExclusiveLock",
        "VACUUM (FULL) orders| orders AccessExclusiveLock",
        "VACUUM FULL VERBOSE orders (note)| orders AccessExclusiveLock",
        "CREATE DATABASE x| ",
      })
  void the_locks_a_kind_takes_as_documented(String sql, String expected) {
    List<String> locks =
        DocumentedLocks.of(sql, sql.startsWith("DROP INDEX") ? "orders" : null).stream()
            .map(l -> l.relation() + " " + l.mode())
            .toList();
    assertThat(String.join(", ", locks)).isEqualTo(expected == null ? "" : expected);
  }
}

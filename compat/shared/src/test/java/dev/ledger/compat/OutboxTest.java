package dev.ledger.compat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.Ledger;
import dev.ledger.Status;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The outbox through {@code @Transactional}: the order row and its task commit together or not at
 * all, and the ledger runs inside the caller's transaction ({@code txid_current()} the same before
 * and after each ledger call: it neither commits the caller's transaction nor starts its own).
 */
class OutboxTest extends CompatTestBase {

  @Autowired OrderService orders;
  @Autowired Ledger ledger;
  @Autowired JdbcTemplate jdbc;

  @Test
  void aRolledBackFileAndAdmitLeavesNoOrderTaskEventOrRoute() {
    assertRolledBack(() -> orders.place("o-rollback-1", 1200, true), "o-rollback-1");
  }

  @Test
  void aRolledBackFileThenAdmitLeavesNoOrderTaskEventOrRoute() {
    assertRolledBack(() -> orders.placeInTwoCalls("o-rollback-2", 1300, true), "o-rollback-2");
  }

  @Test
  void aCommittedOrderHasItsAdmittedTask() {
    OrderService.Placed p = orders.place("o-commit-1", 4500, false);
    assertThat(p.txAfterEach()).containsExactly(p.txBefore());
    // one order, one task, its two events (filed, admitted), one route
    assertThat(counts("o-commit-1", p.taskId())).containsExactly(1L, 1L, 2L, 1L);
    assertThat(ledger.get(p.taskId()).status()).isEqualTo(Status.ADMITTED);
  }

  @Test
  void aCommittedOrderInTwoLedgerCallsHasItsAdmittedTask() {
    OrderService.Placed p = orders.placeInTwoCalls("o-commit-2", 4600, false);
    assertThat(p.txAfterEach()).containsExactly(p.txBefore(), p.txBefore());
    assertThat(counts("o-commit-2", p.taskId())).containsExactly(1L, 1L, 2L, 1L);
    assertThat(ledger.get(p.taskId()).status()).isEqualTo(Status.ADMITTED);
  }

  private void assertRolledBack(Runnable placing, String orderId) {
    assertThatThrownBy(placing::run)
        .isInstanceOfSatisfying(
            OrderService.OrderRejected.class,
            e -> {
              OrderService.Placed p = e.placed;
              assertThat(p.txAfterEach()).isNotEmpty().allMatch(t -> t == p.txBefore());
              assertThat(counts(orderId, p.taskId())).containsExactly(0L, 0L, 0L, 0L);
            });
  }

  /** Orders with the id, then the task's rows, events and route. */
  private long[] counts(String orderId, String taskId) {
    String schema =
        jdbc.queryForObject(
            "SELECT schema FROM public.ledger_domains WHERE domain = ?",
            String.class,
            OrderService.DOMAIN);
    return new long[] {
      jdbc.queryForObject("SELECT count(*) FROM orders WHERE id = ?", Long.class, orderId),
      jdbc.queryForObject(
          "SELECT count(*) FROM " + schema + ".tasks WHERE id = ?", Long.class, taskId),
      jdbc.queryForObject(
          "SELECT count(*) FROM " + schema + ".events WHERE task_id = ?", Long.class, taskId),
      jdbc.queryForObject(
          "SELECT count(*) FROM public.ledger_tasks WHERE id = ?", Long.class, taskId)
    };
  }
}

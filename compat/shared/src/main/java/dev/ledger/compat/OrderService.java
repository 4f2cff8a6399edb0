package dev.ledger.compat;

import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import java.util.List;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * The outbox: an order row and its shipping task, written in one Spring-managed transaction, so
 * either both exist or neither does. Thread-safe (a Spring singleton over thread-safe beans).
 */
@Service
public class OrderService {

  /** The ledger domain of the shipping tasks. */
  public static final String DOMAIN = "orders";

  private final JdbcTemplate jdbc;
  private final Ledger ledger;

  /**
   * Creates the service.
   *
   * @param jdbc the service's JDBC access
   * @param ledger the ledger the starter configured
   */
  public OrderService(JdbcTemplate jdbc, Ledger ledger) {
    this.jdbc = jdbc;
    this.ledger = ledger;
  }

  /**
   * What {@link #place} or {@link #placeInTwoCalls} did, with {@code txid_current()} seen before
   * the ledger was called and after each ledger call.
   *
   * @param taskId the shipping task's id
   * @param txBefore {@code txid_current()} before the ledger was called
   * @param txAfterEach {@code txid_current()} after each ledger call, in order
   */
  public record Placed(String taskId, long txBefore, List<Long> txAfterEach) {}

  /** Thrown when asked to fail after the task was filed; rolls the whole transaction back. */
  public static final class OrderRejected extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** What had been written before the failure. */
    public final transient Placed placed;

    OrderRejected(Placed placed) {
      super("order rejected after its task " + placed.taskId() + " was filed");
      this.placed = placed;
    }
  }

  /**
   * Inserts an order, and files and admits its shipping task in one ledger call ({@code
   * fileAndAdmit}), all in one transaction.
   *
   * @param orderId the order's id; the task's origin is {@code order:<orderId>}
   * @param total the order's total in cents
   * @param failAfterFiling true to throw {@link OrderRejected} after both writes (all roll back)
   * @return what was written
   * @throws OrderRejected when {@code failAfterFiling}
   */
  @Transactional
  public Placed place(String orderId, long total, boolean failAfterFiling) {
    long before = txid();
    jdbc.update("INSERT INTO orders (id, total) VALUES (?, ?)", orderId, total);
    String taskId = ledger.fileAndAdmit(shipping(orderId));
    return done(new Placed(taskId, before, List.of(txid())), failAfterFiling);
  }

  /**
   * The same with two ledger calls, {@code file} then {@code admit}, both in the caller's
   * transaction.
   *
   * @param orderId the order's id
   * @param total the order's total in cents
   * @param failAfterFiling true to throw {@link OrderRejected} after all writes (all roll back)
   * @return what was written
   * @throws OrderRejected when {@code failAfterFiling}
   */
  @Transactional
  public Placed placeInTwoCalls(String orderId, long total, boolean failAfterFiling) {
    long before = txid();
    jdbc.update("INSERT INTO orders (id, total) VALUES (?, ?)", orderId, total);
    String taskId = ledger.file(shipping(orderId));
    long afterFile = txid();
    ledger.admit(taskId);
    return done(new Placed(taskId, before, List.of(afterFile, txid())), failAfterFiling);
  }

  private static TaskSpec shipping(String orderId) {
    return TaskSpec.builder(DOMAIN, "Ship order " + orderId)
        .origin("order:" + orderId, "order-placed")
        .build();
  }

  private static Placed done(Placed placed, boolean fail) {
    if (fail) {
      throw new OrderRejected(placed);
    }
    return placed;
  }

  private long txid() {
    return jdbc.queryForObject("SELECT txid_current()", Long.class);
  }
}

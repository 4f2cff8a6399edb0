package dev.ledger.bench;

import java.util.ArrayList;
import java.util.List;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;

/**
 * A jOOQ listener that records the SQL text of every statement the ledger executes on the thread
 * that opened a capture, so the harness can check the baseline issues exactly the statements our
 * code does ({@code LedgerConfig.builder().executeListener(...)}).
 */
final class SqlCapture implements ExecuteListener {

  private static final long serialVersionUID = 1L;

  private final transient ThreadLocal<List<String>> current = new ThreadLocal<>();
  private final transient ThreadLocal<List<List<Object>>> binds = new ThreadLocal<>();

  /**
   * Starts recording on this thread.
   *
   * @return the list the statements are added to, in order
   */
  List<String> begin() {
    List<String> sql = new ArrayList<>();
    current.set(sql);
    binds.set(new ArrayList<>());
    return sql;
  }

  /**
   * The bind values of the statements recorded since {@link #begin()}, as jOOQ holds them.
   *
   * @return one list per statement, in order
   */
  List<List<Object>> binds() {
    return binds.get();
  }

  /** Stops recording on this thread. */
  void end() {
    current.remove();
    binds.remove();
  }

  @Override
  public void executeStart(ExecuteContext ctx) {
    List<String> sql = current.get();
    if (sql != null && ctx.sql() != null) {
      sql.add(ctx.sql());
      binds.get().add(ctx.query() == null ? List.of() : ctx.query().getBindValues());
    }
  }
}

package dev.ledger.testing;

import dev.ledger.schema.RenderMappedDsl;
import java.util.concurrent.atomic.AtomicLong;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;

/**
 * A jOOQ listener that fails any statement whose SQL names a generated template schema ({@code
 * ledger_template}, {@code ledger_directory}): every statement the ledger runs must be
 * render-mapped to a real schema, CTEs, {@code RETURNING} and {@code ON CONFLICT} included. Counts
 * what it saw, so a test can prove the guard was on the path.
 */
public final class TemplateSchemaGuard implements ExecuteListener {

  private static final long serialVersionUID = 1L;

  private final AtomicLong checked = new AtomicLong();

  @Override
  public void renderEnd(ExecuteContext ctx) {
    check(ctx.sql());
  }

  @Override
  public void executeStart(ExecuteContext ctx) {
    check(ctx.sql());
    for (String batch : ctx.batchSQL()) {
      check(batch);
    }
  }

  private void check(String sql) {
    if (sql == null) {
      return;
    }
    checked.incrementAndGet();
    if (sql.contains(RenderMappedDsl.DOMAIN_TEMPLATE)
        || sql.contains(RenderMappedDsl.DIRECTORY_TEMPLATE)) {
      throw new AssertionError("statement names a template schema: " + sql);
    }
  }

  /**
   * How many SQL strings were checked.
   *
   * @return the count since creation
   */
  public long checked() {
    return checked.get();
  }
}
